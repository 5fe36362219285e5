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
"""

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)
M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8  # mallopt parameters (glibc malloc.h)
ARENA_MAX = 2
MMAP_THRESHOLD_BYTES = 4 << 20


def bound_malloc() -> bool:
    """Two arenas and a fixed mmap threshold for the allocations to come; True where glibc took them,
    False off glibc (musl, macOS), where there is nothing to set. Call it before the model threads
    first allocate: an arena, once made, stays."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    if mallopt(M_ARENA_MAX, ARENA_MAX) != 1 or mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) != 1:
        log.warning("mallopt refused the arena or mmap limits: resident memory may grow after long requests")
        return False
    return True
