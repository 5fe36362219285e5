"""Limits on what one HTTP request may send: a request body over MAX_BODY_BYTES is answered 413 before
the app reads it. The largest legitimate body is a /compare call with MAX_CHARS characters (5,000, at most
6 bytes each as JSON \\u escapes: 30 KB). File uploads (the Train tab's labelled files) may be larger:
MAX_UPLOAD_BYTES, twice the training file cap, so that a file just over the cap reaches the app and gets
its own message ("the file is 6.1 MB; the limit is 5.0 MB")."""

from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse

from service.jobs import TrainLimits
from demo.sessions import OneShotSessions

MAX_BODY_BYTES = 1 << 20  # 1 MiB
MAX_UPLOAD_BYTES = 2 * TrainLimits.from_env().max_bytes
UPLOAD_PATH = "/gradio_api/upload"


class RequestBodyLimit:
    """ASGI middleware: 413 for a declared Content-Length over the limit, and for a chunked body once
    it passes the limit (the app then sees a disconnect and its own answer is dropped)."""

    def __init__(self, app, max_bytes: int = MAX_BODY_BYTES, max_upload_bytes: int = MAX_UPLOAD_BYTES):
        self.app, self.max_bytes, self.max_upload_bytes = app, max_bytes, max_upload_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.max_upload_bytes if scope["path"].endswith(UPLOAD_PATH) else self.max_bytes
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > limit:
            return await self._refuse(scope, receive, send, limit)
        received, refused = 0, False

        async def counted_receive():
            nonlocal received, refused
            message = await receive()
            received += len(message.get("body", b""))
            if message["type"] == "http.request" and received > limit and not refused:
                refused = True
                await self._refuse(scope, receive, send, limit)
                return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            if not refused:  # once the 413 went out, the app's own answer has nowhere to go
                await send(message)

        await self.app(scope, counted_receive, guarded_send)

    async def _refuse(self, scope, receive, send, limit: int):
        response = PlainTextResponse(f"request body larger than {limit} bytes", status_code=413)
        await response(scope, receive, send)


# FastAPI keyword arguments for Blocks.launch(app_kwargs=...): app.py and the tests launch with them
APP_KWARGS = {"middleware": [Middleware(RequestBodyLimit, max_bytes=MAX_BODY_BYTES), Middleware(OneShotSessions)]}
