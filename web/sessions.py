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
has no gr.DeepLinkButton): LeanSessionState makes a block's entry only when a deep link reads the copy, from the
block the session then holds and the value an event last wrote to it (Gradio made it at the write: a get_config per
block a session's first event touches, the page load's 16 outputs and each endpoint's inputs).
"""

import re
from typing import Any

from gradio.components import State
from gradio.state_holder import SessionState, StateHolder

# GET /gradio_api/call/<api>/<event id> streams one REST call's answer (Gradio's routes.py, simple_predict_get)
ANSWER_STREAM = re.compile(r"/call/(?:v2/)?[^/]+/([0-9a-f]{32})$")


class _Unconfigured:
    """What SessionState.__init__ reads of the page: its default config, and no blocks to configure up front."""

    def __init__(self, page):
        self.default_config, self.blocks = page.default_config, {}


class Later(dict):
    """A block's entry in a session's config copy, made when read (LeanSessionState.components): from the block
    the session holds then, with the value an event wrote to it (`value`; none: the block's own). Empty until then,
    as Gradio's config copy takes dicts."""

    NONE = object()

    def __init__(self, value: Any = NONE):
        super().__init__()
        self.value = value


class LeanSessionState(SessionState):
    """Gradio's SessionState with its copy of the page config (`config_values`) made on demand: where Gradio
    makes a block's entry (an event writes the block or its value) the entry is a `Later`, and `components` (the
    whole config, for a deep link) makes every entry, in the page's order, as SessionState would have made it."""

    def __init__(self, page):
        super().__init__(_Unconfigured(page))
        self.page_blocks = page.blocks

    def __setitem__(self, key: int, value: Any):
        if isinstance(self.blocks_config.blocks.get(key), State):  # a State's value and time to live: Gradio's own
            return super().__setitem__(key, value)
        if key in self.blocks_config.blocks:  # Gradio made the new block's entry, its value the block's own
            self.config_values[key] = Later()
        self.blocks_config.blocks[key] = value

    def _update_config(self, key: int):
        if self[key] is not None:
            self.config_values[key] = Later()

    def _update_value_in_config(self, key: int, value: Any):
        made = self.config_values.get(key)
        if made is None or isinstance(made, Later):
            self.config_values[key] = Later(value)
        else:  # made already (a State's, or a deep link read the copy)
            super()._update_value_in_config(key, value)

    def _entry(self, key: int, block) -> dict:
        """The block's entry as Gradio makes it, with the value an event wrote."""
        made, config = self.config_values.get(key), self.blocks_config.config_for_block(key, [], block)
        if isinstance(made, Later) and made.value is not Later.NONE and "props" in config:
            config["props"]["value"] = made.value
        return config

    @property
    def components(self):
        made = self.config_values
        self.config_values = {
            k: made[k] if k in made and not isinstance(made[k], Later) else self._entry(k, block)
            for k, block in self.blocks_config.blocks.items()
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
