"""What one client and the whole Space may use, beyond one owner's quotas (service.jobs.TrainLimits): a
visitor costs nothing to create, so budgets also hold per client address and for the Space as a whole.

- Who may write: on a Space (SPACE_ID set) training and the other work that writes to disk or holds the long
  lane need a signed-in Hugging Face user (LAB_SIGN_IN=required); off a Space anonymous keys may (optional).
  A sign-in is Hugging Face's own OAuth or nothing (Settings.real_oauth): where it is required but absent (a
  copy of the Space run elsewhere), nobody may write.
  Every number here comes from service.settings (SpacePolicy.from_settings).
- A client is its network address: the peer's, or behind `forwarded_hops` proxies that append to
  X-Forwarded-For (a Space's: 1) the address the outermost trusted proxy saw. Only a hash of it is stored.
- RateBudget: at most `per_minute` events per client in any minute (new owner bindings, uploads).
- The upload cache has a total cap (web/limits.py refuses an upload once it is full).
"""

import hashlib
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from service.settings import DEFAULTS, Settings

SIGNED_IN = "hf-"  # the mark of a signed-in user's client (a client_id is hex)


@dataclass(frozen=True)
class SpacePolicy:
    """What service.settings says of a public Space, as the front end's gates use it (off a Space by default)."""

    sign_in: bool = False  # writing work needs a signed-in Hugging Face user
    forwarded_hops: int = 0  # proxies in front of the app that append the client's address to X-Forwarded-For
    upload_cache_mb: float = DEFAULTS.upload_cache_mb
    uploads_per_minute: int = DEFAULTS.uploads_per_minute
    binds_per_minute: int = DEFAULTS.binds_per_minute
    login: bool = False  # Hugging Face's own sign-in is there (Settings.real_oauth): the page offers it

    @classmethod
    def from_settings(cls, settings: Settings) -> "SpacePolicy":
        return cls(
            settings.requires_sign_in,
            settings.hops,
            settings.upload_cache_mb,
            settings.uploads_per_minute,
            settings.binds_per_minute,
            settings.real_oauth,
        )


def client_address(forwarded: Sequence[str], peer: str | None, hops: int) -> str:
    """The client's address: with `hops` trusted proxies, the hops-th entry from the right of X-Forwarded-For
    (entries to its left were written by the client and prove nothing); else, or without the header, the peer.
    `forwarded`: every X-Forwarded-For line of the request in order, read as one list (RFC 9110 5.3), so that a
    second line the client adds cannot move the proxy's entry."""
    if hops > 0:
        entries = [e.strip() for line in forwarded for e in line.split(",") if e.strip()]
        if len(entries) >= hops:
            return entries[-hops]
    return peer or "unknown"


def forwarded_for(headers) -> list[str]:
    """Every X-Forwarded-For line of a request: from Starlette's Headers, or an ASGI scope's raw header pairs."""
    if hasattr(headers, "getlist"):
        return headers.getlist("x-forwarded-for")
    return [v.decode("latin-1") for k, v in headers if k.lower() == b"x-forwarded-for"]


def scope_client(scope: Mapping, hops: int) -> str:
    """The stored form (client_id) of an ASGI request's client: the one reader of its address for every budget."""
    peer = (scope.get("client") or (None,))[0]
    return client_id(client_address(forwarded_for(scope.get("headers") or []), peer, hops))


def request_client(request, hops: int) -> str:
    """scope_client of a gr.Request or a Starlette Request; one made from plain values (a test's, a pickled
    event's) reads its headers and client the same way."""
    inner = getattr(request, "request", None) or request
    if (scope := getattr(inner, "scope", None)) is not None:
        return scope_client(scope, hops)
    headers = getattr(request, "headers", None) or {}
    lines = (
        forwarded_for(headers)
        if hasattr(headers, "getlist")
        else [v for k, v in dict(headers).items() if k.lower() == "x-forwarded-for"]
    )
    return client_id(client_address(lines, getattr(getattr(request, "client", None), "host", None), hops))


def client_id(address: str) -> str:
    """What is stored of a client (in a job's record): a hash of its address, never the address."""
    return hashlib.sha256(f"sentence-lab\0client\0{address}".encode()).hexdigest()[:16]


def signed_in_client(client: str) -> str:
    """The client a signed-in user's work counts against: its address's, apart from the same address's anonymous
    work, since each has its own cap (service.jobs.TrainLimits)."""
    return SIGNED_IN + client


def is_signed_in_client(client: str) -> bool:
    return client.startswith(SIGNED_IN)


class RateBudget:
    """At most `per_minute` events per key in any 60 s. The table keeps the `keys` most recently seen keys (a key
    pushed out starts afresh: memory stays bounded whatever the number of clients)."""

    def __init__(self, per_minute: int, keys: int = 10_000, window: float = 60.0):
        self.per_minute, self.keys, self.window = per_minute, keys, window
        self.seen: OrderedDict[str, deque] = OrderedDict()
        self.lock = threading.Lock()

    def take(self, key: str, now: float | None = None) -> bool:
        """Count one event for `key`; False (and nothing counted) when its budget for the window is spent."""
        now = time.monotonic() if now is None else now
        with self.lock:
            times = self.seen.setdefault(key, deque())
            self.seen.move_to_end(key)
            while times and now - times[0] >= self.window:
                times.popleft()
            if len(times) >= self.per_minute:
                return False
            times.append(now)
            while len(self.seen) > self.keys:
                self.seen.popitem(last=False)
            return True
