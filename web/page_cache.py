"""The page and its config, built once. For every visit Gradio copies the page config (every block's props),
rewrites its URLs for the address the visitor used and serialises it, into the page's HTML (GET /) and again for
GET /config (what a browser, and every new gradio_client Client, reads). Nothing of that depends on the visitor
but the address it was reached at (and a Gradio login, which this app has none of): the page text follows the
browser's language in the browser, from the translations inside the config. `PageCache` keeps each answer, keyed
by what Gradio reads of the request, while the app's config object stays the same; a response that sets a cookie or
is not a plain 200 is never kept."""

import re
import threading
from collections import OrderedDict

PAGE = re.compile(r"^/(?:config|gradio_api/info)?$")  # the page, its config, the API info (a new Client reads both)
# what Gradio's root URL is made of (gradio.route_utils.get_request_origin), besides the path and the scheme
ADDRESS_HEADERS = (b"host", b"x-forwarded-host", b"x-forwarded-proto", b"x-gradio-server")
KEPT = 16  # distinct addresses and query strings (a deep link's ?text=...) kept, the least recently used dropped


class PageCache:
    """ASGI middleware: GET / and GET /config answered from the bytes Gradio sent last time for the same address."""

    def __init__(self, app, kept: int = KEPT):
        self.app, self.size = app, kept
        self.kept: OrderedDict[tuple, tuple[object, dict, bytes]] = OrderedDict()
        self.lock = threading.Lock()

    async def __call__(self, scope, receive, send):
        server = scope.get("app")
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or not PAGE.match(scope["path"])
            or getattr(server, "auth", None) is not None
            or getattr(server, "auth_dependency", None) is not None
            or not hasattr(server, "get_blocks")
        ):
            return await self.app(scope, receive, send)
        config = server.get_blocks().config  # a new object when Gradio rebuilds it (MCP's start): a new entry
        address = tuple((k, v) for k, v in scope["headers"] if k in ADDRESS_HEADERS)
        key = (scope["path"], scope["query_string"], scope.get("root_path", ""), scope.get("scheme"), address)
        with self.lock:
            kept = self.kept.get(key)
            if kept is not None and kept[0] is config:
                self.kept.move_to_end(key)
        if kept is not None and kept[0] is config:
            await send(kept[1])
            await send({"type": "http.response.body", "body": kept[2]})
            return
        sent: list[dict] = []

        async def keep(message):
            sent.append(message)
            await send(message)

        await self.app(scope, receive, keep)
        start, body = sent[0] if sent else {}, [m for m in sent[1:] if m["type"] == "http.response.body"]
        plain = start.get("status") == 200 and not any(k == b"set-cookie" for k, _ in start.get("headers", ()))
        if plain and body and not body[-1].get("more_body", False):
            with self.lock:
                self.kept[key] = (config, start, b"".join(m.get("body", b"") for m in body))
                while len(self.kept) > self.size:
                    self.kept.popitem(last=False)
