"""REST calls of /predict and /compare answered beside Gradio's queue. A REST call as curl makes it (POST
/gradio_api/call/<api>, then GET the answer's event stream) that names no session can never be continued, yet
Gradio runs it as a page's event: its routes' dependencies, a queue event, a session with the page config, the
output walked for files, an SSE stream with its own tasks. That was most of the app's CPU per short REST /predict
(19.6 ms of which the model's work was ~3: docs/performance.md). `DirectCalls` answers such a call with the
endpoint's own function and Gradio's own checks (validate_inputs, the components' preprocess and postprocess,
special_args for the gr.Request), in a thread pool as large as the queue's model concurrency, with the queue's
bound on waiting calls; the same bytes come back (tests/app/test_rest.py). A call that names its session is
answered the same way, as that session (its owner's models): Gradio's own path never completed four concurrent
calls of one session. Anything else (a body Gradio must refuse in its own words, another endpoint, an app with a
login) goes to Gradio. The pool is shared fairly between clients (service.fair): a client past its share of
the pool's places is refused at once (429, in its language, with a Retry-After), and every admitted call starts
at once, its model work waiting for its turn in web.runner's lanes.
`LAB_DIRECT_REST=0` (Settings.direct_rest) sends every call through Gradio's queue (to measure one against
the other)."""

import asyncio
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass, field

import gradio as gr
from gradio.helpers import special_args
from gradio.utils import error_payload, get_heartbeat_rate
from starlette.requests import Request
from starlette.responses import JSONResponse

from service.fair import FairShare, Holdings
from service.settings import Settings
from web.fair_queue import client_key, refusal
from web.runner import CALLER_ALIVE, CALLER_CLIENT
from web.words import Words

log = logging.getLogger(__name__)

DIRECT_APIS = ("predict", "compare")
CALL = re.compile(r"/gradio_api/call/(predict|compare)/?$")
ANSWER = re.compile(r"/gradio_api/call/(?:v2/)?(?:predict|compare)/([0-9a-f]{32})$")
KEEP_S = 120.0  # an answer nobody came for is dropped after this long, or once `kept` newer ones wait to be read
SSE_HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]


@dataclass
class Call:
    """One REST call in flight: its answer (an SSE event's text) once ready, and whether its caller still waits."""

    future: Future = field(default_factory=Future)
    started: float = field(default_factory=time.monotonic)
    alive: bool = True

    def is_alive(self) -> bool:
        return self.alive


