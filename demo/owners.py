"""Who is this visitor? Each request acts for one owner (core.owners), found from its Gradio session:

- a page load binds its session to the Hugging Face user signed in on a Space, else to a random key the browser
  keeps across reloads (gr.BrowserState);
- an API client is its own session's owner for its lifetime (one gradio_client Client = one session); `/owner`
  with "" returns that session's key, and a later session that passes the key to `/owner` acts for the same owner.

Only the session -> owner binding is kept here, in memory, for the most recent sessions; keys are never stored.
"""

import secrets
import threading
from collections import OrderedDict

import gradio as gr

from core.owners import HF_USER, KEY, owner_id
from core.predict import Lab
from demo.i18n import request_lang, t
from demo.plots import esc
from demo.sessions import SESSION_CAPACITY

MAX_SESSIONS = SESSION_CAPACITY  # the sessions Gradio keeps: a session it forgot is forgotten here too
KEY_CHARS = (16, 200)  # a shorter key could be guessed; a longer one is not a key


class Visitors:
    """session hash -> owner id, for sessions bound by a page load or `/owner`; the least recent go first."""

    def __init__(self, capacity: int = MAX_SESSIONS):
        self.capacity, self.bound, self.lock = capacity, OrderedDict(), threading.Lock()

    def bind(self, request: gr.Request | None, owner: str) -> None:
        with self.lock:
            self.bound[_session(request)] = owner
            self.bound.move_to_end(_session(request))
            while len(self.bound) > self.capacity:
                self.bound.popitem(last=False)

    def is_bound(self, request: gr.Request | None) -> bool:
        with self.lock:
            return _session(request) in self.bound

    def owner(self, request: gr.Request | None) -> str:
        """The owner this request acts for: its session's binding, else the session itself."""
        session = _session(request)
        with self.lock:
            if session in self.bound:
                self.bound.move_to_end(session)
                return self.bound[session]
        return owner_id(KEY, session)

    def lab(self, lab: Lab, request: gr.Request | None) -> Lab:
        """The Lab as this request's owner sees it: the public models and its own."""
        return lab.visible_to(self.owner(request))

    def on_page(self, key, request: gr.Request, profile: gr.OAuthProfile | None = None) -> str:
        """A page load: bind the session to the signed-in user, else to the browser's key (made on its first
        visit); the key goes back to the browser to keep."""
        if not valid_key(key):
            key = secrets.token_urlsafe(24)
        self.bind(request, owner_id(HF_USER, profile.username) if profile else owner_id(KEY, key))
        return key

    def on_api(self, key: str, request: gr.Request) -> str:
        """`/owner`: with a key, this session acts for that key's owner from now on; without, the key of this
        session's own work so far (its session id), to pass to `/owner` from a later session."""
        if key in (None, ""):
            if self.is_bound(request):
                raise gr.Error(esc(t("owner_key_taken", request_lang(request))), print_exception=False)
            return _session(request)
        if not valid_key(key):
            words = t("owner_key_bad", request_lang(request), min_chars=KEY_CHARS[0], max_chars=KEY_CHARS[1])
            raise gr.Error(esc(words), print_exception=False)
        self.bind(request, owner_id(KEY, key))
        return key


def valid_key(key) -> bool:
    return isinstance(key, str) and KEY_CHARS[0] <= len(key) <= KEY_CHARS[1]


def _session(request: gr.Request | None) -> str:
    return str(getattr(request, "session_hash", None) or "")
