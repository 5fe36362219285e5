"""A bound on the server's resident memory: glibc's malloc, not Python, torch or Gradio, kept
what long requests had used.

torch's CPU tensors come from glibc malloc, whose mmap threshold starts at 128 KB and rises (up to 32 MB)
each time a mapped block is freed. After the first long request, a long request's large tensors (AdaSent's
pyramid, the prefix and leave-one-out batches: several MB each) came from the heaps of the threads that ran
it; those heaps fragment and were not given back: RSS 716 -> 960-1,016 MB after a few long /compare calls.
A fixed threshold stops the rise: blocks of MMAP_THRESHOLD_BYTES and more are mapped for their tensor and
unmapped with it, while smaller ones still reuse the heap. At 1 MB long requests were about 1.5x slower
(every big tensor faulted in afresh), at 16 MB RSS still reached 850-870 MB; at 4 MB it stays within
~10 MB of the start. Two arenas (instead of up to 8 per core) bound what the model threads' heaps hold.

Smaller blocks still stay: many requests at once (a class of thirty) leave free pages between live blocks
in the heaps, which glibc gives back only from a heap's top. `malloc_trim` gives back every free page; a
thread calls it every TRIM_EVERY_S seconds (a class profile: the app held 1,261 MB after its run, 1,128 MB
after one trim; a trim takes a few ms when little was freed since the last, ~120 ms for 450 MB).
"""

import ctypes
import ctypes.util
import logging
import threading

log = logging.getLogger(__name__)
M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8  # mallopt parameters (glibc malloc.h)
ARENA_MAX = 2
MMAP_THRESHOLD_BYTES = 4 << 20
TRIM_EVERY_S = 10.0


def _glibc():
    """glibc's malloc functions, or None off glibc (musl, macOS), where there is nothing to set."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except (OSError, TypeError):
        return None


def bound_malloc() -> bool:
    """Two arenas and a fixed mmap threshold for the allocations to come, and a trim every TRIM_EVERY_S; True
    where glibc took them, False off glibc. Call it before the model threads first allocate: an arena, once made,
    stays."""
    if (libc := _glibc()) is None:
        return False
    trim_every()
    if libc.mallopt(M_ARENA_MAX, ARENA_MAX) != 1 or libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) != 1:
        log.warning("mallopt refused the arena or mmap limits: resident memory may grow after long requests")
        return False
    return True


def trim_every(seconds: float = TRIM_EVERY_S, stop: threading.Event | None = None) -> threading.Thread | None:
    """A daemon thread that gives the heaps' free pages back to the system every `seconds` until `stop` is set;
    None off glibc."""
    if (libc := _glibc()) is None:
        return None
    stop = stop or threading.Event()

    def run() -> None:
        while not stop.wait(seconds):
            libc.malloc_trim(0)

    thread = threading.Thread(target=run, daemon=True, name="malloc-trim")
    thread.start()
    return thread
