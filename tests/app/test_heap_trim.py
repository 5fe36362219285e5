"""web.memory.trim_every: free pages between live blocks go back to the system (a heap that glibc alone would
keep, since its top is still in use), and the thread ends when told."""

import threading
import time
from pathlib import Path

import pytest

from web.memory import trim_every


def _rss_mb() -> float:
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc")
def test_freed_pages_between_live_blocks_are_given_back():
    blocks = [bytearray(50_000) for _ in range(6_000)]  # ~300 MB of heap blocks (below the mmap threshold)
    del blocks[::2]  # half of it free, every free block between two live ones
    before, stop = _rss_mb(), threading.Event()
    thread = trim_every(0.05, stop)
    if thread is None:
        pytest.skip("not glibc")
    deadline = time.monotonic() + 10
    while _rss_mb() > before - 100 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _rss_mb() <= before - 100, (before, _rss_mb())
    stop.set()
    thread.join(5)
    assert not thread.is_alive() and len(blocks) == 3_000
