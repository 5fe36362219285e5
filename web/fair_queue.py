"""A fair share of Gradio's queue for every client (service.fair). `FairJoin`, an ASGI middleware at
POST /gradio_api/queue/join, admits an event only within its client's share of the queue's places (429 at once
past it, in the visitor's language, with a Retry-After), remembers whose event it is, and puts the waiting line of
the event's concurrency group in turns (round_robin: each client's next event after every other client's).
The model events enter their handlers at once (runner.queue_options), where web.runner's lanes give their work
turns by the same client: `client_of(event_id)`.

Gradio's queue has no hook for an order: this reads the queue's `event_ids_to_events` (events waiting or running,
Gradio drops each as it ends) and sorts a group's `EventQueue.queue` in place, on the event loop, where Gradio
reads and writes both (tests/app/test_fair_share.py fails when an upgrade renames them)."""

import json
import re
import time
from collections import Counter
from types import SimpleNamespace

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from service.budgets import scope_client
from service.fair import RETRY_S, FairShare, round_robin
from service.owners import HF_USER, owner_id
from service.settings import Settings
from web.words import Words, request_lang

JOIN = re.compile(r"/gradio_api/queue/join/?$")
EVENT_CLIENTS: dict[str, str] = {}  # event id -> its client, while Gradio's queue holds the event


def client_key(scope, hops: int) -> str:
    """Who a request is for fair shares: the Hugging Face user signed in (Gradio's OAuth session), wherever they
    connect from, else the client's address (service.budgets.scope_client)."""
    info = (scope.get("session") or {}).get("oauth_info") or {}
    user = (info.get("userinfo") or {}).get("preferred_username")
    if user and (info.get("expires_at") or time.time() + 1) > time.time():  # Gradio drops an expired sign-in
        return owner_id(HF_USER, user)
    return scope_client(scope, hops)


def client_of(event_id: str | None) -> str:
    """The client of a queued event ("" when it came another way)."""
    return EVENT_CLIENTS.get(event_id or "", "")


def refusal(scope, held: int, share: int, words: Words) -> JSONResponse:
    """429, one line in the visitor's language, and when to try again."""
    lang = request_lang(SimpleNamespace(headers=Headers(scope=scope)))
    line = words("fair_share", lang, held=held, share=share, seconds=RETRY_S)
    return JSONResponse({"detail": line}, status_code=429, headers={"retry-after": str(RETRY_S)})


class FairJoin:
    """ASGI middleware: Gradio's queue shared fairly between clients (module docstring). The pool is the queue's
    places: Settings.model_concurrency running and Settings.queue_size waiting."""

    def __init__(self, app, settings: Settings, words: Words):
        self.app, self.hops, self.words = app, settings.hops, words
        self.policy = FairShare(settings.model_concurrency + settings.queue_size)
        self.joining: Counter[str] = Counter()  # admitted, Gradio's answer not back yet

    async def __call__(self, scope, receive, send):
        blocks = getattr(scope.get("app"), "get_blocks", lambda: None)() if scope["type"] == "http" else None
        queue = getattr(blocks, "_queue", None)
        if queue is None or scope["method"] != "POST" or not JOIN.search(scope["path"]):
            return await self.app(scope, receive, send)
        client = client_key(scope, self.hops)
        held = self.held(queue)
        if not self.policy.admits(held, client):
            return await refusal(scope, held[client], self.policy.share(held, client), self.words)(scope, receive, send)
        body = bytearray()

        async def kept(message):
            if message["type"] == "http.response.body":
                body.extend(message.get("body", b""))
            await send(message)

        self.joining[client] += 1
        try:
            await self.app(scope, receive, kept)
        finally:
            self.joining[client] -= 1
            if self.joining[client] <= 0:
                del self.joining[client]
        event = queue.event_ids_to_events.get(_event_id(bytes(body)))
        if event is not None:
            EVENT_CLIENTS[event._id] = client
            self.take_turns(queue, event.concurrency_id)

    def held(self, queue) -> Counter[str]:
        """Places per client: Gradio's events waiting or running, and the joins under way."""
        alive = queue.event_ids_to_events
        for gone in [e for e in EVENT_CLIENTS if e not in alive]:
            del EVENT_CLIENTS[gone]
        return Counter(EVENT_CLIENTS.values()) + self.joining

    @staticmethod
    def take_turns(queue, concurrency_id: str) -> None:
        """The group's waiting events in turns, a client's running events counted as turns it has had."""
        running = Counter(
            client_of(event._id)
            for job in queue.active_jobs
            for event in job or ()
            if event.concurrency_id == concurrency_id
        )
        line = queue.event_queue_per_concurrency_id[concurrency_id].queue
        line[:] = round_robin(line, lambda event: client_of(event._id), running)


def _event_id(body: bytes) -> str:
    try:
        answer = json.loads(body)
    except ValueError:
        return ""
    return str(answer.get("event_id") or "") if isinstance(answer, dict) else ""
