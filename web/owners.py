"""Who is this visitor? Each request acts for one owner (service.owners), found from its Gradio session:

- a page load binds its session to the Hugging Face user signed in on a Space, else to a random key its browser
  keeps in localStorage across reloads (plain: any encryption would use a secret the page itself is sent);
- an API client is its own session's owner for its lifetime (one gradio_client Client = one session) when its
  session id has KEY_CHARS[0]+ characters; `/owner` with "" returns that session's key, and a later session that
  passes the key to `/owner` acts for the same owner.

A page load costs no write: its binding is kept in memory (PageOwners, bounded per client address and in all; a
reload binds again from the browser's key) until the page does owner-bound work (`writer`), which writes it to the
owner store (service.store, sqlite beside the trained models) so that it survives restarts. `/owner` writes at
once, within its rate budget per address. A store that cannot write refuses that work in one line (StoreError)
and nothing else: lookups, and every read-only request, keep answering. Keys are never stored, only owner ids.

Work that writes to disk or holds the long lane goes through `writer`: on a Space a signed-in user
(service.budgets.SpacePolicy), elsewhere any owner with a long enough key. A sign-in is Hugging Face's own OAuth
(Settings.real_oauth) or none: where sign-in is required and it is absent, nobody may write. MCP clients share one
session in Gradio, so the owner-bound endpoints are no MCP tools (demo/tabs/api.py) and an MCP call sees the
public models only.
"""

import html
import logging
import secrets
import threading
from collections import OrderedDict

import gradio as gr

from service.budgets import RateBudget, SpacePolicy, request_client, signed_in_client
from service.lab import ServedLab
from service.owners import HF_USER, KEY, NOBODY, owner_id
from service.settings import Settings
from service.store import Store, StoreError, open_store
from web.words import Words, request_lang

log = logging.getLogger(__name__)

KEY_CHARS = (16, 200)  # a shorter key could be guessed; a longer one is not a key
PAGES = 20_000  # page bindings kept in memory in all (~200 bytes each)


class PageOwners:
    """session -> (owner, client) of the pages loaded, in memory: at most `per_client` per client address (past it,
    that address's least recently used goes: one address's flood of page loads pushes out only its own) and
    `total` in all, least recently used first."""

    def __init__(self, per_client: int, total: int = PAGES):
        self.per_client, self.total = per_client, total
        self.owners: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self.by_client: dict[str, OrderedDict[str, None]] = {}
        self.lock = threading.Lock()

    def put(self, session: str, owner: str, client: str) -> None:
        with self.lock:
            self._drop(session)
            self.owners[session] = (owner, client)
            self.by_client.setdefault(client, OrderedDict())[session] = None
            if len(self.by_client[client]) > self.per_client:
                self._drop(next(iter(self.by_client[client])))
            if len(self.owners) > self.total:
                self._drop(next(iter(self.owners)))

    def get(self, session: str) -> tuple[str, str] | None:
        """(owner, client) of the page's session, or None; a use keeps it longer."""
        with self.lock:
            found = self.owners.get(session)
            if found is not None:
                self.owners.move_to_end(session)
                self.by_client[found[1]].move_to_end(session)
            return found

    def pop(self, session: str) -> None:
        with self.lock:
            self._drop(session)

    def _drop(self, session: str) -> None:
        found = self.owners.pop(session, None)
        if found is not None:
            sessions = self.by_client[found[1]]
            del sessions[session]
            if not sessions:
                del self.by_client[found[1]]


