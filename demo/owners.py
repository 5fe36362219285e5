"""Who is this visitor? Each request acts for one owner (service.owners), found from its Gradio session:

- a page load binds its session to the Hugging Face user signed in on a Space, else to a random key its browser
  keeps in localStorage across reloads (plain: any encryption would use a secret the page itself is sent);
- an API client is its own session's owner for its lifetime (one gradio_client Client = one session) when its
  session id has KEY_CHARS[0]+ characters; `/owner` with "" returns that session's key, and a later session that
  passes the key to `/owner` acts for the same owner.

Bindings live in the owner store (service.store, sqlite beside the trained models): they survive restarts, and a
flood of new sessions never pushes a live one out. Keys are never stored, only owner ids. Work that writes to
disk or holds the long lane goes through `writer`: on a Space a signed-in user (service.budgets.SpacePolicy),
elsewhere any owner with a long enough key. MCP clients share one session in Gradio, so the owner-bound
endpoints are no MCP tools (demo/tabs/api.py) and an MCP call sees the public models only.
"""

import secrets

import gradio as gr

from demo.i18n import request_lang, t
from demo.plots import esc
from service.budgets import RateBudget, SpacePolicy, request_client
from service.lab import ServedLab
from service.owners import HF_USER, KEY, NOBODY, owner_id
from service.settings import Settings
from service.store import Store, open_store

KEY_CHARS = (16, 200)  # a shorter key could be guessed; a longer one is not a key


def _refuse(code: str, request: gr.Request | None, **params) -> gr.Error:
    return gr.Error(esc(t(code, request_lang(request), **params)), print_exception=False)


class Visitors:
    """session id -> owner id, for sessions bound by a page load or `/owner`, kept in the owner store."""

    def __init__(self, settings: Settings, store: Store | None = None):
        # the app's settings (build_demo), which every tab is given with its Visitors
        self.settings = settings
        self.store = store or open_store(self.settings.user_models)
        self.policy = SpacePolicy.from_settings(self.settings)
        self.binds = RateBudget(self.policy.binds_per_minute)

    def owner(self, request: gr.Request | None) -> str:
        """The owner this request acts for: its session's binding, else the session itself when its id is long
        enough to be a key, else NOBODY (who sees the public models and owns nothing)."""
        session = _session(request)
        if session and (bound := self.store.owner_of(session)) is not None:
            return bound
        return owner_id(KEY, session) if valid_key(session) else NOBODY

    def writer(self, request: gr.Request | None, profile: gr.OAuthProfile | None = None) -> tuple[str, str]:
        """(owner, client) for work that writes to disk or holds the long lane; gr.Error (one line) when this
        visitor may not: not signed in where the policy asks for it, or a session too short to be anybody's.
        The client is "" for a signed-in user, whose identity has a cost: only anonymous work is also budgeted
        per network address (a lecture hall shares one)."""
        if profile is not None:
            return owner_id(HF_USER, profile.username), ""
        if self.policy.sign_in:
            raise _refuse("sign_in_needed", request)
        if (owner := self.owner(request)) == NOBODY:
            raise _refuse("owner_session_short", request, min_chars=KEY_CHARS[0])
        return owner, self.client(request)

    def client(self, request: gr.Request | None) -> str:
        """The request's client (service.budgets.client_id of its address, behind the Space's proxy)."""
        return request_client(request, self.policy.forwarded_hops)

    def lab(self, lab: ServedLab, request: gr.Request | None) -> ServedLab:
        """The Lab as this request's owner sees it: the public models and its own."""
        return lab.visible_to(self.owner(request))

    def on_page(self, key, request: gr.Request, profile: gr.OAuthProfile | None = None) -> str:
        """A page load: bind the session to the signed-in user, else to the browser's key (made on its first
        visit); the key goes back to the browser to keep."""
        if not valid_key(key):
            key = secrets.token_urlsafe(24)
        owner = owner_id(HF_USER, profile.username) if profile else owner_id(KEY, key)
        if self.store.owner_of(_session(request)) != owner:  # no rate budget: a lecture hall shares one address
            self.store.bind(_session(request), owner)
        return key

    def on_api(self, key: str, request: gr.Request) -> str:
        """`/owner`: with a key, this session acts for that key's owner from now on; without, the key of this
        session's own work so far (its session id), to pass to `/owner` from a later session."""
        session = _session(request)
        if key in (None, ""):
            if self.store.owner_of(session) is not None:
                raise _refuse("owner_key_taken", request)
            if not valid_key(session):
                raise _refuse("owner_session_short", request, min_chars=KEY_CHARS[0])
            return session
        if not valid_key(key):
            raise _refuse("owner_key_bad", request, min_chars=KEY_CHARS[0], max_chars=KEY_CHARS[1])
        if not self.binds.take(self.client(request)):
            raise _refuse("rate_limited", request, per_minute=self.policy.binds_per_minute)
        self.store.bind(session, owner_id(KEY, key))
        return key


def valid_key(key) -> bool:
    return isinstance(key, str) and KEY_CHARS[0] <= len(key) <= KEY_CHARS[1]


def _session(request: gr.Request | None) -> str:
    return str(getattr(request, "session_hash", None) or "")
