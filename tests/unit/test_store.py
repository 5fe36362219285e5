"""The owner store (service/store.py) in trouble degrades, never stalls: a write to a locked or full store fails
at once with StoreError (one log line, not one per request) while lookups keep answering; its rows are capped per
client and in total; a store made before the client column is migrated in place."""

import logging
import sqlite3
import threading
import time

import pytest

from service.store import Store, StoreError

FAST = 1.0  # seconds: generous bounds for what should take well under 0.5 s


def elapsed(call, *args):
    start = time.monotonic()
    try:
        return call(*args), time.monotonic() - start
    except StoreError as err:
        return err, time.monotonic() - start


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "owners.sqlite")
    yield store
    store.close()


def test_a_locked_store_refuses_a_write_at_once_and_lookups_do_not_wait(store, caplog):
    store.bind("cached", "owner-a", "client")
    store.bind("uncached", "owner-b", "client")
    store.cache.pop("uncached")
    store.cache["cached"] = ("owner-a", time.time() - 3600)  # its last use due to be written
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    other.execute("INSERT INTO models VALUES ('t', 'm', 'o', 'j')")  # another process, writing
    try:
        with caplog.at_level(logging.WARNING, logger="service.store"):
            failures = [elapsed(store.bind, f"new-{i}", "owner-c", "client") for i in range(3)]
        for failure, seconds in failures:
            assert isinstance(failure, StoreError) and failure.reason == "busy" and seconds < FAST
        assert [(r.message.split(":")[0], r.exc_info) for r in caplog.records] == [("owner store busy", None)]
        # a write waiting in another thread holds no lookup up
        waiting = threading.Thread(target=elapsed, args=(store.bind, "new-x", "owner-c", "client"))
        waiting.start()
        for session, owner in (("cached", "owner-a"), ("uncached", "owner-b"), ("unknown", None)):
            found, seconds = elapsed(store.owner_of, session)
            assert found == owner and seconds < FAST, session
        waiting.join()
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.bind("new-0", "owner-c", "client")  # it writes again once the lock is gone
    assert store.owner_of("new-0") == "owner-c"


def test_a_full_disk_refuses_writes_and_lookups_still_answer(store):
    store.bind("kept", "owner-a", "client")
    store.db.execute(f"PRAGMA max_page_count = {store.db.execute('PRAGMA page_count').fetchone()[0]}")
    with pytest.raises(StoreError) as err:
        for i in range(2000):
            store.bind(f"session-{i:04d}-{'x' * 100}", "owner-b", "client")
    assert err.value.reason == "full"
    store.cache.clear()
    assert store.owner_of("kept") == "owner-a"


def test_each_client_keeps_its_cap_of_bindings_and_the_store_its_total(tmp_path):
    store = Store(tmp_path / "owners.sqlite", rows_per_client=3, max_rows=5)
    store.bind("other-1", "owner-o", "other")
    for i in range(5):
        store.bind(f"flood-{i}", "owner-f", "flooder")
    # one address's flood replaced its own least recently used bindings, nobody else's
    assert [store.owner_of(f"flood-{i}") for i in range(5)] == [None, None, "owner-f", "owner-f", "owner-f"]
    assert store.owner_of("other-1") == "owner-o" and store.bindings() == 4
    store.bind("other-2", "owner-o", "other")
    with pytest.raises(StoreError) as err:  # the store is full of live bindings: a new one is refused
        store.bind("third-1", "owner-t", "third")
    assert err.value.reason == "full" and store.bindings() == 5
    store.bind("other-2", "owner-p", "other")  # a binding already there is rebound in place
    assert store.owner_of("other-2") == "owner-p"
    store.db.execute("UPDATE bindings SET used = 0 WHERE session = 'flood-2'")  # idle for decades
    store.bind("third-1", "owner-t", "third")  # the idle one made room
    assert store.owner_of("third-1") == "owner-t" and store.bindings() == 5
    store.close()


def test_a_store_made_before_the_client_column_is_migrated_in_place(tmp_path):
    path = tmp_path / "owners.sqlite"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE bindings (session TEXT PRIMARY KEY, owner TEXT NOT NULL, used REAL NOT NULL)")
    old.execute("INSERT INTO bindings VALUES ('old-session', 'owner-a', ?)", (time.time(),))
    old.commit()
    old.close()
    store = Store(path)
    assert store.owner_of("old-session") == "owner-a"
    store.bind("new-session", "owner-b", "client")
    assert store.db.execute("SELECT client FROM bindings ORDER BY session").fetchall() == [("client",), ("",)]
    store.close()
