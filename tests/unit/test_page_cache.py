"""web.page_cache: requests for one page at the same moment (a lecture hall opening the teacher's link) wait for
one build of it, each sent the same bytes; another query is built for itself; an answer that is not kept (a
cookie) lets each waiting request build its own."""

import asyncio
from types import SimpleNamespace

from web.page_cache import PageCache

CONFIG = object()  # the app's config object: a kept page is for this one


def server() -> SimpleNamespace:
    return SimpleNamespace(get_blocks=lambda: SimpleNamespace(config=CONFIG))


def page_app(builds: list[bytes], cookie: bool = False):
    """A stand-in for Gradio: each build takes a moment and is counted."""

    async def app(scope, receive, send):
        builds.append(scope["query_string"])
        await asyncio.sleep(0.05)
        headers = [(b"content-type", b"text/html")] + ([(b"set-cookie", b"a=b")] if cookie else [])
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"the page of " + scope["query_string"]})

    return app


async def get(cache: PageCache, query: bytes) -> bytes:
    scope = {"type": "http", "method": "GET", "path": "/", "query_string": query, "headers": [], "app": server()}
    body: list[bytes] = []

    async def send(message):
        if message["type"] == "http.response.body":
            body.append(message["body"])

    await cache(scope, None, send)
    return b"".join(body)


def test_a_hall_asking_for_one_page_at_once_gets_one_build():
    builds: list[bytes] = []
    cache = PageCache(page_app(builds))

    async def hall():
        return await asyncio.gather(*(get(cache, b"text=one") for _ in range(20)), get(cache, b"text=two"))

    pages = asyncio.run(hall())
    assert sorted(builds) == [b"text=one", b"text=two"]
    assert len(set(pages[:20])) == 1 and pages[20] != pages[0]


def test_a_page_that_is_not_kept_is_built_for_each_request():
    builds: list[bytes] = []
    cache = PageCache(page_app(builds, cookie=True))

    async def hall():
        return await asyncio.gather(*(get(cache, b"text=one") for _ in range(3)))

    asyncio.run(hall())
    assert len(builds) == 3