class Visitors:
    """session id -> owner id, for sessions bound by a page load (in memory until owner-bound work) or `/owner`
    (in the owner store)."""

    def __init__(self, settings: Settings, store: Store | None = None, *, words: Words):
        # the app's settings (build_demo), which every tab is given with its Visitors; the page's words
        self.settings, self.words = settings, words
        self.store = store or open_store(
            settings.user_models, rows_per_client=settings.store_rows_per_client, max_rows=settings.store_max_rows
        )
        self.pages = PageOwners(settings.store_rows_per_client)
        self.policy = SpacePolicy.from_settings(self.settings)
        self.binds = RateBudget(self.policy.binds_per_minute)
        if self.policy.sign_in and not self.policy.login:
            log.warning(
                "sign-in is required but Hugging Face OAuth is not configured (SYSTEM=spaces, OAUTH_CLIENT_ID, "
                "OAUTH_CLIENT_SECRET, OAUTH_SCOPES, OPENID_PROVIDER_URL): writing work is off, nobody is signed in"
            )

    def bound(self, session: str) -> str | None:
        """The owner `session` is bound to (by its page, else in the store), or None."""
        page = self.pages.get(session)
        return page[0] if page is not None else self.store.owner_of(session)

    def owner(self, request: gr.Request | None) -> str:
        """The owner this request acts for: its session's binding, else the session itself when its id is long
        enough to be a key, else NOBODY (who sees the public models and owns nothing)."""
        session = _session(request)
        if session and (bound := self.bound(session)) is not None:
            return bound
        return owner_id(KEY, session) if valid_key(session) else NOBODY

    def writer(self, request: gr.Request | None, profile: gr.OAuthProfile | None = None) -> tuple[str, str]:
        """(owner, client) for work that writes to disk or holds the long lane; gr.Error (one line) when this
        visitor may not: not signed in where the policy asks for it (nobody, where Hugging Face's sign-in is
        absent), a session too short to be anybody's, or an owner store that cannot write the page's binding.
        Work is budgeted per network address, a signed-in user's apart from anonymous work (a class shares one
        address, and a sign-in has a cost: service.budgets.signed_in_client)."""
        if profile is not None and self.policy.login:
            owner, client = owner_id(HF_USER, profile.username), signed_in_client(self.client(request))
        elif self.policy.sign_in:
            raise self._refuse("sign_in_needed" if self.policy.login else "sign_in_off", request)
        elif (owner := self.owner(request)) == NOBODY:
            raise self._refuse("owner_session_short", request, min_chars=KEY_CHARS[0])
        else:
            client = self.client(request)
        session = _session(request)
        if (page := self.pages.get(session)) is not None:  # owner-bound work: the page's binding is kept from now on
            self._bind(session, page[0], page[1], request)
        return owner, client

    def _refuse(self, code: str, request: gr.Request | None, **params) -> gr.Error:
        """A refusal in the visitor's language (the page's words), one line."""
        words = self.words(code, request_lang(request), **params)
        return gr.Error(html.escape(words, quote=False), print_exception=False)

    def client(self, request: gr.Request | None) -> str:
        """The request's client (service.budgets.client_id of its address, behind the Space's proxy)."""
        return request_client(request, self.policy.forwarded_hops)

    def lab(self, lab: ServedLab, request: gr.Request | None) -> ServedLab:
        """The Lab as this request's owner sees it: the public models and its own."""
        return lab.visible_to(self.owner(request))

    def on_page(self, key, request: gr.Request, profile: gr.OAuthProfile | None = None) -> str:
        """A page load: bind the session, in memory, to the signed-in user, else to the browser's key (made on its
        first visit); the key goes back to the browser to keep. No rate budget: a lecture hall shares one
        address, and nothing is written."""
        if not valid_key(key):
            key = secrets.token_urlsafe(24)
        signed_in = profile is not None and self.policy.login
        owner = owner_id(HF_USER, profile.username) if signed_in and profile else owner_id(KEY, key)
        self.pages.put(_session(request), owner, self.client(request))
        return key

    def on_api(self, key: str, request: gr.Request) -> str:
        """`/owner`: with a key, this session acts for that key's owner from now on; without, the key of this
        session's own work so far (its session id), to pass to `/owner` from a later session."""
        session = _session(request)
        if key in (None, ""):
            if self.bound(session) is not None:
                raise self._refuse("owner_key_taken", request)
            if not valid_key(session):
                raise self._refuse("owner_session_short", request, min_chars=KEY_CHARS[0])
            return session
        if not valid_key(key):
            raise self._refuse("owner_key_bad", request, min_chars=KEY_CHARS[0], max_chars=KEY_CHARS[1])
        if not self.binds.take(client := self.client(request)):
            raise self._refuse("rate_limited", request, per_minute=self.policy.binds_per_minute)
        self._bind(session, owner_id(KEY, key), client, request)
        return key

    def _bind(self, session: str, owner: str, client: str, request: gr.Request | None) -> None:
        """Write the binding to the store (the page's, if any, is then the store's); one line when it cannot."""
        try:
            self.store.bind(session, owner, client)
        except StoreError:  # the store logged it once
            raise self._refuse("store_unavailable", request) from None
        self.pages.pop(session)


def valid_key(key) -> bool:
    return isinstance(key, str) and KEY_CHARS[0] <= len(key) <= KEY_CHARS[1]


def _session(request: gr.Request | None) -> str:
    return str(getattr(request, "session_hash", None) or "")
