"""What one client and the whole Space may use, beyond one owner's quotas (service.jobs.TrainLimits): a
visitor costs nothing to create, so budgets also hold per client address and for the Space as a whole.

- Who may write: on a Space (SPACE_ID set) training and the other work that writes to disk or holds the long
  lane need a signed-in Hugging Face user (LAB_SIGN_IN=required); off a Space anonymous keys may (optional).
  Every number here comes from service.settings (SpacePolicy.from_settings).
- A client is its network address: the peer's, or behind `forwarded_hops` proxies that append to
  X-Forwarded-For (a Space's: 1) the address the outermost trusted proxy saw. Only a hash of it is stored.
- RateBudget: at most `per_minute` events per client in any minute (new owner bindings, uploads).
- The upload cache has a total cap (demo/limits.py refuses an upload once it is full).
"""

import hashlib
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass

from service.settings import DEFAULTS, Settings


@dataclass(frozen=True)
class SpacePolicy:
    """What service.settings says of a public Space, as the front end's gates use it (off a Space by default)."""

    sign_in: bool = False  # writing work needs a signed-in Hugging Face user
    forwarded_hops: int = 0  # proxies in front of the app that append the client's address to X-Forwarded-For
    upload_cache_mb: float = DEFAULTS.upload_cache_mb
    uploads_per_minute: int = DEFAULTS.uploads_per_minute
    binds_per_minute: int = DEFAULTS.binds_per_minute

    @classmethod
    def from_settings(cls, settings: Settings) -> "SpacePolicy":
        return cls(
            settings.requires_sign_in,
            settings.hops,
            settings.upload_cache_mb,
            settings.uploads_per_minute,
            settings.binds_per_minute,
        )


def client_address(headers: Mapping[str, str], peer: str | None, hops: int) -> str:
    """The client's address: with `hops` trusted proxies, the hops-th entry from the right of X-Forwarded-For
    (entries to its left were written by the client and prove nothing); else, or without the header, the peer."""
    if hops > 0:
        entries = [e.strip() for e in (headers.get("x-forwarded-for") or "").split(",") if e.strip()]
        if len(entries) >= hops:
            return entries[-hops]
    return peer or "unknown"


def request_client(headers: Mapping[str, str], peer: str | None, hops: int) -> str:
    """The stored form of a request's client: client_id of its client_address."""
    return client_id(client_address(headers, peer, hops))


def client_id(address: str) -> str:
    """What is stored of a client (in a job's record): a hash of its address, never the address."""
    return hashlib.sha256(f"sentence-lab\0client\0{address}".encode()).hexdigest()[:16]


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
