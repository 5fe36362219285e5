"""Load test of the Gradio app: many gradio_client clients at once, then a burst beyond the queue's limit;
or a soak: many mixed requests with the server's resident memory sampled over time.

    python -m tools.bench.loadtest                    # make loadtest: the bundled checkpoints/
    python -m tools.bench.loadtest --profile mixed    # make loadtest PROFILE=mixed: 10% long inputs
    python -m tools.bench.loadtest --soak 5000        # make soak: 5,000 mixed requests, RSS over time
    python -m tools.bench.loadtest --soak-minutes 20  # make soak SOAK_MINUTES=20: bounded by time
    python -m tools.bench.loadtest --checkpoints DIR --clients 8 --requests 5
    python -m tools.bench.loadtest --profile class    # make loadtest PROFILE=class: a class of 30, 10 minutes
    python -m tools.bench.loadtest --profile hall     # make loadtest PROFILE=hall: a lecture hall of 300
    python -m tools.bench.loadtest --sessions 1200    # make sessions: 1,200 REST /compare calls, each a new session

It starts `app.py` as a separate process on 127.0.0.1 (LAB_CHECKPOINTS=DIR, a free port; or, called as
`main(argv, app)`, runs on the app a caller started with `started_app`, so that several runs share one), then:
1. warm-up: every (task, model) once through /predict, every task through /compare, then `--warmup`
   requests per client with all clients at once (the server's worker threads and allocator arenas fill
   up); the server's resident memory (VmRSS of /proc/<pid>/status, with its model worker process) is
   read after it;
2. the run: `--clients` threads, each with its own gradio_client.Client, start together (a barrier) and
   send `--requests` requests each, one after the other: /predict with a random model, or (with
   probability `--compare-share`) /compare, on English and Chinese sentences. A request that raises, times
   out or returns a malformed answer is a failure. Latency is measured per request, submit to result.
   The mixed profile makes `--long-share` (10%) of the requests long: the longest text the caps allow
   (MAX_CHARS characters, far past MAX_WORDS words), English or Chinese; latency is then reported for
   short and long requests apart, and the p95 target applies to the short ones;
3. resident memory again, after the run;
4. a burst beyond the queue: `--burst` /compare requests submitted at once. Each must end within
   `--request-timeout` as a prediction or as gradio's "Queue is full" error; anything else is a
   failure, and no answer in time is a hang.
Everything is bounded: each request by `--request-timeout`, the run by `--max-seconds`; the app is
stopped at the end. The figures go to reports/loadtest.json and a markdown table is printed. Targets
0 failed requests, p95 <= 1 s, memory after the run within 10% of after the warm-up, a clear
"busy" answer beyond the queue and no hang. The exit status is 0 when every target is met, 1 when one
is missed, 2 when the test could not run.

The soak (`--soak N`, `--soak-minutes M`) warms up as above with the mixed profile, then sends N mixed
requests (or as many as M minutes allow) from `--clients` clients while a thread reads the server's
resident memory every `--rss-every` seconds; after the last request, and a second's rest, a last sample.
Target: 0 failed requests, RSS at the end <= 1.1 x RSS after the warm-up.

The class profile (`--profile class`) is a class sharing the Space: `--class-visitors` (30) visitors
for `--class-minutes` (10); each visit is a new session (a new gradio_client Client) of `--visit-requests`
requests, a mix of /predict, /compare, page loads (the page, its config and its load events through the
queue, as a browser sends them), /treebank and /probes, with a visitor's think time between them; `--trainers`
(3) of the visitors train small CSV files of their own at once (/train, /train_status every 2 s, then /predict
with the new task). The server's RSS is sampled over time, in all and per process (the app, its model
worker, a training worker); the app process's own CPU per request is read over the run (what held its GIL,
whatever the machine's load); Gradio's waiting events (`/queue/status`) every QUEUE_EVERY s, against the queue's
bound; the disk of the user models and Gradio's cache (both in a temporary folder) is read at the end.
Targets: 0 failed requests, short-request p95 <= 1 s (/probes and /train have their own budgets), RSS at the end
<= 1.15 x after the warm-up, disk <= `--max-disk-mb`.

The hall profile (`--profile hall`) is the class at a lecture's scale: 300 visitors (10 of them training) with 3
to 10 s between a visitor's requests, mostly /predict and /compare (HALL_MIX), half of those on a sentence of
the visitor's own (hardly ever two alike), the others on the Lab's example sentences. Its visitors who do not
train are browsers (tools.bench.hall: the page, its heartbeat, events through Gradio's queue, from one asyncio loop), a
visit lasting until the mix draws a page load; the load generator's own CPU is reported beside the app's.

Fresh sessions (`--sessions N`): N requests, each in a session of its own (a raw REST call naming no
session, or with `--session-kind client` a new gradio_client Client), RSS read after every `--session-step`;
target: RSS after the last step <= 1.15 x after the first.

reports/loadtest.json holds the last plain run at its top level (the format `make bench` quotes), the last
mixed run under "mixed", the last soak under "soak", the last class under "class" (and the hall under "hall"; with
LAB_SERVE_BACKEND=ray under "class_ray_serve", "hall_ray_serve") and the last fresh-session run of each kind under
"sessions"; each run replaces only its own part.
"""

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import math
import os
import random
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from core.data import PROJECT_ROOT
from core.text import MAX_CHARS
from service.settings import Settings
from tools.bench.load_results import LONG_ENDPOINTS, Result, check_answer, error_line
from tools.processes import free_port, stop_process

log = logging.getLogger("tools.bench.loadtest")
SENTENCES = {
    "en": [
        "It is not a bad film at all.",
        "The acting is great, but the plot is dull.",
        "The movie is not nearly as good as the book.",
        "A moving, funny and beautifully made film.",
        "Though the plot is predictable, the movie never feels formulaic.",
    ],
    "zh": ["这部电影不怎么好看，但是演员很棒", "质量一点也不好，再也不买了", "物流非常快，东西特别好", "不能说不好用"],
}
# the longest texts the caps allow: MAX_CHARS characters (the predictor then keeps the first MAX_WORDS words)
LONG_TEXTS = {
    lang: " ".join(itertools.islice(itertools.cycle(sentences), 1000))[:MAX_CHARS]
    for lang, sentences in SENTENCES.items()
}
BURST_TEXT = (
    "The acting is great, but the plot is dull and the ending is not nearly as moving as the book . " * 2
).strip()


class LoadTestError(Exception):
    """The load test could not run (no checkpoints, the app did not start); the message says why."""


@dataclass
class Report:
    clients: int
    requests_per_client: int
    checkpoints: str
    pairs: int  # (task, model) checkpoints the app serves
    results: list[Result] = field(default_factory=list)
    burst: list[Result] = field(default_factory=list)
    rss_mb: dict = field(default_factory=dict)
    wall_s: float = 0.0
    cpu_s: dict = field(default_factory=dict)  # CPU seconds spent during the run by the server and by the clients


def checkpoint_pairs(root: Path) -> dict[str, tuple[str, list[str]]]:
    """{task: (language, [model, ...])} from <root>/<task>/<model>/config.json."""
    tasks: dict[str, tuple[str, list[str]]] = {}
    for config in sorted(root.glob("*/*/config.json")):
        try:
            lang = json.loads(config.read_text(encoding="utf-8")).get("lang", "en")
        except (OSError, ValueError, AttributeError):
            continue  # the app reports a broken checkpoint itself
        tasks.setdefault(config.parent.parent.name, (lang, []))[1].append(config.parent.name)
    return tasks


