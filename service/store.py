"""One small store of who owns what, in sqlite (the standard library), beside the models it describes:
$LAB_USER_MODELS/owners.sqlite. It survives restarts.

- bindings: a session (a page, an API client) -> the owner it acts for (service.owners), with the client
  (service.budgets.client_id) that made it. A binding goes once it has not been used for `idle_days`; each
  client keeps at most `rows_per_client` (past it, that client's least recently used goes: one address's flood
  replaces its own bindings, nobody else's), and the store at most `max_rows` (past it, the idle ones go, then
  new bindings are refused: StoreError).
- models: a trained (task, model) -> its owner and the job that installed it. A (task, model) is claimed once:
  another owner's job cannot install there or take it over, whatever its task is named.

A store in trouble degrades, never stalls: a write waits at most WRITE_WAIT for another process's lock, and one
that fails (locked, disk full, read-only) raises StoreError, logged once until a write works again. Lookups have
their own connection and lock (WAL lets them read while another connection writes) and never wait on a write;
refreshing a binding's last use is best effort. The JSON job files (service.jobs) stay the worker's own record of
each job and its owner.
"""

import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path

from service.settings import DEFAULTS

log = logging.getLogger(__name__)

STORE_FILE = "owners.sqlite"
STORE_FILES = (STORE_FILE, f"{STORE_FILE}-wal", f"{STORE_FILE}-shm")  # the store and sqlite's files beside it
IDLE_DAYS = 30.0  # a binding unused this long goes (a visitor back after a month starts afresh)
TOUCH_EVERY = 600.0  # seconds: a binding's last use is written at most this often
CACHE_SIZE = 4096  # bindings read recently, kept in memory: a cache only, a miss asks the store
WRITE_WAIT = 0.25  # seconds a write waits for another connection's lock before it fails (StoreError)

SCHEMA = """
CREATE TABLE IF NOT EXISTS bindings (
    session TEXT PRIMARY KEY, owner TEXT NOT NULL, used REAL NOT NULL, client TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS models (
    task TEXT NOT NULL, model TEXT NOT NULL, owner TEXT NOT NULL, job TEXT NOT NULL, PRIMARY KEY (task, model)
);
"""
INDEX = "CREATE INDEX IF NOT EXISTS bindings_by_client ON bindings (client, used)"


