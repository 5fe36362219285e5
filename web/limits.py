"""Limits on what one HTTP request may send: a request body over MAX_BODY_BYTES is answered 413 before
the app reads it; an upload is refused (429, 507) past its client's rate or the cache's total (UploadBudget).
The largest legitimate body is a /compare call with MAX_CHARS characters (5,000, at most 6 bytes each as JSON
\\u escapes: 30 KB). File uploads (the Train tab's labelled files) may be larger: MAX_UPLOAD_BYTES, twice the
training file cap, so that a file just over the cap reaches the app and gets its own message ("the file is
6.1 MB; the limit is 5.0 MB")."""

import threading
import time
from pathlib import Path
from types import SimpleNamespace

from gradio.utils import get_upload_folder
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse

from service.budgets import RateBudget, SpacePolicy, scope_client
from service.cleanup import folder_bytes
from service.settings import DEFAULTS, Settings
from web.fair_queue import FairJoin
from web.page_cache import PageCache
from web.rest import DirectCalls
from web.sessions import OneShotSessions
from web.thread_hops import lifespan
from web.words import Words, request_lang

MAX_BODY_BYTES = 1 << 20  # 1 MiB
MAX_UPLOAD_BYTES = 2 * DEFAULTS.train_max_bytes  # with the default training file cap (app_kwargs: the app's)
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


class UploadBudget:
    """ASGI middleware: an upload is refused once its client has sent `uploads_per_minute` in the last minute
    (429), or when Gradio's upload cache (all visitors' files, removed after Settings.upload_cache_minutes) would pass
    `upload_cache_mb` with it (507). One line, in the browser's language."""

    def __init__(self, app, policy: SpacePolicy, words: Words, folder: str | Path | None = None):
        self.app, self.policy, self.words = app, policy, words
        self.folder = Path(folder or get_upload_folder())
        self.rates = RateBudget(self.policy.uploads_per_minute)
        self.lock, self.measured, self.used = threading.Lock(), 0.0, 0  # the cache's size, measured once a second

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].endswith(UPLOAD_PATH):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope_client(scope, self.policy.forwarded_hops)
        declared = int(headers.get("content-length", "0") or 0) if headers.get("content-length", "").isdigit() else 0
        lang = request_lang(SimpleNamespace(headers=headers))
        if not self.rates.take(client):
            line = self.words("upload_rate", lang, per_minute=self.policy.uploads_per_minute)
            return await PlainTextResponse(line, status_code=429)(scope, receive, send)
        if not self._room_for(declared):
            line = self.words("upload_cache_full", lang, mb=self.policy.upload_cache_mb)
            return await PlainTextResponse(line, status_code=507)(scope, receive, send)
        await self.app(scope, receive, send)

    def _room_for(self, size: int) -> bool:
        """Count `size` bytes into the cache when they fit; its real size is read again at most once a second."""
        with self.lock:
            if time.monotonic() - self.measured > 1.0:
                self.used, self.measured = folder_bytes(self.folder), time.monotonic()
            if self.used + size > self.policy.upload_cache_mb * 2**20:
                return False
            self.used += size
            return True


def app_kwargs(settings: Settings, words: Words) -> dict:
    """FastAPI keyword arguments for Blocks.launch(app_kwargs=...): app.py and the tests launch with them; `words`
    (demo.i18n.t) words their refusals."""
    return {
        "middleware": [
            Middleware(RequestBodyLimit, max_bytes=MAX_BODY_BYTES, max_upload_bytes=2 * settings.train_max_bytes),
            Middleware(UploadBudget, policy=SpacePolicy.from_settings(settings), words=words),
            Middleware(FairJoin, settings=settings, words=words),
            Middleware(OneShotSessions),
            Middleware(DirectCalls, settings=settings, words=words),
            Middleware(PageCache),
        ],
        "lifespan": lifespan,  # Gradio's login check on the event loop, not in a thread (web/thread_hops.py)
    }
