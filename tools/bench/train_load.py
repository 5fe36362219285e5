"""Do predictions stay fast while a model trains? /compare latency with the app idle, then while a
~3-minute training job runs in the Train tab's worker process.

    python -m tools.bench.train_load   # make train-load: writes reports/train_load.json and reports/train_load.md

It starts `app.py` on the bundled checkpoints (user models in a temporary folder), warms it up, times
`--rounds` rounds of `--calls` /compare calls one after the other (idle), submits a training job through
/train (by default DCNN on the 11,987 Chinese takeaway reviews of waimai_10k.csv, with a `--minutes` time
budget), waits until the worker trains, times as many rounds again `--gap` seconds apart, then waits for the
job to end. Target: p95 while training within 30% of p95 idle, compared as the median of the rounds' p95s
(a shared machine's neighbours move one round's p95 by more than that).
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

from gradio_client import handle_file

from core.data import PROJECT_ROOT, data_dir
from tools.bench.loadtest import app_client, percentile, start_app, timed, wait_until_up
from tools.processes import free_port

SENTENCES = [
    "It is not a bad film, but the plot is dull.",
    "The acting is great and the story moving.",
    "这部电影不怎么好看，但是演员很棒",
    "质量很好，物流也快，非常满意",
]


def compare_latencies(client, calls: int) -> list[float]:
    results = [timed(client, (SENTENCES[i % len(SENTENCES)], "auto", "auto"), "/compare", 30) for i in range(calls)]
    failed = [r.error for r in results if r.error]
    if failed:
        raise RuntimeError(f"{len(failed)} /compare calls failed: {failed[0]}")
    return [r.seconds for r in results]


def stats(seconds: list[float]) -> dict:
    p50, p95 = percentile(seconds, 0.5), percentile(seconds, 0.95)
    if p50 is None or p95 is None:
        raise ValueError("no /compare call to summarize")
    return {
        "n": len(seconds),
        "p50_ms": round(1000 * p50, 1),
        "p95_ms": round(1000 * p95, 1),
        "max_ms": round(1000 * max(seconds), 1),
    }


def wait_status(client, job: str, until, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.predict(job, api_name="/train_status")
        if until(status):
            return status
        time.sleep(1)
    raise RuntimeError(f"job {job} still {status['status']} after {timeout:g} s")


def run(args) -> dict:
    port, log_path = free_port(), Path(tempfile.mkdtemp(prefix="train-load-")) / "app.log"
    os.environ["LAB_USER_MODELS"] = str(log_path.parent / "user_models")
    os.environ["LAB_TRAIN_MAX_MINUTES"] = str(max(args.minutes, 15))
    os.environ["LAB_TRAIN_MAX_ROWS"] = "20000"
    with open(log_path, "w") as log:
        app = start_app(Path(args.checkpoints), port, log)
        try:
            url = f"http://127.0.0.1:{port}/"
            wait_until_up(url, app, 120, log_path)
            client = app_client(url)
            compare_latencies(client, 10)  # warm-up
            idle = [compare_latencies(client, args.calls) for _ in range(args.rounds)]
            start = time.monotonic()
            job = client.predict(
                handle_file(str(args.data)), args.model, "", "", 20, args.minutes, "none", api_name="/train"
            )
            # past tokenizing: the worker is in its training steps
            wait_status(client, job, lambda s: s["status"] != "queued" and s["progress"] > 0, 300)
            measured_at, busy = time.monotonic() - start, []
            for _ in range(args.rounds):
                busy.append(compare_latencies(client, args.calls))
                time.sleep(args.gap)
            running = client.predict(job, api_name="/train_status")["status"] == "running"
            done = wait_status(client, job, lambda s: s["status"] not in ("queued", "running"), args.minutes * 60 + 600)
            if not running:
                raise RuntimeError("the job ended before the measurement did: give it a longer --minutes")
            idle_p95, busy_p95 = median([stats(r)["p95_ms"] for r in idle]), median([stats(r)["p95_ms"] for r in busy])
            return {
                "idle": [stats(r) for r in idle],
                "training": [stats(r) for r in busy],
                "idle_p95_ms": idle_p95,
                "training_p95_ms": busy_p95,
                "p95_ratio": round(busy_p95 / idle_p95, 3),
                "job": {
                    "model": args.model,
                    "file": Path(args.data).name,
                    "rows": done["rows"],
                    "status": done["status"],
                    "epochs_run": len(done["history"]),
                    "seconds": round(time.monotonic() - start, 1),
                    "measured_after_seconds": round(measured_at, 1),
                    "test_accuracy": (done["metrics"] or {}).get("test_accuracy"),
                },
                "machine": {
                    "cpus": os.cpu_count(),
                    "load_average_1m": round(os.getloadavg()[0], 2),
                    "python": platform.python_version(),
                },
                "command": "python -m tools.bench.train_load " + " ".join(sys.argv[1:]),
                "date": time.strftime("%Y-%m-%d %H:%M"),
            }
        finally:
            app.terminate()
            app.wait(timeout=30)


def markdown(r: dict) -> str:
    job = r["job"]
    rows = "".join(
        f"| {what} {i} | {s['p50_ms']} | {s['p95_ms']} | {s['max_ms']} |\n"
        for what, key in (("idle", "idle"), ("while training", "training"))
        for i, s in enumerate(r[key], 1)
    )
    return (
        f"# /compare while a model trains\n\n`{r['command'].strip()}` on {r['date']}, {r['machine']['cpus']} CPUs "
        f"(1-minute load average {r['machine']['load_average_1m']} at the end: other work shared the machine).\n\n"
        f"| /compare, {r['idle'][0]['n']} calls one after the other, round | p50 ms | p95 ms | max ms |\n"
        "|---|---|---|---|\n"
        f"{rows}\nMedian p95 of the rounds: idle {r['idle_p95_ms']} ms, while training {r['training_p95_ms']} ms; "
        f"ratio **{r['p95_ratio']:.2f}** (target: at most 1.30).\n\n"
        f"The job: {job['model']} on {job['file']} ({job['rows']} rows), "
        f"{job['epochs_run']} epochs in {job['seconds']} s "
        f"({job['status']}, test accuracy {job['test_accuracy']}); "
        f"the calls were timed from {job['measured_after_seconds']} s "
        "into it, while the worker trained (nice 19, one torch thread).\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.train_load", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--checkpoints", default=str(PROJECT_ROOT / "checkpoints"), help="the checkpoints folder of the app it starts"
    )
    parser.add_argument(
        "--data", default=None, help="the training file (default: waimai_10k.csv of the data directory)"
    )
    parser.add_argument("--model", default="dcnn", help="the model the training job trains")
    parser.add_argument("--minutes", type=float, default=3.0, help="the job's time budget")
    parser.add_argument("--calls", type=int, default=20, help="/compare calls per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of calls, idle and while training")
    parser.add_argument("--gap", type=float, default=15.0, help="seconds between the rounds while training")
    parser.add_argument(
        "--out",
        default=str(PROJECT_ROOT / "reports" / "train_load"),
        help="the report's path without its suffix (.json and .md are written)",
    )
    args = parser.parse_args(argv)
    args.data = args.data or str(data_dir() / "chinese_sentiment" / "waimai_10k.csv")
    result = run(args)
    Path(args.out + ".json").write_text(json.dumps(result, indent=2) + "\n")
    Path(args.out + ".md").write_text(markdown(result))
    print(markdown(result))
    return 0 if result["p95_ratio"] <= 1.3 else 1


if __name__ == "__main__":
    sys.exit(main())
