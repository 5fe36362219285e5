"""The app's CPU per REST request, A/B between two trees in one run: `make app-cpu` (BEFORE=<git ref>).

    python -m tools.bench.app_cpu --before main --calls 200
    python -m tools.bench.app_cpu --before . --before-env LAB_MODEL_CONCURRENCY=16 \
        --after-env LAB_MODEL_CONCURRENCY=2 --clients 8 --out /tmp/queue.json     # two settings of this tree

Both trees' app.py run at once (the "before" tree extracted from git into a temporary folder; both serve this
tree's checkpoints/), each on its own port. After a warm-up, one client sends REST calls as curl makes them
(POST /gradio_api/call/<api>, then the answer's event stream; each call a new session), in blocks of `--block`
calls, the sides taking turns block by block (the first side alternating), so that both see the same machine
load. Each block's cost is the CPU time of the serving side (its process and children, from /proc) over the
block. Calls: /predict with `--model`, and /compare, each with distinct sentences (every call a new text: what
the models must run for), with distinct sentences through Gradio's queue as a browser's page sends them
("queued": join, then the session's stream), and with one sentence repeated (what an identical request costs:
answered from the kept answers where the tree has them), and page loads (the page, its config and its load events, as
tools.bench.loadtest.page_load makes them: what a visit costs before its first request). With `--clients N` each
block's calls go N at a time (a crowd rather than one visitor); each call's latency is kept too. Writes
reports/app_cpu.json and prints a table; the load average is read before and after.
"""

import argparse
import asyncio
import functools
import itertools
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import aiohttp
import httpx

from core.data import PROJECT_ROOT
from tools.bench.hall import Hall
from tools.bench.loadtest import Result, cpu_seconds, page_load, rest_call, wait_until_up
from tools.bench.machine import machine_info
from tools.processes import free_port, stop_process

OUT = PROJECT_ROOT / "reports" / "app_cpu.json"
# distinct short sentences (6-8 words): every call of a run a new text
SUBJECTS = ["The film", "The plot", "The acting", "The music", "The ending", "The story", "The cast", "The script"]
VERDICTS = ["good", "bad", "dull", "moving", "funny", "slow", "great", "weak", "sweet", "clever"]
HEDGES = ["is not", "is", "is rarely", "is never", "is always"]
ENDINGS = ["I think.", "really.", "overall.", "at times."]
REPEATED = "It is not a bad film at all."


def _cpu_seconds(pid: int) -> float:
    """The app's CPU seconds so far; an app that is gone ends the run."""
    seconds = cpu_seconds(pid)
    if seconds is None:
        raise RuntimeError(f"the app (pid {pid}) is gone")
    return seconds


def distinct_texts():
    for ending, hedge, verdict, subject in itertools.product(ENDINGS, HEDGES, VERDICTS, SUBJECTS):
        yield f"{subject} {hedge} {verdict}, {ending}"


def extract(ref: str, folder: Path) -> Path:
    """The tree at git `ref` (without its checkpoints) in `folder`."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref, "--", ".", ":(exclude)checkpoints"],
        cwd=PROJECT_ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tempfile.TemporaryFile() as tar:
        tar.write(archive)
        tar.seek(0)
        tarfile.open(fileobj=tar).extractall(folder, filter="data")
    return folder


def serve(root: Path, log_path: Path, env: dict) -> tuple[subprocess.Popen, str]:
    port = free_port()
    environment = {
        **os.environ,
        **env,
        "LAB_CHECKPOINTS": str(PROJECT_ROOT / "checkpoints"),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "HF_HUB_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    log = open(log_path, "w")  # the app's log, open while it runs
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=root, env=environment, stdout=log, stderr=subprocess.STDOUT)
    return proc, f"http://127.0.0.1:{port}/"


KINDS = [*itertools.product(("predict", "compare"), ("distinct", "queued", "repeated")), ("page", "load")]
# where each kind's texts start in the run's distinct texts (the repeated kind sends one sentence)
OFFSETS = {("predict", "distinct"): 0, ("compare", "distinct"): 1, ("predict", "queued"): 2, ("compare", "queued"): 3}


def call(http, url: str, api: str, kind: str, text: str, model: str, task: str) -> Result:
    if api == "page":  # a visit: the page, its config, its load events (the text plays no part)
        return page_load(http, url)
    args = (text, model, task, "auto") if api == "predict" else (text, task, "auto")
    if kind == "queued":
        return asyncio.run(queued(hall(url), f"/{api}", args))
    return rest_call(http, url, api, args, 120)


@functools.cache
def hall(url: str) -> Hall:
    """The app's events and parameters as tools.bench.hall's browsers read them, once per app."""
    return Hall.read(url, 120)


async def queued(app: Hall, endpoint: str, args: tuple) -> Result:
    """One call as a browser's page sends it, in a session of its own (tools.bench.hall: join, then the stream)."""
    async with aiohttp.ClientSession() as http:
        return await app.ask(http, os.urandom(8).hex(), endpoint, args)