class DirectCalls:
    """ASGI middleware: REST /predict and /compare calls run by the endpoint's function, each client within its
    fair share of Settings.model_concurrency + Settings.queue_size places (past it: 429); a thread each, so that
    the lanes, not this pool's order, decide whose work runs next. Settings.direct_rest False leaves every call
    to Gradio."""

    def __init__(self, app, settings: Settings, words: Words):
        self.app, self.enabled, self.hops, self.words = app, settings.direct_rest, settings.hops, words
        self.places = Holdings(FairShare(settings.model_concurrency + settings.queue_size))
        self.kept = 4 * self.places.policy.capacity
        self.pool = ThreadPoolExecutor(2 * self.places.policy.capacity, thread_name_prefix="rest")
        self.calls: dict[str, Call] = {}
        self.lock = threading.Lock()

    async def __call__(self, scope, receive, send):
        path, method = scope.get("path", ""), scope.get("method")
        if not self.enabled or scope["type"] != "http":
            return await self.app(scope, receive, send)
        if method == "GET" and (asked := ANSWER.search(path)) and asked.group(1) in self.calls:
            return await self.answer(self.calls[asked.group(1)], asked.group(1), receive, send)
        if method != "POST" or not (api := CALL.search(path)):
            return await self.app(scope, receive, send)
        body = await _body(receive)
        blocks = getattr(scope.get("app"), "get_blocks", lambda: None)()
        started = self.start(blocks, api.group(1), body, scope) if blocks is not None else None
        if started is None:  # Gradio's own answer, the body replayed
            return await self.app(scope, _replay(body, receive), send)
        if isinstance(started, JSONResponse):  # past the client's share
            return await started(scope, receive, send)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(started, separators=(",", ":")).encode()})

    def start(self, blocks, api: str, body: bytes, scope) -> dict | JSONResponse | None:
        """The call started in the pool: its event id, or the refusal of a client past its share; None: Gradio must
        answer it."""
        fn = next((f for f in blocks.fns.values() if f.api_name == api), None)
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, nested past Python's stack: Gradio's 422
            return None
        data = payload.get("data") if isinstance(payload, dict) and set(payload) <= {"data", "session_hash"} else None
        session = payload.get("session_hash") if isinstance(payload, dict) else None
        if fn is None or blocks.auth or not isinstance(data, list) or len(data) > len(fn.inputs):
            return None
        if session is not None and not isinstance(session, str):
            return None
        inputs = list(data)
        try:
            blocks.validate_inputs(fn, inputs)  # fills the advertised defaults in (demo/tabs/api.py)
            inputs = [block.preprocess(value) for block, value in zip(fn.inputs, inputs)]
        except Exception:  # Gradio's own refusal, in its own words
            return None
        client = client_key(scope, self.hops)
        if not self.places.take(client):
            held = self.places.held.copy()
            return refusal(scope, held[client], self.places.policy.share(held, client), self.words)
        with self.lock:
            now = time.monotonic()
            answered = [e for e, c in self.calls.items() if c.future.done()]  # oldest first
            for n, event_id in enumerate(answered):  # answers nobody came for
                if now - self.calls[event_id].started > KEEP_S or len(answered) - n > self.kept:
                    del self.calls[event_id]
            event_id = uuid.uuid4().hex
            call = Call()
            # the session it names, else the one Gradio would name: the call's event id
            request = gr.Request(request=Request(scope), session_hash=session or event_id)
            args = special_args(fn.fn, inputs, request)[0]
            call.future = self.pool.submit(copy_context().run, self.run, blocks, fn, args, call.is_alive, client)
            call.future.add_done_callback(lambda _: self.places.give(client))
            self.calls[event_id] = call
        return {"event_id": event_id}

    @staticmethod
    def run(blocks, fn, args: list, alive: Callable[[], bool], client: str = "") -> str:
        """The endpoint's answer as the SSE event Gradio sends for it."""
        CALLER_ALIVE.set(alive)
        CALLER_CLIENT.set(client)
        try:
            output = fn.fn(*args)
        except Exception as err:
            if not isinstance(err, gr.Error) or err.print_exception:
                log.exception("REST call failed")
            return f"event: error\ndata: {json.dumps(error_payload(err, blocks.show_error))}\n\n"
        outputs = output if len(fn.outputs) > 1 else [output]
        data = [block.postprocess(value) for block, value in zip(fn.outputs, outputs)]
        return f"event: complete\ndata: {json.dumps(data)}\n\n"

    async def answer(self, call: Call, event_id: str, receive, send) -> None:
        """The answer's event stream: heartbeats while it runs, then its event; a caller who leaves first
        abandons the call (the handler stops waiting, as for a queued event whose stream closed)."""
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        answer, left = asyncio.wrap_future(call.future), asyncio.ensure_future(_disconnect(receive))
        try:
            while not answer.done():
                await asyncio.wait({answer, left}, timeout=get_heartbeat_rate(), return_when=asyncio.FIRST_COMPLETED)
                if left.done():
                    call.alive = False
                    return
                if not answer.done():
                    await send(
                        {"type": "http.response.body", "body": b"event: heartbeat\ndata: null\n\n", "more_body": True}
                    )
            with self.lock:
                self.calls.pop(event_id, None)
            await send({"type": "http.response.body", "body": answer.result().encode()})
        finally:
            left.cancel()


async def _body(receive) -> bytes:
    chunks, more = [], True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def _replay(body: bytes, receive):
    """An ASGI receive that gives `body` once, then what `receive` gives (a disconnect)."""
    sent = False

    async def replayed():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _disconnect(receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