def process_tree(pid: int) -> list[int]:
    """`pid` and every process below it (the app's model worker, web/runner.py)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # ended while we looked
    tree = [pid]
    for member in tree:
        tree += [child for child, parent in parents.items() if parent == member]
    return tree


QUEUE_EVERY = 0.5  # seconds between two reads of Gradio's queue in the class and hall profiles
# what a process below the app is, by a word of its name or command line (anything else: "app"); a worker forked by
# the fork server (service.processes) is named after its module and has the server's command line
ROLES = {"service.serving": "model worker", "service.jobs": "training", "service.processes": "fork server"}


def role(pid: int) -> str:
    """The ROLES name of the process `pid` (OSError once it has ended)."""
    words = Path(f"/proc/{pid}/comm").read_bytes() + Path(f"/proc/{pid}/cmdline").read_bytes()
    return next((r for word, r in ROLES.items() if word.encode() in words), "app")


def rss_by_role(pid: int) -> dict[str, float]:
    """Resident memory (VmRSS of /proc/<pid>/status, MB) of the app `pid` and of its children, summed by ROLES:
    the app, its model worker and a training worker come and go on their own."""
    by_role: dict[str, float] = {}
    for member in process_tree(pid):
        try:
            member_role, status = role(member), Path(f"/proc/{member}/status").read_text().splitlines()
        except OSError:
            continue  # ended while we looked
        for line in status:
            if line.startswith("VmRSS:"):
                by_role[member_role] = by_role.get(member_role, 0.0) + int(line.split()[1]) / 1024
    return by_role


def rss_mb(pid: int) -> float | None:
    """Resident memory of the app: the process `pid` and its children."""
    return sum(by_role.values()) if (by_role := rss_by_role(pid)) else None


def cpu_seconds(pid: int, children: bool = True) -> float | None:
    """User + system CPU time of the app so far: the process `pid` and every live process below it (/proc/<pid>/stat
    fields 14 and 15), and the children each has reaped (fields 16 and 17: a replaced model worker, reaped by the
    fork server); with `children` False, the app's own alone (what holds its GIL)."""
    total = None
    for member in process_tree(pid) if children else [pid]:
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            reaped = int(fields[13]) + int(fields[14]) if children else 0
            ticks = int(fields[11]) + int(fields[12]) + reaped
            total = (total or 0.0) + ticks / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            if member == pid:
                return None
    return total


def app_client(url: str, ssl_context: ssl.SSLContext | None = None):
    """A gradio_client.Client for the app at `url`. gradio_client opens a new httpx client for every
    request, and each one builds an SSL context from the CA bundle (about 70 ms of CPU, more than the
    app spends on a request) even for plain http; so we build one context and pass it to every client
    (`ssl_verify` goes to httpx's `verify`, which takes a context: https is still verified)."""
    from gradio_client import Client

    return Client(url, verbose=False, analytics_enabled=False, ssl_verify=ssl_context or ssl.create_default_context())


def start_app(checkpoints: Path, port: int, log_file) -> subprocess.Popen:
    env = dict(
        os.environ,
        LAB_CHECKPOINTS=str(checkpoints),
        GRADIO_SERVER_NAME="127.0.0.1",
        GRADIO_SERVER_PORT=str(port),
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    return subprocess.Popen(
        [sys.executable, str(PROJECT_ROOT / "app.py")],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )


def wait_until_up(url: str, proc: subprocess.Popen, timeout: float, log_path: Path) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    # one client for every poll: httpx.get builds a client, and its SSL context (~70 ms of CPU), on each call
    with httpx.Client(timeout=2) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                raise LoadTestError(f"app.py exited with status {proc.returncode} before serving:\n{tail}")
            try:
                if http.get(url).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
    raise LoadTestError(f"app.py did not answer on {url} within {timeout:g} s (log: {log_path})")


def timed(client, args: tuple, api_name: str, timeout: float, long: bool = False) -> Result:
    """One request, submit to result; the answer must be well formed (check_answer)."""
    start = time.perf_counter()
    try:
        check_answer(api_name, client.submit(*args, api_name=api_name).result(timeout=timeout))
        error = ""
    except Exception as err:  # every failure is counted and reported, none stops the run
        error = error_line(err)
    return Result(api_name, time.perf_counter() - start, error, long)


def planned_request(
    rng: random.Random, tasks: dict[str, tuple[str, list[str]]], compare_share: float, long_share: float
) -> tuple[tuple, str, bool]:
    """(arguments, endpoint, long): a random task, a sentence of its language (or, with probability
    `long_share`, its long text), /predict with a random model or /compare."""
    task = rng.choice(sorted(tasks))
    lang, models = tasks[task]
    long = rng.random() < long_share
    text = LONG_TEXTS.get(lang, LONG_TEXTS["en"]) if long else rng.choice(SENTENCES.get(lang, SENTENCES["en"]))
    if rng.random() < compare_share:
        return (text, task, "auto"), "/compare", long
    return (text, rng.choice(models), task, "auto"), "/predict", long


def request_plan(
    tasks: dict[str, tuple[str, list[str]]], n: int, compare_share: float, seed: int, long_share: float = 0.0
) -> list[tuple[tuple, str, bool]]:
    """n planned requests (see planned_request)."""
    rng = random.Random(seed)
    return [planned_request(rng, tasks, compare_share, long_share) for _ in range(n)]


def run_clients(clients: list, plans: list, timeout: float, deadline: float) -> list[Result]:
    """Every client's plan (an iterable of planned requests) in its own thread, all starting together;
    bounded by `deadline` (monotonic)."""
    results: list[Result] = []
    lock, barrier = threading.Lock(), threading.Barrier(len(clients))

    def work(client, plan):
        barrier.wait()
        for args, api_name, long in plan:
            left = deadline - time.monotonic()
            result = (
                timed(client, args, api_name, min(timeout, left), long)
                if left > 0
                else Result(api_name, 0.0, "not run: the load test ran out of time", long)
            )
            with lock:
                results.append(result)

    threads = [threading.Thread(target=work, args=(c, p), daemon=True) for c, p in zip(clients, plans)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()) + timeout)
    hung = sum(t.is_alive() for t in threads)  # each is waiting for one answer
    with lock:  # a hung thread may still append later
        return list(results) + [Result("?", timeout, "hang: no answer by the deadline")] * hung


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def latency_by_length(results: list[Result]) -> dict:
    """{"short"|"long": {n, p50, p95, max}} over the answered requests of each kind present."""
    out = {}
    for kind, long in (("short", False), ("long", True)):
        seconds = [r.seconds for r in results if r.long == long and not r.error]
        if any(r.long == long for r in results):
            out[kind] = {
                "n": len(seconds),
                "p50": percentile(seconds, 0.5),
                "p95": percentile(seconds, 0.95),
                "max": max(seconds, default=None),
            }
    return out