def measure(args) -> dict:
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="app-cpu-")))
        before = PROJECT_ROOT if args.before == "." else extract(args.before, scratch / "before")
        sides = {}
        for name, root, env in (("before", before, args.before_env), ("after", PROJECT_ROOT, args.after_env)):
            proc, url = serve(root, scratch / f"{name}.log", dict(e.split("=", 1) for e in env))
            stack.callback(stop_process, proc)
            sides[name] = (proc, url)
        http = stack.enter_context(httpx.Client(limits=httpx.Limits(max_connections=2 * args.clients + 2)))
        pool = stack.enter_context(ThreadPoolExecutor(args.clients))
        for name, (proc, url) in sides.items():
            wait_until_up(url, proc, args.start_timeout, scratch / f"{name}.log")
        texts = list(itertools.islice(distinct_texts(), len(OFFSETS) * args.calls + 2 * args.warmup))
        warm, texts = texts[: 2 * args.warmup], texts[2 * args.warmup :]
        for _, url in sides.values():  # both endpoints, both kinds of text, before anything is counted
            for i, text in enumerate(warm):
                for api, kind in KINDS:
                    call(http, url, api, kind, text if i % 2 else REPEATED, args.model, args.task)
        # each app's own warm-up thread (app.py: the models here and in the worker, then the SST trees) runs on for
        # seconds after it serves: its CPU must not land in the first blocks counted
        time.sleep(args.settle)
        cpu = {(s, api, kind): 0.0 for s in sides for api, kind in KINDS}
        results: dict[tuple, list[Result]] = {key: [] for key in cpu}
        load_start, start = os.getloadavg(), time.monotonic()
        for n, first in enumerate(range(0, args.calls, args.block)):
            for api, kind in KINDS:
                offset = OFFSETS.get((api, kind), 0) * args.calls  # each kind's own texts: none other sent
                block = texts[offset + first : offset + min(first + args.block, args.calls)]
                block = [REPEATED] * len(block) if kind == "repeated" else block
                for name in list(sides) if n % 2 == 0 else list(sides)[::-1]:
                    proc, url = sides[name]
                    used = _cpu_seconds(proc.pid)
                    done = pool.map(lambda text: call(http, url, api, kind, text, args.model, args.task), block)
                    results[(name, api, kind)] += list(done)
                    cpu[(name, api, kind)] += _cpu_seconds(proc.pid) - used
        wall = time.monotonic() - start

    def latency(rs: list[Result]) -> dict:
        seconds = sorted(r.seconds for r in rs if not r.error)
        return {
            q: round(seconds[min(len(seconds) - 1, int(f * len(seconds)))], 4) for q, f in (("p50", 0.5), ("p95", 0.95))
        }

    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": machine_info(),
        "command": " ".join(["python -m tools.bench.app_cpu"] + sys.argv[1:]),
        "before": args.before,
        "env": {"before": args.before_env, "after": args.after_env},
        "model": args.model,
        "task": args.task,
        "calls": args.calls,
        "clients": args.clients,
        "load_average_start": load_start,
        "load_average_end": os.getloadavg(),
        "wall_s": round(wall, 1),
        "app_cpu_ms_per_call": {
            f"{s} {api} {kind}": round(1000 * v / args.calls, 2) for (s, api, kind), v in cpu.items()
        },
        "latency_s": {f"{s} {api} {kind}": latency(rs) for (s, api, kind), rs in results.items()},
        "failed": sum(bool(r.error) for rs in results.values() for r in rs),
        "failures": sorted({r.error for rs in results.values() for r in rs if r.error})[:10],
    }


def markdown(r: dict) -> str:
    rows = [
        "| call | app CPU before (ms) | after (ms) | after / before | p50 / p95 before (s) | after (s) |",
        "|---|---|---|---|---|---|",
    ]
    ms, lat = r["app_cpu_ms_per_call"], r["latency_s"]
    for api, kind in KINDS:
        b, a = ms[f"before {api} {kind}"], ms[f"after {api} {kind}"]
        lb, la = lat[f"before {api} {kind}"], lat[f"after {api} {kind}"]
        queue = ", through the queue" if kind == "queued" else ""
        name = "page load" if api == "page" else f"/{api} ({'distinct' if queue else kind} texts{queue})"
        rows.append(
            f"| {name} | {b:.1f} | {a:.1f} | {a / b:.2f} | {lb['p50']} / {lb['p95']} | {la['p50']} / {la['p95']} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.app_cpu", description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="main", help="git ref of the tree to compare with ('.': this tree)")
    parser.add_argument("--before-env", nargs="*", default=[], metavar="KEY=VALUE", help="the before app's settings")
    parser.add_argument("--after-env", nargs="*", default=[], metavar="KEY=VALUE", help="the after app's settings")
    parser.add_argument("--clients", type=int, default=1, help="calls at once (threads), each call a new session")
    parser.add_argument("--calls", type=int, default=200, help="calls per side, endpoint and kind of text")
    parser.add_argument("--block", type=int, default=10, help="calls in a row to one side")
    parser.add_argument("--warmup", type=int, default=10, help="warm-up calls per side, endpoint and kind")
    parser.add_argument("--settle", type=float, default=30.0, help="seconds the apps' own warm-up gets after that")
    parser.add_argument("--model", default="dcnn", help="/predict's model")
    parser.add_argument("--task", default="sst5", help="the task whose sentences are sent")
    parser.add_argument("--start-timeout", type=float, default=180.0, help="seconds to wait for each app to answer")
    parser.add_argument("--out", type=Path, default=OUT, help="the JSON file to write")
    args = parser.parse_args(argv)
    result = measure(args)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(markdown(result))
    print(
        f"machine: {result['machine']['cpu']}, load average {result['load_average_start']} -> "
        f"{result['load_average_end']}; {result['failed']} failed; {args.out}"
    )
    return 1 if result["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