class StoreError(Exception):
    """The store cannot write now: `reason` is "busy" (another process holds its lock) or "full" (the disk, a
    read-only file system, or the store's own row cap)."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"owner store {reason}: {detail}" if detail else f"owner store {reason}")
        self.reason = reason


class Store:
    def __init__(
        self,
        path: str | Path,
        idle_days: float = IDLE_DAYS,
        rows_per_client: int = DEFAULTS.store_rows_per_client,
        max_rows: int = DEFAULTS.store_max_rows,
    ):
        self.path, self.idle_seconds = Path(path), idle_days * 86400
        self.rows_per_client, self.max_rows = rows_per_client, max_rows
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # writes: one connection under `lock`, waiting WRITE_WAIT at most for another process's lock; lookups:
        # their own connection and lock, so a write that waits holds no lookup up
        self.db = _connect(self.path, WRITE_WAIT)
        self.reader = _connect(self.path, 0)
        self.lock, self.read_lock, self.cache_lock = threading.Lock(), threading.Lock(), threading.Lock()
        self.cache: OrderedDict[str, tuple[str, float]] = OrderedDict()  # session -> (owner, last use written)
        self.failing = False  # the last write failed (logged once)
        try:
            self._write(self._create)
        except StoreError:  # a full or read-only disk at start: lookups of an existing store still answer
            pass

    def _create(self) -> None:
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)
        if "client" not in {row[1] for row in self.db.execute("PRAGMA table_info(bindings)")}:
            self.db.execute("ALTER TABLE bindings ADD COLUMN client TEXT NOT NULL DEFAULT ''")  # a store made before
        self.db.execute(INDEX)

    def _write(self, work):
        """work() on the write connection, under its lock; StoreError when sqlite cannot write now."""
        with self.lock:
            try:
                result = work()
            except (sqlite3.Error, StoreError) as err:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                failure = err if isinstance(err, StoreError) else StoreError(_reason(err), str(err))
                if not self.failing:  # one line while it lasts, not a traceback per request
                    log.warning("%s; writing work is refused until it writes again (%s)", failure, self.path)
                    self.failing = True
                raise failure from None
        if self.failing:
            log.info("owner store %s writes again", self.path)
            self.failing = False
        return result

    # -- bindings ------------------------------------------------------------------------------------
    def bind(self, session: str, owner: str, client: str = "") -> None:
        """Bind `session` to `owner` for `client`; StoreError when the store cannot write or is full."""
        now = time.time()

        def insert() -> list[str]:
            self.db.execute("BEGIN IMMEDIATE")
            gone = []
            if self.db.execute("SELECT 1 FROM bindings WHERE session = ?", (session,)).fetchone() is None:
                gone = self._make_room(client, now)
            self.db.execute("INSERT OR REPLACE INTO bindings VALUES (?, ?, ?, ?)", (session, owner, now, client))
            self.db.execute("COMMIT")
            return gone

        gone = self._write(insert)
        with self.cache_lock:
            for old in gone:
                self.cache.pop(old, None)
            self._remember(session, owner, now)

    def _make_room(self, client: str, now: float) -> list[str]:
        """Room for one more binding of `client` (inside bind's transaction): the sessions whose bindings went."""
        mine = self.db.execute("SELECT COUNT(*) FROM bindings WHERE client = ?", (client,)).fetchone()[0]
        gone = [
            row[0]
            for row in self.db.execute(
                "DELETE FROM bindings WHERE session IN "
                "(SELECT session FROM bindings WHERE client = ? ORDER BY used LIMIT ?) RETURNING session",
                (client, max(0, mine - self.rows_per_client + 1)),
            )
        ]
        if self.db.execute("SELECT COUNT(*) FROM bindings").fetchone()[0] >= self.max_rows:
            cutoff = now - self.idle_seconds
            gone += [r[0] for r in self.db.execute("DELETE FROM bindings WHERE used < ? RETURNING session", (cutoff,))]
            if self.db.execute("SELECT COUNT(*) FROM bindings").fetchone()[0] >= self.max_rows:
                raise StoreError("full", f"{self.max_rows} bindings")
        return gone

    def owner_of(self, session: str) -> str | None:
        """The owner `session` is bound to, or None (also when the store cannot be read now); a use refreshes the
        binding's age, written now and then when the store can take it at once."""
        now = time.time()
        with self.cache_lock:
            hit = self.cache.get(session)
        if hit is None:
            try:
                with self.read_lock:
                    row = self.reader.execute("SELECT owner, used FROM bindings WHERE session = ?", (session,))
                    row = row.fetchone()
            except sqlite3.Error:
                return None
            if row is None or now - row[1] > self.idle_seconds:
                return None
            hit = (row[0], row[1])
        if now - hit[1] > TOUCH_EVERY and self.lock.acquire(blocking=False):
            try:  # best effort: skipped while another thread writes, never waits for another process
                self.db.execute("PRAGMA busy_timeout = 0")
                self.db.execute("UPDATE bindings SET used = ? WHERE session = ?", (now, session))
                hit = (hit[0], now)
            except sqlite3.Error:
                pass
            finally:
                self.db.execute(f"PRAGMA busy_timeout = {int(WRITE_WAIT * 1000)}")
                self.lock.release()
        with self.cache_lock:
            self._remember(session, *hit)
        return hit[0]

    def forget_idle(self, now: float | None = None) -> int:
        """Remove the bindings unused for idle_days; how many went."""
        cutoff = (time.time() if now is None else now) - self.idle_seconds
        gone = self._write(lambda: self.db.execute("DELETE FROM bindings WHERE used < ?", (cutoff,)).rowcount)
        with self.cache_lock:
            self.cache.clear()
        return gone

    def bindings(self) -> int:
        with self.read_lock:
            return self.reader.execute("SELECT COUNT(*) FROM bindings").fetchone()[0]

    def _remember(self, session: str, owner: str, used: float) -> None:
        self.cache[session] = (owner, used)
        self.cache.move_to_end(session)
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)

    # -- models --------------------------------------------------------------------------------------
    def claim_model(self, task: str, model: str, owner: str, job: str) -> bool:
        """Claim (task, model) for `owner`'s `job`: True when it was free or is the owner's already (a later job
        of the same owner replaces its model), False when another owner holds it."""

        def claim() -> bool:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                row = self.db.execute("SELECT owner FROM models WHERE task = ? AND model = ?", (task, model)).fetchone()
                if row is not None and row[0] != owner:
                    return False
                self.db.execute("INSERT OR REPLACE INTO models VALUES (?, ?, ?, ?)", (task, model, owner, job))
                return True
            finally:
                self.db.execute("COMMIT")

        return self._write(claim)

    def model_owner(self, task: str, model: str) -> str | None:
        with self.read_lock:
            row = self.reader.execute("SELECT owner FROM models WHERE task = ? AND model = ?", (task, model))
            row = row.fetchone()
        return None if row is None else row[0]

    def release_model(self, task: str, model: str) -> None:
        """The model's folder was removed (service.cleanup): its (task, model) is free again."""
        self._write(lambda: self.db.execute("DELETE FROM models WHERE task = ? AND model = ?", (task, model)))

    def close(self) -> None:
        with self.lock, self.read_lock:
            self.db.close()
            self.reader.close()


def _reason(err: sqlite3.Error) -> str:
    """ "busy" for another connection's lock, else "full" (a full disk, a read-only file system)."""
    code = getattr(err, "sqlite_errorcode", 0) & 0xFF  # the primary code of an extended one
    return "busy" if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) else "full"


def _connect(path: Path, wait: float) -> sqlite3.Connection:
    """A connection the app's threads share (each use under its Store's lock), in autocommit mode."""
    return sqlite3.connect(path, timeout=wait, check_same_thread=False, isolation_level=None)


def open_store(
    root: str | Path, rows_per_client: int = DEFAULTS.store_rows_per_client, max_rows: int = DEFAULTS.store_max_rows
) -> Store:
    return Store(Path(root) / STORE_FILE, rows_per_client=rows_per_client, max_rows=max_rows)