def summary(report: Report, max_p95: float, max_growth: float, mixed: bool = False) -> dict:
    ok = [r.seconds for r in report.results if not r.error]
    failed = [r for r in report.results if r.error]
    by_endpoint = {
        e: [r.seconds for r in report.results if r.endpoint == e and not r.error]
        for e in sorted({r.endpoint for r in report.results})
    }
    busy = [r for r in report.burst if "queue is full" in r.error.lower()]
    other = [r for r in report.burst if r.error and r not in busy]
    warm, after = report.rss_mb.get("after_warmup"), report.rss_mb.get("after_run")
    growth = (after - warm) / warm * 100 if warm and after else None
    by_length = latency_by_length(report.results)
    # mixed: the target is on the short requests; a long one is allowed its own work budget (~1.3 s)
    p95 = by_length.get("short", {}).get("p95") if mixed else percentile(ok, 0.95)
    return {
        "requests": len(report.results),
        "failed": len(failed),
        "wall_s": round(report.wall_s, 2),
        "throughput_rps": round(len(ok) / report.wall_s, 2) if report.wall_s else None,
        "cpu_ms_per_request": {
            k: round(v / len(report.results) * 1000, 1)
            for k, v in report.cpu_s.items()
            if v is not None and report.results
        },
        "latency_s": {"p50": percentile(ok, 0.5), "p95": percentile(ok, 0.95), "max": max(ok, default=None)},
        **({"latency_by_length_s": by_length} if mixed else {}),
        "latency_by_endpoint_s": {
            e: {"n": len(v), "p50": percentile(v, 0.5), "p95": percentile(v, 0.95)} for e, v in by_endpoint.items()
        },
        "failures": sorted({r.error for r in failed})[:10],
        "rss_mb": {k: round(v, 1) for k, v in report.rss_mb.items() if v is not None},
        "rss_growth_pct": round(growth, 2) if growth is not None else None,
        "burst": {
            "submitted": len(report.burst),
            "answered": sum(not r.error for r in report.burst),
            "busy": len(busy),
            "other_errors": len(other),
            "other_error_messages": sorted({r.error for r in other})[:5],
            "busy_answer_max_s": round(max((r.seconds for r in busy), default=0.0), 2),
            "slowest_s": round(max((r.seconds for r in report.burst), default=0.0), 2),
        },
        "targets": {
            "no_failed_requests": not failed,
            f"{'short_' if mixed else ''}p95_le_{max_p95:g}s": p95 is not None and p95 <= max_p95,
            f"rss_growth_le_{max_growth:g}pct": growth is not None and growth <= max_growth,
            **({"busy_is_clear_never_a_hang": not other} if report.burst else {}),
        },
    }


def _burst_row(b: dict) -> str:
    if not b["submitted"]:
        return "not run"
    busy = f"{b['busy']} 'Queue is full' " + (
        f"(each within {b['busy_answer_max_s']} s)" if b["busy"] else "(limit not reached)"
    )
    return (
        f"{b['submitted']} /compare at once: {b['answered']} answered, {busy}, {b['other_errors']} other errors; "
        f"slowest answer {b['slowest_s']} s"
    )


