"""A/B of `Lab.compare` between two checkouts in one run: two warm worker processes, one per tree, called in strict
alternation over a pipe, so that both see the same machine load.

    python -m tools.bench.ab --before ../old-checkout --after . --calls 600
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import IO

TEXTS = [
    "It is not a bad film, but the plot is dull.",
    "The acting is great, but the plot is not good.",
    "a thoroughly engaging , surprisingly touching british comedy .",
    "这部电影不怎么好看，但是演员很棒",
    "not nearly as good as the first film",
    "I loved every minute of it",
]


def worker(root: str) -> None:
    """One tree's side: load its Lab from its own checkpoints, answer each line with one compare's milliseconds."""
    sys.path.insert(0, root)
    os.chdir(root)
    import torch

    torch.set_num_threads(1)
    from core.predict import Lab

    lab = Lab.load(os.path.join(root, "checkpoints"))
    for text in TEXTS:
        lab.compare(text)
    print("ready", flush=True)
    for line in sys.stdin:
        start = time.perf_counter()
        lab.compare(TEXTS[int(line) % len(TEXTS)])
        print(f"{(time.perf_counter() - start) * 1000:.3f}", flush=True)


def _pipes(proc: subprocess.Popen[str]) -> tuple[IO[str], IO[str]]:
    """A worker's stdin and stdout (both opened as pipes)."""
    if proc.stdin is None or proc.stdout is None:
        raise RuntimeError("a side started without its pipes")
    return proc.stdin, proc.stdout


def run(before: str, after: str, calls: int) -> dict[str, list[float]]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    sides = {
        name: subprocess.Popen(
            [sys.executable, "-m", "tools.bench.ab", "--worker", os.path.abspath(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
        )
        for name, root in (("before", before), ("after", after))
    }
    pipes = {name: _pipes(side) for name, side in sides.items()}
    try:
        for _, stdout in pipes.values():
            if stdout.readline().strip() != "ready":
                raise RuntimeError("a side failed to load its Lab")
        times: dict[str, list[float]] = {name: [] for name in sides}
        for i in range(calls):
            for name in ("before", "after") if i % 2 == 0 else ("after", "before"):
                stdin, stdout = pipes[name]
                stdin.write(f"{i}\n")
                stdin.flush()
                times[name].append(float(stdout.readline()))
        return times
    finally:
        for name, side in sides.items():
            pipes[name][0].close()
            side.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="the checkout (folder) to compare against")
    parser.add_argument(
        "--after", default=".", help="the checkout (folder) measured against --before (default: this one)"
    )
    parser.add_argument("--calls", type=int, default=600, help="Lab.compare calls per side")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    if not args.before:
        parser.error("--before is required")
    times = run(args.before, args.after, args.calls)
    for name, values in times.items():
        ordered = sorted(values)
        print(
            f"{name}: n={len(values)} p50 {statistics.median(values):.2f} ms, mean {statistics.mean(values):.2f}, "
            f"p90 {ordered[9 * len(ordered) // 10]:.2f}"
        )
    print(f"after/before p50 {statistics.median(times['after']) / statistics.median(times['before']):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
