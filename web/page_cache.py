"""The page and its config, built once. For every visit Gradio copies the page config (every block's props),
rewrites its URLs for the address the visitor used and serialises it, into the page's HTML (GET /) and again for
GET /config (what a browser, and every new gradio_client Client, reads). Nothing of that depends on the visitor
but the address it was reached at (and a Gradio login, which this app has none of): the page text follows the
browser's language in the browser, from the translations inside the config. `PageCache` keeps each answer, keyed
by what Gradio reads of the request, while the app's config object stays the same; a response that sets a cookie or
is not a plain 200 is never kept.

A kept answer is also kept gzipped and sent so to a browser that accepts it: the page's HTML is ~320 KB (its
config inline), ~40 KB gzipped, which a lecture hall's shared network and a phone's feel (Gradio compresses its
scripts, not the page)."""

import asyncio
import gzip
import re
import threading
from collections import OrderedDict

PAGE = re.compile(r"^/(?:config|gradio_api/info)?$")  # the page, its config, the API info (a new Client reads both)
# what Gradio's root URL is made of (gradio.route_utils.get_request_origin), besides the path and the scheme
ADDRESS_HEADERS = (b"host", b"x-forwarded-host", b"x-forwarded-proto", b"x-gradio-server")
KEPT = 16  # distinct addresses and query strings (a deep link's ?text=...) kept, the least recently used dropped


def accepts_gzip(scope) -> bool:
    """The request's Accept-Encoding names gzip, and not with q=0."""
    for name, value in scope["headers"]:
        if name != b"accept-encoding":
            continue
        for coding in value.lower().split(b","):
            token, _, weight = coding.partition(b";")
            if token.strip() == b"gzip":
                weight = weight.strip().removeprefix(b"q=")
                return not weight or weight.strip(b"0.") != b""
    return False


class Kept:
    """One answer: its start message and body, plain and gzipped (the same headers but the length and encoding)."""

    def __init__(self, config: object, start: dict, body: bytes):
        self.config = config
        headers = [(k, v) for k, v in start.get("headers", ()) if k not in (b"content-length", b"vary")]
        headers.append((b"vary", b"Accept-Encoding"))
        packed = gzip.compress(body, compresslevel=6, mtime=0)
        self.plain = ({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]}, body)
        gzip_headers = [*headers, (b"content-encoding", b"gzip"), (b"content-length", str(len(packed)).encode())]
        self.gzipped = ({**start, "headers": gzip_headers}, packed)


class PageCache:
    """ASGI middleware: GET / and GET /config answered from the bytes Gradio sent last time for the same address; a
    HEAD of them (a health check, Gradio's own at launch) from a kept GET's headers, not a fresh page build."""

    def __init__(self, app, kept: int = KEPT):
        self.app, self.size = app, kept
        self.kept: OrderedDict[tuple, Kept] = OrderedDict()
        self.lock = threading.Lock()
        # key -> set once the answer being built for it is kept: a lecture hall opening one link at once builds the
        # page once (Gradio copies the whole config for each build: 200 at once held the app for 25 s)
        self.building: dict[tuple, asyncio.Event] = {}

    async def __call__(self, scope, receive, send) -> None:
        server = scope.get("app")
        if (
            scope["type"] != "http"
            or scope["method"] not in ("GET", "HEAD")
            or not PAGE.match(scope["path"])
            or getattr(server, "auth", None) is not None
            or getattr(server, "auth_dependency", None) is not None
            or not hasattr(server, "get_blocks")
        ):
            return await self.app(scope, receive, send)
        config = server.get_blocks().config  # a new object when Gradio rebuilds it (MCP's start): a new entry
        address = tuple((k, v) for k, v in scope["headers"] if k in ADDRESS_HEADERS)
        key = (scope["path"], scope["query_string"], scope.get("root_path", ""), scope.get("scheme"), address)
        if await self.sent_kept(key, config, scope, send):
            return
        if scope["method"] == "HEAD":  # kept from a GET only: a HEAD's body is whatever the server chose to drop
            return await self.app(scope, receive, send)
        if (building := self.building.get(key)) is not None:  # the same answer on its way: wait for it
            await building.wait()
            if not await self.sent_kept(key, config, scope, send):
                await self.app(scope, receive, send)  # not kept (a cookie, an error): this request's own
            return
        self.building[key] = asyncio.Event()
        try:
            await self.built(key, config, scope, receive, send)
        finally:
            self.building.pop(key).set()

    async def sent_kept(self, key: tuple, config: object, scope, send) -> bool:
        """The answer kept under `key` for this config, sent (gzipped to a browser that takes it); False if none."""
        with self.lock:
            kept = self.kept.get(key)
            if kept is None or kept.config is not config:
                return False
            self.kept.move_to_end(key)
        start, body = kept.gzipped if accepts_gzip(scope) else kept.plain
        await send(start)
        await send({"type": "http.response.body", "body": body if scope["method"] == "GET" else b""})
        return True

    async def built(self, key: tuple, config: object, scope, receive, send) -> None:
        """Gradio's answer, sent as it comes and kept when it is a plain 200 page."""
        sent: list[dict] = []

        async def keep(message):
            sent.append(message)
            await send(message)

        await self.app(scope, receive, keep)
        began, parts = sent[0] if sent else {}, [m for m in sent[1:] if m["type"] == "http.response.body"]
        plain = began.get("status") == 200 and not any(k == b"set-cookie" for k, _ in began.get("headers", ()))
        encoded = any(k == b"content-encoding" for k, _ in began.get("headers", ()))
        if plain and not encoded and parts and not parts[-1].get("more_body", False):
            # zlib lets go of the GIL: ~16 ms per page (a new query string each) off the event loop
            answer = await asyncio.to_thread(Kept, config, began, b"".join(m.get("body", b"") for m in parts))
            with self.lock:
                self.kept[key] = answer
                while len(self.kept) > self.size:
                    self.kept.popitem(last=False)