def markdown(s: dict, report: Report) -> str:
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)
    b, lat, rss = s["burst"], s["latency_s"], s["rss_mb"]
    rows = [
        ("checkpoints", f"`{report.checkpoints}` ({report.pairs} task/model pairs)"),
        ("clients × requests", f"{report.clients} × {report.requests_per_client} = {s['requests']}"),
        ("failed requests", s["failed"]),
        ("wall time (s)", s["wall_s"]),
        ("throughput (req/s)", s["throughput_rps"]),
        (
            "CPU per request: server / clients (ms)",
            " / ".join(str(s["cpu_ms_per_request"].get(k, "n/a")) for k in ("server", "clients")),
        ),
        ("latency p50 / p95 / max (s)", " / ".join(fmt(lat[k]) for k in ("p50", "p95", "max"))),
    ]
    rows += [
        (f"{e} p50 / p95 (s), n", f"{fmt(v['p50'])} / {fmt(v['p95'])}, {v['n']}")
        for e, v in s["latency_by_endpoint_s"].items()
    ]
    rows += [
        (f"{kind} requests p50 / p95 / max (s), n", f"{fmt(v['p50'])} / {fmt(v['p95'])} / {fmt(v['max'])}, {v['n']}")
        for kind, v in s.get("latency_by_length_s", {}).items()
    ]
    rows += [
        (
            "RSS after warm-up / after run / after burst (MB)",
            " / ".join(f"{rss[k]:.0f}" if k in rss else "n/a" for k in ("after_warmup", "after_run", "after_burst")),
        ),
        ("RSS growth over the run", f"{fmt(s['rss_growth_pct'])} %"),
        ("burst beyond the queue", _burst_row(b)),
    ]
    rows += [(f"target: {k}", "✓" if v else "✗") for k, v in s["targets"].items()]
    return "\n".join(["| measure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])


@dataclass
class App:
    """app.py serving: its address, its process (RSS and CPU are read below its pid) and its log."""

    url: str
    process: subprocess.Popen
    log_path: Path


@contextlib.contextmanager
def started_app(root: Path, start_timeout: float, port: int = 0):
    """An App of app.py started on the checkpoints `root` with this environment, once it answers; it is stopped on
    leaving. Several runs may share one (main's `app`): each start costs ~20 CPU-s with its warm-up."""
    port = port or free_port()
    log_path = Path(tempfile.mkstemp(prefix="loadtest-app-", suffix=".log")[1])
    with open(log_path, "wb") as log_file:
        proc = start_app(root, port, log_file)
        try:
            url = f"http://127.0.0.1:{port}/"
            wait_until_up(url, proc, start_timeout, log_path)
            log.info("app up on %s (pid %d, log %s)", url, proc.pid, log_path)
            yield App(url, proc, log_path)
        finally:
            stop_process(proc)


@contextlib.contextmanager
def served_app(args):
    """(tasks, root, process, clients) of app.py on the checkpoints, warmed up (step 1): `args.app` when a caller
    started one (on the same checkpoints), else one started here and stopped on leaving."""
    root = Path(args.checkpoints or Settings.load().checkpoints or PROJECT_ROOT / "checkpoints").resolve()
    tasks = checkpoint_pairs(root)
    if not tasks:
        raise LoadTestError(
            f"no checkpoints under {root} (<task>/<model>/config.json): run `make train` or pass --checkpoints"
        )
    with contextlib.nullcontext(args.app) if args.app else started_app(root, args.start_timeout, args.port) as app:
        proc = app.process
        log.info("%d clients connecting", args.clients)
        context = ssl.create_default_context()
        clients = [app_client(app.url, context) for _ in range(args.clients)]
        for task, (lang, models) in tasks.items():
            for text in (SENTENCES.get(lang, SENTENCES["en"])[0],) + (
                (LONG_TEXTS.get(lang, LONG_TEXTS["en"]),) if args.long_share else ()
            ):
                for model in models:
                    timed(clients[0], (text, model, task, "auto"), "/predict", args.request_timeout)
                timed(clients[0], (text, task, "auto"), "/compare", args.request_timeout)
        warm = [
            request_plan(tasks, args.warmup, args.compare_share, 10_000 + i, args.long_share)
            for i in range(args.clients)
        ]
        run_clients(clients, warm, args.request_timeout, time.monotonic() + args.max_seconds)
        yield tasks, root, proc, clients
        if proc.poll() is not None:
            raise LoadTestError(f"app.py died during the load test (status {proc.returncode}); log: {app.log_path}")
        for client in clients:
            client.close()


def load_test(args) -> tuple[dict, Report]:
    with served_app(args) as (tasks, root, proc, clients):
        report = Report(args.clients, args.requests, str(root), sum(len(m) for _, m in tasks.values()))
        report.rss_mb["after_warmup"] = rss_mb(proc.pid)
        log.info("warm; %d clients x %d requests", args.clients, args.requests)
        plans = [
            request_plan(tasks, args.requests, args.compare_share, i, args.long_share) for i in range(args.clients)
        ]
        start, server_cpu, client_cpu = time.perf_counter(), cpu_seconds(proc.pid), time.process_time()  # 2.
        report.results = run_clients(clients, plans, args.request_timeout, time.monotonic() + args.max_seconds)
        report.wall_s = time.perf_counter() - start
        after = cpu_seconds(proc.pid)
        report.cpu_s = {
            "server": after - server_cpu if after is not None and server_cpu is not None else None,
            "clients": time.process_time() - client_cpu,
        }
        time.sleep(1.0)
        report.rss_mb["after_run"] = rss_mb(proc.pid)  # 3.
        if args.burst:  # 4.
            log.info("burst of %d /compare requests", args.burst)
            task = min(tasks, key=lambda t: (tasks[t][0] != "en", -len(tasks[t][1]), t))  # English, most models
            burst_plans = [[((BURST_TEXT, task, "auto"), "/compare", False)] for _ in range(args.burst)]
            report.burst = run_clients(
                [clients[i % len(clients)] for i in range(args.burst)],
                burst_plans,
                args.request_timeout,
                time.monotonic() + args.request_timeout,
            )
            report.rss_mb["after_burst"] = rss_mb(proc.pid)
    return summary(report, args.max_p95, args.max_growth, mixed=args.long_share > 0), report


def rss_sample(pid: int, start: float, requests_started: int) -> dict:
    by_role = rss_by_role(pid)
    return {
        "t_s": round(time.monotonic() - start, 1),
        "rss_mb": round(sum(by_role.values()), 1),
        "rss_by_role_mb": {role: round(mb, 1) for role, mb in sorted(by_role.items())},
        "requests_started": requests_started,
        "load_1min": round(os.getloadavg()[0], 2),
    }


def soak_test(args) -> dict:
    """N mixed requests (or as many as the minutes allow) with the server's RSS sampled every few seconds."""
    limit = args.soak if args.soak is not None else math.inf
    seconds = args.soak_minutes * 60 if args.soak_minutes else args.max_seconds
    with served_app(args) as (tasks, root, proc, clients):
        start = time.monotonic()
        samples = [dict(rss_sample(proc.pid, start, 0), at="after warm-up")]
        issued, started, stop = itertools.count(), [0], threading.Event()

        def plan(seed: int):  # planned requests for one client until the shared count reaches the limit
            rng = random.Random(seed)
            while (n := next(issued)) < limit:
                started[0] = max(started[0], n + 1)
                yield planned_request(rng, tasks, args.compare_share, args.long_share)

        def sample():
            while not stop.wait(args.rss_every):
                samples.append(rss_sample(proc.pid, start, started[0]))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        log.info("soak: %s mixed requests, at most %g s; RSS every %g s", limit, seconds, args.rss_every)
        results = run_clients(
            clients, [plan(20_000 + i) for i in range(args.clients)], args.request_timeout, start + seconds
        )
        wall = time.monotonic() - start
        stop.set()
        sampler.join()
        time.sleep(1.0)
        samples.append(dict(rss_sample(proc.pid, start, len(results)), at="end"))
    warm, end = samples[0]["rss_mb"], samples[-1]["rss_mb"]
    failed = [r for r in results if r.error]
    ratio = end / warm if warm else None
    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "cpus": os.cpu_count(),
        "load_average_end": os.getloadavg(),
        "checkpoints": str(root),
        "requests": len(results),
        "failed": len(failed),
        "failures": sorted({r.error for r in failed})[:10],
        "wall_s": round(wall, 1),
        "throughput_rps": round((len(results) - len(failed)) / wall, 2) if wall else None,
        "latency_by_length_s": latency_by_length(results),
        "rss_mb": {"after_warmup": warm, "end": end, "max": max(x["rss_mb"] for x in samples)},
        "rss_end_over_warmup": round(ratio, 3) if ratio else None,
        "rss_samples": samples,
        "targets": {
            "no_failed_requests": not failed,
            f"rss_end_le_{args.max_rss_ratio:g}x_warmup": ratio is not None and ratio <= args.max_rss_ratio,
        },
    }


def rest_call(http, url: str, api_name: str, args: tuple, timeout: float) -> Result:
    """One REST call as curl makes it, naming no session (Gradio opens a new one for it): POST
    /gradio_api/call/<api>, then read the answer's event stream; the answer must be a prediction."""
    start = time.perf_counter()
    try:
        posted = http.post(f"{url}gradio_api/call/{api_name}", json={"data": list(args)}, timeout=timeout)
        posted.raise_for_status()
        stream = http.get(f"{url}gradio_api/call/{api_name}/{posted.json()['event_id']}", timeout=timeout)
        event, _, data = stream.text.strip().rpartition("event: ")[2].partition("\ndata: ")
        answers = json.loads(data)[0] if event == "complete" else None
        answers = answers if isinstance(answers, list) else [answers]
        if not all(isinstance(a, dict) and a.get("label") in a.get("labels", ()) for a in answers):
            raise ValueError(f"{event or 'no event'}: {data[:200]}")
        error = ""
    except Exception as err:  # counted and reported
        error = error_line(err)
    return Result(f"/{api_name}", time.perf_counter() - start, error)


def fresh_session_call(
    kind: str, url: str, http, context: ssl.SSLContext, args: tuple, api_name: str, timeout: float
) -> Result:
    """One request in a session of its own: a raw REST call ("rest") or a new gradio_client.Client ("client")."""
    if kind == "rest":
        return rest_call(http, url, api_name.strip("/"), args, timeout)
    client = app_client(url, context)
    try:
        return timed(client, args, api_name, timeout)
    finally:
        client.close()


def sessions_test(args) -> dict:
    """`--sessions N` calls, each in a new session (`--session-kind`), `--session-step` at a time from four
    threads; RSS after each step. Target: the app's RSS (where the sessions live) after the last step <=
    `--max-rss-ratio` x after the first; the model worker's (loading each model at its first use) beside it."""
    import httpx

    with served_app(args) as (tasks, root, proc, clients):
        url, context, start = clients[0].src, ssl.create_default_context(), time.monotonic()
        task = min(tasks, key=lambda t: (tasks[t][0] != "en", -len(tasks[t][1]), t))  # English, most models
        lang, models = tasks[task]
        sentences = SENTENCES.get(lang, SENTENCES["en"])
        planned: list[tuple[tuple, str]] = [
            ((sentences[i % len(sentences)], task, "auto"), "/compare")
            if args.session_endpoint == "compare"
            else ((sentences[i % len(sentences)], models[i % len(models)], task, "auto"), "/predict")
            for i in range(args.sessions)
        ]
        samples = [dict(rss_sample(proc.pid, start, 0), at="after warm-up")]
        results: list[Result] = []
        with httpx.Client() as http, ThreadPoolExecutor(4) as pool:
            for first in range(0, args.sessions, args.session_step):
                step = planned[first : first + args.session_step]
                results += pool.map(
                    lambda p: fresh_session_call(
                        args.session_kind, url, http, context, p[0], p[1], args.request_timeout
                    ),
                    step,
                )
                samples.append(rss_sample(proc.pid, start, len(results)))
                log.info("%d sessions: RSS %.0f MB", len(results), samples[-1]["rss_mb"])
    failed = [r for r in results if r.error]
    first, last = (sample["rss_by_role_mb"].get("app", 0.0) for sample in (samples[1], samples[-1]))
    ratio = round(last / first, 3) if first else None
    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "cpus": os.cpu_count(),
        "load_average_end": os.getloadavg(),
        "kind": args.session_kind,
        "endpoint": f"/{args.session_endpoint}",
        "sessions": len(results),
        "failed": len(failed),
        "failures": sorted({r.error for r in failed})[:10],
        "wall_s": round(time.monotonic() - start, 1),
        "latency_s": latency_by_length(results).get("short"),
        "rss_samples": samples,
        "rss_last_over_first_step": ratio,
        "targets": {
            "no_failed_requests": not failed,
            f"rss_last_le_{args.max_rss_ratio:g}x_first_step": ratio is not None and ratio <= args.max_rss_ratio,
        },
    }


