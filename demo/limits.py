"""Limits on what one HTTP request may send: a request body over MAX_BODY_BYTES is answered 413 before
the app reads it. The largest legitimate body is a /compare call with MAX_CHARS characters (5,000, at most
6 bytes each as JSON \\u escapes: 30 KB); Gradio's own uploads are not used by this app."""

from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse

MAX_BODY_BYTES = 1 << 20  # 1 MiB


class RequestBodyLimit:
    """ASGI middleware: 413 for a declared Content-Length over the limit, and for a chunked body once
    it passes the limit (the app then sees a disconnect and its own answer is dropped)."""

    def __init__(self, app, max_bytes: int = MAX_BODY_BYTES):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > self.max_bytes:
            return await self._refuse(scope, receive, send)
        received, refused = 0, False

        async def counted_receive():
            nonlocal received, refused
            message = await receive()
            received += len(message.get("body", b""))
            if message["type"] == "http.request" and received > self.max_bytes and not refused:
                refused = True
                await self._refuse(scope, receive, send)
                return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            if not refused:  # once the 413 went out, the app's own answer has nowhere to go
                await send(message)

        await self.app(scope, counted_receive, guarded_send)

    async def _refuse(self, scope, receive, send):
        response = PlainTextResponse(f"request body larger than {self.max_bytes} bytes", status_code=413)
        await response(scope, receive, send)


# FastAPI keyword arguments for Blocks.launch(app_kwargs=...): app.py and the tests launch with them
APP_KWARGS = {"middleware": [Middleware(RequestBodyLimit, max_bytes=MAX_BODY_BYTES)]}
