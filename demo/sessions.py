"""What the app keeps per visitor. Gradio keeps a SessionState for every session id it sees: a page
load, a gradio_client Client, and each REST call that names no session (the call's event id becomes its
session). A SessionState copies the config of every block on the page (173 blocks: ~270 KB) plus the values
its events returned, and Gradio drops one only when `state_session_capacity` newer ones exist (default 10,000):
RSS grew ~410 MB per 1,000 REST /compare calls and never came back. Two bounds:
- a REST call that names no session can never be continued, so its state is dropped once its answer is read;
- at most Settings.sessions sessions are kept (pages and clients), the least recently used go first. An evicted
  visitor's next event starts from the page's defaults: their inputs travel with each event, but what a
  gr.State held (a probe table, a tree) must be run again.
Building a new session's copy of the page config was also most of the app's CPU per REST call (every block's
get_config, an inspect.signature each; docs/performance.md), for a copy only Gradio's deep links read (the page
has no gr.DeepLinkButton): LeanSessionState fills it in when an event writes a block's value or a deep link
reads it all.
"""

import re

from gradio.state_holder import SessionState, StateHolder

# GET /gradio_api/call/<api>/<event id> streams one REST call's answer (Gradio's routes.py, simple_predict_get)
ANSWER_STREAM = re.compile(r"/call/(?:v2/)?[^/]+/([0-9a-f]{32})$")


class _Unconfigured:
    """What SessionState.__init__ reads of the page: its default config, and no blocks to configure up front."""

    def __init__(self, page):
        self.default_config, self.blocks = page.default_config, {}


class LeanSessionState(SessionState):
    """Gradio's SessionState with its copy of the page config (`config_values`) made on demand: SessionState
    itself fills a missing block's entry when an event writes the block's value, and `components` (the whole
    config, for a deep link) fills the rest, in the page's order, as SessionState.__init__ would have."""

    def __init__(self, page):
        super().__init__(_Unconfigured(page))
        self.page_blocks = page.blocks

    @property
    def components(self):
        made, config = self.config_values, self.blocks_config
        self.config_values = {
            k: made[k] if k in made else config.config_for_block(k, [], block)
            for k, block in config.blocks.items()
            if k in self.page_blocks or k in made
        }
        return super().components


class LeanSessions(StateHolder):
    """Gradio's StateHolder making LeanSessionStates."""

    def __getitem__(self, session_id: str) -> SessionState:
        with self.lock:
            if session_id not in self.session_data:
                self.session_data[session_id] = LeanSessionState(self.blocks)
        return super().__getitem__(session_id)


class OneShotSessions:
    """ASGI middleware: once a REST call's answer stream has been sent, the session Gradio opened for it (named
    by the call's event id) is forgotten. A call that named its own session keeps it. On the first request, the
    app's session store (shared by Gradio's App and Blocks) becomes a LeanSessions, in place."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        holder = getattr(scope.get("app"), "state_holder", None)  # scope["app"]: Gradio's App (Starlette sets it)
        if type(holder) is StateHolder:
            holder.__class__ = LeanSessions  # in place: Gradio's App and Blocks hold this one object
        await self.app(scope, receive, send)
        answered = scope["type"] == "http" and scope["method"] == "GET" and ANSWER_STREAM.search(scope["path"])
        if answered and holder is not None:
            with holder.lock:
                holder.session_data.pop(answered.group(1), None)
                holder.time_last_used.pop(answered.group(1), None)