def sessions_markdown(s: dict) -> str:
    rows = [
        ("sessions (failed)", f"{s['sessions']} {s['kind']} {s['endpoint']} ({s['failed']})"),
        ("wall time (s)", s["wall_s"]),
        (
            "RSS (MB) by sessions opened: app + model worker",
            ", ".join(
                f"{x['requests_started']}: {x['rss_mb']:.0f}"
                + (f" ({x['rss_by_role_mb']['app']:.0f} app)" if "app" in x["rss_by_role_mb"] else "")
                for x in s["rss_samples"]
            ),
        ),
        ("the app's RSS last / first step", s["rss_last_over_first_step"]),
    ]
    rows += [(f"target: {k}", "✓" if v else "✗") for k, v in s["targets"].items()]
    return "\n".join(["| fresh sessions | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])


# the class profile: what a visitor does next, with its weight; the Lab tab's sentences most of the time
CLASS_MIX = {"/predict": 0.45, "/compare": 0.2, "page": 0.2, "/treebank": 0.1, "/probes": 0.05}
# the hall profile: a lecture follows along, mostly predicting and comparing, half of the time on a sentence of
# its own (hardly ever two alike: what the kept answers cannot answer), at a human pace
HALL_MIX = {"/predict": 0.5, "/compare": 0.25, "page": 0.15, "/treebank": 0.06, "/probes": 0.04}
PROFILES: dict[
    str, dict[str, Any]
] = {  # visitors, trainers, seconds between a visitor's requests, mix, share of sentences of one's own
    "class": {"visitors": 30, "trainers": 3, "think": None, "mix": CLASS_MIX, "own_text_share": 0.0},
    "hall": {"visitors": 300, "trainers": 10, "think": (3.0, 10.0), "mix": HALL_MIX, "own_text_share": 0.5},
}


def page_load(http, url: str) -> Result:
    """A browser opening the page, without the browser: the page, its config, and the page's load events
    in a new session, joined and awaited through the queue as Gradio's front end does it."""
    start = time.perf_counter()
    try:
        http.get(url).raise_for_status()
        config = http.get(f"{url}config").json()
        values = {c["id"]: c.get("props", {}).get("value") for c in config["components"]}
        session, loads = (
            os.urandom(6).hex(),
            [d for d in config["dependencies"] if any(event == "load" for _, event in d["targets"])],
        )
        for dep in loads:
            http.post(
                f"{url}gradio_api/queue/join",
                json={
                    "data": [values.get(i) for i in dep["inputs"]],
                    "fn_index": dep["id"],
                    "session_hash": session,
                    "trigger_id": None,
                    "event_data": None,
                },
            ).raise_for_status()
        done = 0
        with http.stream("GET", f"{url}gradio_api/queue/data", params={"session_hash": session}) as stream:
            for line in stream.iter_lines():
                message = json.loads(line[5:]) if line.startswith("data:") else {}
                if message.get("msg") == "process_completed":
                    if not message.get("success"):
                        raise ValueError(f"load event failed: {str(message.get('output'))[:200]}")
                    done += 1
                if done == len(loads) or message.get("msg") == "close_stream":
                    break
        if done < len(loads):
            raise ValueError(f"{done} of {len(loads)} load events answered")
        error = ""
    except Exception as err:  # counted and reported
        error = error_line(err)
    return Result("page", time.perf_counter() - start, error)


def own_text(rng: random.Random, lang: str) -> str:
    """A sentence a visitor typed: one of SENTENCES with a verdict of its own."""
    base = rng.choice(SENTENCES.get(lang, SENTENCES["en"]))
    return (
        f"{base}，我给{rng.randrange(1, 10**6)}分" if lang == "zh" else f"{base} I give it {rng.randrange(1, 10**6)}."
    )


def class_plan(
    rng: random.Random, tasks: dict, mix: dict = CLASS_MIX, own_text_share: float = 0.0, endpoint: str | None = None
) -> tuple[str, tuple]:
    """What a visitor does next (`endpoint`, by default drawn from `mix`): (endpoint, arguments), "page" for a
    page load; a prediction or a comparison on a sentence of the visitor's own with probability `own_text_share`."""
    endpoint = endpoint or rng.choices(list(mix), weights=list(mix.values()))[0]
    task = rng.choice(sorted(tasks))
    lang, models = tasks[task]
    if endpoint in ("/predict", "/compare"):
        args, endpoint, _ = planned_request(rng, {task: tasks[task]}, float(endpoint == "/compare"), 0.0)
        if rng.random() < own_text_share:
            args = (own_text(rng, lang), *args[1:])
        return endpoint, args
    if endpoint == "/treebank":
        return endpoint, (rng.randrange(50), "test", "sst5")
    return endpoint, ("zh" if lang == "zh" else "en", task) if endpoint == "/probes" else ()


def class_request(client, http, url: str, timeout: float, endpoint: str, args: tuple) -> Result:
    """One thing a visitor does (see class_plan) through its gradio_client `client`; the answer must be well
    formed."""
    if endpoint == "page":
        return page_load(http, url)
    return timed(client, args, endpoint, timeout, endpoint in LONG_ENDPOINTS)


def training_file(folder: Path, n: int) -> Path:
    """A small labelled CSV of its own for trainer `n`: English sentences, positive or negative."""
    rng, rows = random.Random(n), ["text,label"]
    good, bad = ["great", "moving", "funny", "beautiful", "clever"], ["dull", "slow", "boring", "flat", "predictable"]
    for i in range(200):
        positive = rng.random() < 0.5
        words = rng.sample(good if positive else bad, 2) + rng.sample(["plot", "film", "acting", "story", "ending"], 2)
        rows.append(f"the {words[2]} is {words[0]} and the {words[3]} {words[1]} {i},{'pos' if positive else 'neg'}")
    path = folder / f"class-{n}.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def train_and_use(client, path: Path, deadline: float, timeout: float) -> list[Result]:
    """A trainer's visit: /train on its file (2 epochs), /train_status every 2 s until the job ends, then one
    /predict with the task it made; a job still running at the deadline is cancelled."""
    from gradio_client import handle_file

    start, results = time.perf_counter(), []
    try:
        job = client.submit(handle_file(str(path)), "dcnn", "text", "label", 2, 2.0, "none", api_name="/train").result(
            timeout=timeout
        )
    except Exception as err:  # counted and reported
        return [Result("/train", time.perf_counter() - start, error_line(err), True)]
    status: dict = {}
    while not status or time.monotonic() < deadline:  # once at least: a /train may return after the class ended
        time.sleep(2)
        begun = time.perf_counter()
        try:
            status = client.submit(job, api_name="/train_status").result(timeout=timeout)
            results.append(Result("/train_status", time.perf_counter() - begun))
        except Exception as err:
            results.append(Result("/train_status", time.perf_counter() - begun, error_line(err)))
            break
        if status.get("status") not in ("queued", "running"):
            break
    if status.get("status") in ("queued", "running"):  # the class is over
        try:
            client.submit(job, api_name="/train_cancel").result(timeout=timeout)
        except Exception as err:
            return results + [Result("/train_cancel", time.perf_counter() - start, error_line(err), True)]
    elif status.get("status") != "done":
        return results + [Result("/train", time.perf_counter() - start, f"job ended {status.get('status')}", True)]
    results.append(Result("/train", time.perf_counter() - start, "", True))
    if status.get("status") == "done" and status.get("task"):
        results.append(timed(client, ("a great and moving film", "dcnn", status["task"], "auto"), "/predict", timeout))
    return results


def folder_mb(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 2)


DISK_FOLDERS = {"user_models": "LAB_USER_MODELS", "gradio_cache": "GRADIO_TEMP_DIR"}  # whose disk a class reads


def class_environment(scratch: Path, trainers: int) -> dict[str, str]:
    """What the app of a class of `trainers` serves with: its user models and Gradio's cache in `scratch` (their disk
    is read at the end), and room for every trainer's job and upload."""
    return {
        "LAB_USER_MODELS": str(scratch / "user_models"),
        "GRADIO_TEMP_DIR": str(scratch / "gradio"),
        # every visitor here comes from 127.0.0.1: the trainers' jobs all wait their turn, as the profile's are meant
        # to (one network address may otherwise have 4 jobs waiting: service.jobs, LAB_TRAIN_MAX_JOBS_PER_CLIENT)
        "LAB_TRAIN_MAX_JOBS_PER_CLIENT": str(max(4, trainers)),
        # and each trainer's visit uploads its file: a hall's 10 trainers passed the 20 uploads a minute of one address
        "LAB_UPLOADS_PER_MINUTE": str(max(20, 10 * trainers)),
    }


def process_environment(pid: int) -> dict[str, str]:
    """The environment process `pid` started with (/proc/<pid>/environ)."""
    pairs = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0")
    return dict(pair.split("=", 1) for pair in pairs if "=" in pair)


def class_test(args) -> dict:
    """`--class-visitors` visitors for `--class-minutes`: each visit is a new session (a new gradio_client
    Client) of `--visit-requests` requests from the profile's mix with its think time between them (the class:
    up to 2 x `--think` seconds), and `--trainers` of the visitors train small files of their own instead; RSS
    sampled every `--rss-every` seconds, the disk of the user models and Gradio's cache at the end. The hall's
    visitors who do not train are browsers (tools.bench.hall), not gradio_client Clients."""
    profile = PROFILES[args.profile]
    think = profile["think"] or (0.0, 2 * args.think)
    browsers = args.profile == "hall"
    served = Settings.load()  # the settings the served app reads: it inherits this environment
    import httpx

    scratch = Path(tempfile.mkdtemp(prefix="loadtest-class-"))
    args.clients = max(1, args.trainers) if browsers else args.class_visitors
    with (
        mock.patch.dict(os.environ, class_environment(scratch, args.trainers)),
        served_app(args) as (tasks, root, proc, clients),
        httpx.Client(timeout=args.request_timeout) as http,
    ):
        url, context = clients[0].src, ssl.create_default_context()
        # served_app warmed /predict and /compare up; the class's other requests load what they first use (the
        # probe suites, the treebank) now, so that the RSS after the warm-up is the app's, not a cache filling
        warm = [page_load(http, url)] + [
            class_request(
                clients[0],
                http,
                url,
                args.request_timeout,
                *class_plan(random.Random(0), {task: tasks[task]}, endpoint=endpoint),
            )
            for task in tasks
            for endpoint in ("/probes", "/treebank")
        ]
        if any(r.error for r in warm):
            raise LoadTestError(f"the class warm-up failed: {next(r.error for r in warm if r.error)}")
        # the app's own reading inside the tree's span (the app is read first at the end): a busy app's CPU during
        # the tree's walk of /proc never makes the app alone look bigger than the tree
        start, server_cpu, app_cpu = time.monotonic(), cpu_seconds(proc.pid), cpu_seconds(proc.pid, children=False)
        generator_cpu = time.process_time()
        deadline = start + args.class_minutes * 60
        samples, stop = [dict(rss_sample(proc.pid, start, 0), at="after warm-up")], threading.Event()
        counts, lock = {"visits": 0, "requests": 0}, threading.Lock()

        def count(visits: int, requests: int):
            with lock:
                counts["visits"] += visits
                counts["requests"] += requests

        def visitor(n: int, client):
            rng, out = random.Random(30_000 + n), []
            files = training_file(scratch, n) if n < args.trainers else None
            while time.monotonic() < deadline:
                if client is None:  # every visit after the first: a new session (the page config, the API info)
                    opened = time.perf_counter()
                    try:
                        client = app_client(url, context)
                    except Exception as err:  # a visit the app could not open in time: counted and reported
                        count(0, 1)
                        out.append(Result("visit", time.perf_counter() - opened, error_line(err)))
                        time.sleep(rng.uniform(*think))
                        continue
                count(1, 0)
                if files:
                    out += (trained := train_and_use(client, files, deadline, args.request_timeout))
                    count(0, len(trained))
                    time.sleep(rng.uniform(*think))  # a refused /train returns at once: no visit right after it
                for _ in range(0 if files else args.visit_requests):
                    if time.monotonic() >= deadline:
                        break
                    count(0, 1)
                    plan = class_plan(rng, tasks, profile["mix"], profile["own_text_share"])
                    out.append(class_request(client, http, url, args.request_timeout, *plan))
                    time.sleep(rng.uniform(*think))
                client.close()
                client = None
            return out

        def sample():
            while not stop.wait(args.rss_every):
                samples.append(dict(rss_sample(proc.pid, start, counts["requests"]), visits=counts["visits"]))

        waiting: list[float] = []  # Gradio's queue: events waiting beyond the running ones, every QUEUE_EVERY s

        def sample_queue():
            with httpx.Client(timeout=args.request_timeout) as status:
                while not stop.wait(QUEUE_EVERY):
                    with contextlib.suppress(httpx.HTTPError, KeyError, ValueError):
                        waiting.append(status.get(f"{url}gradio_api/queue/status").json()["queue_size"])

        samplers = [threading.Thread(target=target, daemon=True) for target in (sample, sample_queue)]
        for sampler in samplers:
            sampler.start()
        log.info("class: %d visitors (%d training) for %g min", args.class_visitors, args.trainers, args.class_minutes)

        def hall() -> list[Result]:  # every visitor who does not train, as a browser, on this thread
            from tools.bench.hall import Hall

            plan = lambda rng: class_plan(rng, tasks, profile["mix"], profile["own_text_share"])
            seeds = [30_000 + n for n in range(args.trainers, args.class_visitors)]
            return asyncio.run(Hall.read(url, args.request_timeout).run(seeds, plan, think, deadline, count))

        threads = args.trainers if browsers else args.class_visitors
        with ThreadPoolExecutor(max(1, threads)) as pool:
            running = pool.map(visitor, range(threads), clients)
            results = (hall() if browsers else []) + [r for rs in running for r in rs]
        stop.set()
        for sampler in samplers:
            sampler.join()
        app_cpu = (cpu_seconds(proc.pid, children=False) or 0.0) - (app_cpu or 0.0)
        server_cpu = (cpu_seconds(proc.pid) or 0.0) - (server_cpu or 0.0)
        generator_cpu = time.process_time() - generator_cpu
        until = time.monotonic() + 5.0  # cancelled training workers exit (a job's own checks: ~1 s)
        while "training" in rss_by_role(proc.pid) and time.monotonic() < until:
            time.sleep(0.1)
        samples.append(dict(rss_sample(proc.pid, start, counts["requests"]), visits=counts["visits"], at="end"))
        served_folders = process_environment(proc.pid)  # the class's own, or those of the app a caller started
        disk_mb = {k: folder_mb(Path(served_folders[v])) for k, v in DISK_FOLDERS.items()}
    shutil.rmtree(scratch, ignore_errors=True)
    failed = [r for r in results if r.error]
    by_endpoint = {
        e: [r.seconds for r in results if r.endpoint == e and not r.error]
        for e in sorted({r.endpoint for r in results})
    }
    warm, end = samples[0]["rss_mb"], samples[-1]["rss_mb"]
    ratio = round(end / warm, 3) if warm else None
    short_p95 = latency_by_length(results).get("short", {}).get("p95")
    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "cpus": os.cpu_count(),
        "load_average_end": os.getloadavg(),
        "checkpoints": str(root),
        "profile": args.profile,
        "model_worker": served.serve_backend,  # LAB_SERVE_BACKEND
        "visitors": args.class_visitors,
        "trainers": args.trainers,
        "visits": counts["visits"],
        "requests": len(results),
        "failed": len(failed),
        "failures": sorted({r.error for r in failed})[:10],
        "wall_s": round(time.monotonic() - start, 1),
        "latency_by_length_s": latency_by_length(results),
        "latency_by_endpoint_s": {
            e: {"n": len(v), "p50": percentile(v, 0.5), "p95": percentile(v, 0.95)} for e, v in by_endpoint.items()
        },
        # the app process's own CPU per request: what its GIL was busy with, whatever the machine's load
        "app_cpu_ms_per_request": round(1000 * app_cpu / max(1, len(results)), 1),
        # with its children (the model worker, training workers), and what the load generator itself spent
        "server_cpu_ms_per_request": round(1000 * server_cpu / max(1, len(results)), 1),
        "load_generator_cpu_s": round(generator_cpu, 1),
        "rss_mb": {"after_warmup": warm, "end": end, "max": max(x["rss_mb"] for x in samples)},
        "rss_end_over_warmup": ratio,
        "rss_samples": samples,
        "queue_waiting": queue_waiting(waiting, served.queue_size),
        "disk_mb": disk_mb,
        "targets": {
            "no_failed_requests": not failed,
            f"short_p95_le_{args.max_p95:g}s": short_p95 is not None and short_p95 <= args.max_p95,
            f"rss_end_le_{args.max_rss_ratio:g}x_warmup": ratio is not None and ratio <= args.max_rss_ratio,
            f"disk_le_{args.max_disk_mb:g}mb": sum(disk_mb.values()) <= args.max_disk_mb,
        },
    }


def class_key(figures: dict) -> str:
    """Where a class or hall run goes in reports/loadtest.json: its profile, on Ray Serve a key of its own."""
    return figures["profile"] + ("_ray_serve" if figures["model_worker"] == "ray" else "")


def queue_waiting(waiting: list[float], size: int) -> dict:
    """Gradio's waiting events over a run, sampled every QUEUE_EVERY s, against the queue's bound."""
    return {
        "samples": len(waiting),
        "p50": percentile(waiting, 0.5),
        "p99": percentile(waiting, 0.99),
        "max": max(waiting, default=None),
        "queue_size": size,
    }


def saturation_test(args) -> dict:
    """The profile at each of `--saturation` visitor counts (`--class-minutes` each, a fresh app each time): its
    short p95 per count, and the saturation point, the visitors at which short p95 crosses `--max-p95` (linear
    between the two counts around the crossing; None when no count or every count crosses it)."""
    points, counts = [], args.saturation
    for visitors in counts:
        args.class_visitors, trainers = visitors, args.trainers
        args.trainers = min(trainers, visitors)
        run = class_test(args)
        args.trainers = trainers
        p95 = run["latency_by_length_s"].get("short", {}).get("p95")
        points.append(
            {
                "visitors": visitors,
                "short_p95_s": p95,
                "requests": run["requests"],
                "failed": run["failed"],
                "app_cpu_ms_per_request": run["app_cpu_ms_per_request"],
                "load_average_end": run["load_average_end"],
            }
        )
        log.info("saturation: %d visitors, short p95 %s s, %d failed", visitors, p95, run["failed"])
    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "cpus": os.cpu_count(),
        "profile": args.profile,
        "minutes_per_point": args.class_minutes,
        "points": points,
        "saturation_visitors": saturation_point(points, args.max_p95),
    }


