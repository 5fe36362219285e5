"""Timing helpers: repeated calls within a time budget, percentiles, and the growth exponent of a curve."""

import math
import statistics
import time


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]."""
    s = sorted(values)
    k = (len(s) - 1) * q / 100
    lo = math.floor(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def time_calls(fn, reps: int, budget_s: float, warmup: int = 2, min_reps: int = 3) -> list[float]:
    """Seconds per call of fn(i) for i = 0..reps-1, stopping early once `budget_s` is spent."""
    for i in range(warmup):
        fn(i)
    times, start = [], time.perf_counter()
    for i in range(reps):
        t0 = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget_s and len(times) >= min_reps:
            break
    return times


def growth_exponent(lengths: list[float], seconds: list[float], from_length: int = 50) -> float | None:
    """Least-squares slope of log(seconds) on log(length) over lengths >= from_length (k in t ~ L^k)."""
    points = [(math.log(x), math.log(y)) for x, y in zip(lengths, seconds) if x >= from_length and y > 0]
    if len(points) < 2:
        return None
    mx, my = statistics.fmean(p[0] for p in points), statistics.fmean(p[1] for p in points)
    var = sum((p[0] - mx) ** 2 for p in points)
    return sum((p[0] - mx) * (p[1] - my) for p in points) / var if var else None


def summary(times: list[float]) -> dict:
    ms = [1000 * t for t in times]
    return {
        "p50_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "mean_ms": statistics.fmean(ms),
        "reps": len(ms),
    }
