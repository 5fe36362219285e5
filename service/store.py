"""One small store of who owns what, in sqlite (the standard library), beside the models it describes:
$LAB_USER_MODELS/owners.sqlite. It survives restarts and never evicts a live binding.

- bindings: a session (a page, an API client) -> the owner it acts for (service.owners). A binding goes only once
  it has not been used for `idle_days`; a flood of new sessions adds rows, it never pushes one out.
- models: a trained (task, model) -> its owner and the job that installed it. A (task, model) is claimed once:
  another owner's job cannot install there or take it over, whatever its task is named.

The JSON job files (service.jobs) stay the worker's own record of each job and its owner.
"""

import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path

STORE_FILE = "owners.sqlite"
IDLE_DAYS = 30.0  # a binding unused this long goes (a visitor back after a month starts afresh)
TOUCH_EVERY = 600.0  # seconds: a binding's last use is written at most this often
CACHE_SIZE = 4096  # bindings read recently, kept in memory: a cache only, a miss asks the store

SCHEMA = """
CREATE TABLE IF NOT EXISTS bindings (session TEXT PRIMARY KEY, owner TEXT NOT NULL, used REAL NOT NULL);
CREATE TABLE IF NOT EXISTS models (
    task TEXT NOT NULL, model TEXT NOT NULL, owner TEXT NOT NULL, job TEXT NOT NULL, PRIMARY KEY (task, model)
);
"""


class Store:
    def __init__(self, path: str | Path, idle_days: float = IDLE_DAYS):
        self.path, self.idle_seconds = Path(path), idle_days * 86400
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # one connection shared by the app's threads, each statement under the lock; other processes (a worker
        # installing a model) open their own and wait up to 10 s for a write lock
        self.db = sqlite3.connect(self.path, timeout=10, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)
        self.lock = threading.Lock()
        self.cache: OrderedDict[str, tuple[str, float]] = OrderedDict()  # session -> (owner, last use written)

    # -- bindings ------------------------------------------------------------------------------------
    def bind(self, session: str, owner: str) -> None:
        now = time.time()
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO bindings VALUES (?, ?, ?)", (session, owner, now))
            self._remember(session, owner, now)

    def owner_of(self, session: str) -> str | None:
        """The owner `session` is bound to, or None; a use refreshes the binding's age (written now and then)."""
        now = time.time()
        with self.lock:
            hit = self.cache.get(session)
            if hit is None:
                row = self.db.execute("SELECT owner, used FROM bindings WHERE session = ?", (session,)).fetchone()
                if row is None or now - row[1] > self.idle_seconds:
                    return None
                hit = (row[0], row[1])
            if now - hit[1] > TOUCH_EVERY:
                self.db.execute("UPDATE bindings SET used = ? WHERE session = ?", (now, session))
                hit = (hit[0], now)
            self._remember(session, *hit)
            return hit[0]

    def forget_idle(self, now: float | None = None) -> int:
        """Remove the bindings unused for idle_days; how many went."""
        cutoff = (time.time() if now is None else now) - self.idle_seconds
        with self.lock:
            gone = self.db.execute("DELETE FROM bindings WHERE used < ?", (cutoff,)).rowcount
            self.cache.clear()
        return gone

    def bindings(self) -> int:
        with self.lock:
            return self.db.execute("SELECT COUNT(*) FROM bindings").fetchone()[0]

    def _remember(self, session: str, owner: str, used: float) -> None:
        self.cache[session] = (owner, used)
        self.cache.move_to_end(session)
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)

    # -- models --------------------------------------------------------------------------------------
    def claim_model(self, task: str, model: str, owner: str, job: str) -> bool:
        """Claim (task, model) for `owner`'s `job`: True when it was free or is the owner's already (a later job
        of the same owner replaces its model), False when another owner holds it."""
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                row = self.db.execute("SELECT owner FROM models WHERE task = ? AND model = ?", (task, model)).fetchone()
                if row is not None and row[0] != owner:
                    return False
                self.db.execute("INSERT OR REPLACE INTO models VALUES (?, ?, ?, ?)", (task, model, owner, job))
                return True
            finally:
                self.db.execute("COMMIT")

    def model_owner(self, task: str, model: str) -> str | None:
        with self.lock:
            row = self.db.execute("SELECT owner FROM models WHERE task = ? AND model = ?", (task, model)).fetchone()
        return None if row is None else row[0]

    def release_model(self, task: str, model: str) -> None:
        """The model's folder was removed (service.cleanup): its (task, model) is free again."""
        with self.lock:
            self.db.execute("DELETE FROM models WHERE task = ? AND model = ?", (task, model))

    def close(self) -> None:
        with self.lock:
            self.db.close()


def open_store(root: str | Path) -> Store:
    return Store(Path(root) / STORE_FILE)