def saturation_point(points: list[dict], limit: float) -> int | None:
    """The visitors at which short p95 first crosses `limit`, linear between the two counts around the crossing."""
    for low, high in zip(points, points[1:]):
        a, b = low["short_p95_s"], high["short_p95_s"]
        if a is not None and b is not None and a <= limit < b:
            return round(low["visitors"] + (limit - a) / (b - a) * (high["visitors"] - low["visitors"]))
    return None


def saturation_markdown(s: dict) -> str:
    rows = [
        (
            f"{p['visitors']} visitors",
            f"short p95 {p['short_p95_s']} s, {p['requests']} requests ({p['failed']} failed)",
        )
        for p in s["points"]
    ]
    rows.append(("saturation point (visitors)", s["saturation_visitors"]))
    return "\n".join(["| saturation | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])


def latency_rows(s: dict) -> list[tuple[str, str]]:
    """A report's request latency, by request length, as table rows."""
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}"
    return [
        (f"{kind} requests p50 / p95 / max (s), n", f"{fmt(v['p50'])} / {fmt(v['p95'])} / {fmt(v['max'])}, {v['n']}")
        for kind, v in s["latency_by_length_s"].items()
    ]


def rss_rows(s: dict) -> list[tuple[str, str]]:
    """A report's RSS after warm-up, at the end and at most, their ratio and the samples over time."""
    samples = s["rss_samples"][:: max(1, len(s["rss_samples"]) // 12)]
    return [
        (
            "RSS after warm-up / end / max (MB)",
            " / ".join(f"{s['rss_mb'][k]:.0f}" for k in ("after_warmup", "end", "max")),
        ),
        ("RSS end / after warm-up", s["rss_end_over_warmup"]),
        ("RSS samples (s: MB)", ", ".join(f"{x['t_s']:.0f}: {x['rss_mb']:.0f}" for x in samples)),
        (
            "RSS by process at the end (MB)",
            ", ".join(f"{k} {v:.0f}" for k, v in s["rss_samples"][-1].get("rss_by_role_mb", {}).items()),
        ),
    ]


def class_markdown(s: dict) -> str:
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}"
    rows = [
        ("profile", s.get("profile", "class")),
        ("visitors (training), visits (each a new session)", f"{s['visitors']} ({s['trainers']}), {s['visits']}"),
        ("requests (failed)", f"{s['requests']} ({s['failed']})"),
        ("wall time (s)", s["wall_s"]),
    ]
    rows += latency_rows(s)
    rows += [
        (f"{e} p50 / p95 (s), n", f"{fmt(v['p50'])} / {fmt(v['p95'])}, {v['n']}")
        for e, v in s["latency_by_endpoint_s"].items()
    ]
    rows += [
        ("app process CPU per request (ms)", s["app_cpu_ms_per_request"]),
        ("with its children (ms)", s.get("server_cpu_ms_per_request", "n/a")),
        ("the load generator's CPU (s)", s.get("load_generator_cpu_s", "n/a")),
    ]
    if waiting := s.get("queue_waiting"):
        rows.append(
            (
                f"queue waiting p50 / p99 / max (of {waiting['queue_size']}, every {QUEUE_EVERY:g} s)",
                f"{waiting['p50']} / {waiting['p99']} / {waiting['max']}",
            )
        )
    rows += rss_rows(s) + [("disk at the end (MB)", ", ".join(f"{k} {v}" for k, v in s["disk_mb"].items()))]
    rows += [(f"target: {k}", "✓" if v else "✗") for k, v in s["targets"].items()]
    return "\n".join(["| class | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])


def soak_markdown(s: dict) -> str:
    rows = [
        ("requests (failed)", f"{s['requests']} ({s['failed']})"),
        ("wall time (s)", s["wall_s"]),
        ("throughput (req/s)", s["throughput_rps"]),
    ]
    rows += latency_rows(s) + rss_rows(s)
    rows += [(f"target: {k}", "✓" if v else "✗") for k, v in s["targets"].items()]
    return "\n".join(["| soak | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])


def stored_part(path: Path, key: str) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get(key) or {}
    except (OSError, ValueError, AttributeError):
        return {}


def write_figures(path: Path, key: str | None, figures: dict) -> None:
    """The plain run's figures at the top level, a mixed run's and a soak's under their key; the other
    parts of the file stay as they were."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = {}
    merged = dict(stored, **{key: figures}) if key else dict(figures, **{k: stored[k] for k in PARTS if k in stored})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")


PARTS = (
    "mixed",
    "soak",
    "sessions",
    "class",
    "hall",
    "saturation",
    "class_ray_serve",
    "hall_ray_serve",
)  # keys of reports/loadtest.json besides the plain run's figures (a profile on Ray Serve: <profile>_ray_serve)


def arguments() -> argparse.ArgumentParser:
    """The load test's command line: its profiles, the soak, the sessions and the saturation runs."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench.loadtest", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--checkpoints", default=None, help="<task>/<model>/ folders (default $LAB_CHECKPOINTS, else checkpoints/)"
    )
    parser.add_argument(
        "--profile",
        choices=("plain", "mixed", "class", "hall"),
        default="plain",
        help="plain: short sentences only; mixed: --long-share of the requests long; class: a class of "
        "--class-visitors, each visit a new session, --trainers of them training; hall: a lecture hall, the "
        "class's visits with 300 visitors (10 training) at a human pace (PROFILES)",
    )
    parser.add_argument("--class-minutes", type=float, default=10.0, help="class, hall: how long the class works")
    parser.add_argument("--class-visitors", type=int, default=None, help="class, hall: visitors at once (30, 300)")
    parser.add_argument(
        "--trainers", type=int, default=None, help="class, hall: visitors who train small files of their own (3, 10)"
    )
    parser.add_argument(
        "--saturation",
        type=lambda v: [int(n) for n in v.split(",")],
        default=None,
        metavar="N,N,...",
        help="class, hall: run the profile at each of these visitor counts and find where short p95 crosses --max-p95",
    )
    parser.add_argument("--visit-requests", type=int, default=10, help="class: requests per visit (one session)")
    parser.add_argument("--think", type=float, default=1.0, help="class: mean seconds a visitor waits between requests")
    parser.add_argument(
        "--max-disk-mb", type=float, default=1024.0, help="class target: user models and Gradio's cache at the end, MB"
    )
    parser.add_argument(
        "--long-share", type=float, default=0.1, help="share of long inputs in the mixed profile and the soak"
    )
    parser.add_argument(
        "--soak",
        type=int,
        nargs="?",
        const=5000,
        default=None,
        help="soak instead: N mixed requests (default 5000) with the server's RSS sampled over time",
    )
    parser.add_argument(
        "--soak-minutes", type=float, default=None, help="soak bounded by time (with --soak: whichever ends first)"
    )
    parser.add_argument("--rss-every", type=float, default=5.0, help="soak: seconds between RSS samples")
    parser.add_argument(
        "--max-rss-ratio",
        type=float,
        default=None,
        help="target: RSS at the end / after the warm-up (soak: 1.1), or after the last step / the "
        "first (--sessions: 1.15)",
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=None,
        help="fresh sessions instead: N requests, each in a session of its own, RSS after every step",
    )
    parser.add_argument(
        "--session-kind",
        choices=("rest", "client"),
        default="rest",
        help="--sessions: per request a raw REST call naming no session, or a new gradio_client.Client",
    )
    parser.add_argument(
        "--session-endpoint",
        choices=("compare", "predict"),
        default="compare",
        help="the REST endpoint each new session calls (--sessions)",
    )
    parser.add_argument("--session-step", type=int, default=200, help="--sessions: RSS read after every STEP requests")
    parser.add_argument("--clients", type=int, default=32, help="concurrent gradio_client clients")
    parser.add_argument("--requests", type=int, default=20, help="requests per client, one after the other")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up requests per client (all clients at once)")
    parser.add_argument("--compare-share", type=float, default=0.2, help="share of /compare (every model) requests")
    parser.add_argument(
        "--burst",
        type=int,
        default=None,
        help="requests submitted at once beyond the queue (default: twice what the app lets run and wait)",
    )
    parser.add_argument("--request-timeout", type=float, default=120.0, help="seconds one request may take")
    parser.add_argument(
        "--max-seconds", type=float, default=600.0, help="bound on the whole run (the soak's without --soak-minutes)"
    )
    parser.add_argument("--start-timeout", type=float, default=180.0, help="seconds for app.py to start serving")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument(
        "--max-p95", type=float, default=1.0, help="target: p95 latency in seconds (mixed: of the short requests)"
    )
    parser.add_argument("--max-growth", type=float, default=10.0, help="target: RSS growth over the run, percent")
    parser.add_argument(
        "--out", default=str(PROJECT_ROOT / "reports" / "loadtest.json"), help="where the figures go ('' = nowhere)"
    )
    return parser


def main(argv: list[str] | None = None, app: App | None = None) -> int:
    """The run `argv` asks for, on `app` when given (started_app on the same checkpoints; a class's with
    class_environment), else on an app.py of its own."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per HTTP request otherwise
    parser = arguments()
    args = parser.parse_args(argv)
    args.app = app
    defaults = PROFILES.get(args.profile, PROFILES["class"])
    args.class_visitors = defaults["visitors"] if args.class_visitors is None else args.class_visitors
    args.trainers = defaults["trainers"] if args.trainers is None else args.trainers
    if args.burst is None:  # beyond what the app lets run and wait
        settings = Settings.load()  # the served app inherits this environment
        args.burst = 2 * (settings.queue_size + settings.model_concurrency)
    soak = args.soak is not None or args.soak_minutes is not None
    if (
        min(
            args.clients,
            args.requests,
            args.warmup + 1,
            args.burst + 1,
            args.soak or 1,
            args.soak_minutes or 1,
            args.rss_every,
            args.sessions or 1,
            args.session_step,
            args.class_minutes,
            args.class_visitors,
            args.visit_requests,
        )
        <= 0
        or not 0 <= args.trainers <= args.class_visitors
        or args.think < 0
        or not 0 <= args.compare_share <= 1
        or not 0 <= args.long_share <= 1
    ):
        parser.error(
            "--clients, --requests, --soak, --soak-minutes, --rss-every, --sessions, --session-step and the "
            "--class- options must be > 0, --warmup, --burst, --trainers (at most --class-visitors) and --think "
            ">= 0, --compare-share and --long-share in [0, 1]"
        )
    if args.profile in ("plain", "class", "hall") and not soak:
        args.long_share = 0.0
    if args.max_rss_ratio is None:
        args.max_rss_ratio = 1.15 if args.sessions or args.profile in PROFILES else 1.1
    load_at_start = os.getloadavg()  # the machine is shared: its load goes beside every figure
    if args.saturation and args.profile in PROFILES:
        figures = {**saturation_test(args), "load_average_start": load_at_start}
        print(saturation_markdown(figures))
        if args.out:
            write_figures(Path(args.out), "saturation", figures)
        return 0
    run = sessions_test if args.sessions else soak_test if soak else class_test if args.profile in PROFILES else None
    try:
        figures, report = (run(args), None) if run else load_test(args)
    except LoadTestError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    config = {k: v for k, v in vars(args).items() if k not in ("out", "app")}
    if args.sessions:  # one entry per kind of session under "sessions"
        figures = {**figures, "load_average_start": load_at_start, "config": config}
        print(sessions_markdown(figures))
        if args.out:
            write_figures(
                Path(args.out), "sessions", {**stored_part(Path(args.out), "sessions"), args.session_kind: figures}
            )
        return 0 if all(figures["targets"].values()) else 1
    if soak or run is class_test:
        figures = {**figures, "load_average_start": load_at_start, "config": config}
        print(soak_markdown(figures) if soak else class_markdown(figures))
    else:
        assert report is not None  # load_test's, the one run that reports requests one by one
        figures = {
            "date": time.strftime("%Y-%m-%d %H:%M"),
            "cpus": os.cpu_count(),
            "load_average_start": load_at_start,
            "load_average": os.getloadavg(),
            "config": config,
            **figures,
        }
        print(markdown(figures, report))
    if args.out:
        key = "soak" if soak else class_key(figures) if run is class_test else "mixed" if args.long_share else None
        write_figures(Path(args.out), key, figures)
    return 0 if all(figures["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
