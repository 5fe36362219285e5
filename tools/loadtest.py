"""Load test of the Gradio app: many gradio_client clients at once, then a burst beyond the queue's limit;
or a soak: many mixed requests with the server's resident memory sampled over time.

    python -m tools.loadtest                               # make loadtest: the bundled checkpoints/
    python -m tools.loadtest --profile mixed               # make loadtest PROFILE=mixed: 10% long inputs
    python -m tools.loadtest --soak 5000                   # make soak: 5,000 mixed requests, RSS over time
    python -m tools.loadtest --soak-minutes 20             # make soak SOAK_MINUTES=20: bounded by time
    python -m tools.loadtest --checkpoints DIR --clients 8 --requests 5

It starts `app.py` as a separate process on 127.0.0.1 (LAB_CHECKPOINTS=DIR, a free port), then:
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
stopped at the end. The figures go to docs/loadtest.json and a markdown table is printed. Targets
(issue 13): 0 failed requests, p95 <= 1 s, memory after the run within 10% of after the warm-up, a clear
"busy" answer beyond the queue and no hang. The exit status is 0 when every target is met, 1 when one
is missed, 2 when the test could not run.

The soak (`--soak N`, `--soak-minutes M`) warms up as above with the mixed profile, then sends N mixed
requests (or as many as M minutes allow) from `--clients` clients while a thread reads the server's
resident memory every `--rss-every` seconds; after the last request, and a second's rest, a last sample.
Target (issue 21): 0 failed requests, RSS at the end <= 1.1 x RSS after the warm-up.

docs/loadtest.json holds the last plain run at its top level (the format `make bench` quotes), the last
mixed run under "mixed" and the last soak under "soak"; each run replaces only its own part.
"""

import argparse
import contextlib
import itertools
import json
import logging
import math
import os
import random
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.data import PROJECT_ROOT
from core.text import MAX_CHARS

log = logging.getLogger("tools.loadtest")
SENTENCES = {
    "en": ["It is not a bad film at all.", "The acting is great, but the plot is dull.",
           "The movie is not nearly as good as the book.", "A moving, funny and beautifully made film.",
           "Though the plot is predictable, the movie never feels formulaic."],
    "zh": ["这部电影不怎么好看，但是演员很棒", "质量一点也不好，再也不买了", "物流非常快，东西特别好", "不能说不好用"],
}
# the longest texts the caps allow: MAX_CHARS characters (the predictor then keeps the first MAX_WORDS words)
LONG_TEXTS = {lang: " ".join(itertools.islice(itertools.cycle(sentences), 1000))[:MAX_CHARS]
              for lang, sentences in SENTENCES.items()}
BURST_TEXT = ("The acting is great, but the plot is dull and the ending is not nearly as moving as the book . " * 2).strip()


class LoadTestError(Exception):
    """The load test could not run (no checkpoints, the app did not start); the message says why."""


@dataclass
class Result:
    endpoint: str
    seconds: float
    error: str = ""  # "" = a well-formed answer
    long: bool = False  # one of LONG_TEXTS


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


def stop_process(proc: subprocess.Popen, timeout: float = 10) -> None:
    """Ask an app process to stop; kill it if it has not within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_tree(pid: int) -> list[int]:
    """`pid` and every process below it (the app's model worker, demo/runner.py)."""
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


def rss_mb(pid: int) -> float | None:
    """Resident memory of the app: the process `pid` and its children (VmRSS of /proc/<pid>/status)."""
    total = None
    for member in process_tree(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total = (total or 0.0) + int(line.split()[1]) / 1024
        except OSError:
            pass
    return total


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of the app so far: the process `pid` and its live children (/proc/<pid>/stat
    fields 14 and 15), and the children it has reaped (fields 16 and 17: a replaced model worker)."""
    total = None
    for member in process_tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if member == pid else 0)
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
    env = dict(os.environ, LAB_CHECKPOINTS=str(checkpoints), GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port),
               GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, str(PROJECT_ROOT / "app.py")], cwd=PROJECT_ROOT, env=env,
                            stdout=log_file, stderr=subprocess.STDOUT)


def wait_until_up(url: str, proc: subprocess.Popen, timeout: float, log_path: Path) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise LoadTestError(f"app.py exited with status {proc.returncode} before serving:\n{tail}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise LoadTestError(f"app.py did not answer on {url} within {timeout:g} s (log: {log_path})")


def timed(client, args: tuple, api_name: str, timeout: float, long: bool = False) -> Result:
    """One request, submit to result; the answer must be a prediction (or a list of them)."""
    start = time.perf_counter()
    try:
        answer = client.submit(*args, api_name=api_name).result(timeout=timeout)
        answers = answer if isinstance(answer, list) else [answer]
        if not answers or not all(isinstance(a, dict) and a.get("label") in a.get("labels", ()) for a in answers):
            raise ValueError(f"malformed answer: {str(answer)[:200]}")
        error = ""
    except Exception as err:  # noqa: BLE001 - every failure is counted and reported, none stops the run
        error = f"{type(err).__name__}: {err}".splitlines()[0][:300] or type(err).__name__
    return Result(api_name, time.perf_counter() - start, error, long)


def planned_request(rng: random.Random, tasks: dict[str, tuple[str, list[str]]], compare_share: float,
                    long_share: float) -> tuple[tuple, str, bool]:
    """(arguments, endpoint, long): a random task, a sentence of its language (or, with probability
    `long_share`, its long text), /predict with a random model or /compare."""
    task = rng.choice(sorted(tasks))
    lang, models = tasks[task]
    long = rng.random() < long_share
    text = LONG_TEXTS.get(lang, LONG_TEXTS["en"]) if long else rng.choice(SENTENCES.get(lang, SENTENCES["en"]))
    if rng.random() < compare_share:
        return (text, task, "auto"), "/compare", long
    return (text, rng.choice(models), task, "auto"), "/predict", long


def request_plan(tasks: dict[str, tuple[str, list[str]]], n: int, compare_share: float, seed: int,
                 long_share: float = 0.0) -> list[tuple[tuple, str, bool]]:
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
            result = timed(client, args, api_name, min(timeout, left), long) if left > 0 else \
                Result(api_name, 0.0, "not run: the load test ran out of time", long)
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
            out[kind] = {"n": len(seconds), "p50": percentile(seconds, 0.5), "p95": percentile(seconds, 0.95),
                         "max": max(seconds, default=None)}
    return out


def summary(report: Report, max_p95: float, max_growth: float, mixed: bool = False) -> dict:
    ok = [r.seconds for r in report.results if not r.error]
    failed = [r for r in report.results if r.error]
    by_endpoint = {e: [r.seconds for r in report.results if r.endpoint == e and not r.error]
                   for e in sorted({r.endpoint for r in report.results})}
    busy = [r for r in report.burst if "queue is full" in r.error.lower()]
    other = [r for r in report.burst if r.error and r not in busy]
    warm, after = report.rss_mb.get("after_warmup"), report.rss_mb.get("after_run")
    growth = (after - warm) / warm * 100 if warm and after else None
    by_length = latency_by_length(report.results)
    # mixed: the target is on the short requests; a long one is allowed its own work budget (~1.3 s)
    p95 = by_length.get("short", {}).get("p95") if mixed else percentile(ok, 0.95)
    return {
        "requests": len(report.results), "failed": len(failed), "wall_s": round(report.wall_s, 2),
        "throughput_rps": round(len(ok) / report.wall_s, 2) if report.wall_s else None,
        "cpu_ms_per_request": {k: round(v / len(report.results) * 1000, 1) for k, v in report.cpu_s.items()
                               if v is not None and report.results},
        "latency_s": {"p50": percentile(ok, 0.5), "p95": percentile(ok, 0.95), "max": max(ok, default=None)},
        **({"latency_by_length_s": by_length} if mixed else {}),
        "latency_by_endpoint_s": {e: {"n": len(v), "p50": percentile(v, 0.5), "p95": percentile(v, 0.95)}
                                  for e, v in by_endpoint.items()},
        "failures": sorted({r.error for r in failed})[:10],
        "rss_mb": {k: round(v, 1) for k, v in report.rss_mb.items() if v is not None},
        "rss_growth_pct": round(growth, 2) if growth is not None else None,
        "burst": {"submitted": len(report.burst), "answered": sum(not r.error for r in report.burst),
                  "busy": len(busy), "other_errors": len(other), "other_error_messages": sorted({r.error for r in other})[:5],
                  "busy_answer_max_s": round(max((r.seconds for r in busy), default=0.0), 2),
                  "slowest_s": round(max((r.seconds for r in report.burst), default=0.0), 2)},
        "targets": {"no_failed_requests": not failed,
                    f"{'short_' if mixed else ''}p95_le_{max_p95:g}s": p95 is not None and p95 <= max_p95,
                    f"rss_growth_le_{max_growth:g}pct": growth is not None and growth <= max_growth,
                    **({"busy_is_clear_never_a_hang": not other} if report.burst else {})},
    }


def _burst_row(b: dict) -> str:
    if not b["submitted"]:
        return "not run"
    busy = f"{b['busy']} 'Queue is full' " + (f"(each within {b['busy_answer_max_s']} s)" if b["busy"] else "(limit not reached)")
    return (f"{b['submitted']} /compare at once: {b['answered']} answered, {busy}, {b['other_errors']} other errors; "
            f"slowest answer {b['slowest_s']} s")


def markdown(s: dict, report: Report) -> str:
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    b, lat, rss = s["burst"], s["latency_s"], s["rss_mb"]
    rows = [("checkpoints", f"`{report.checkpoints}` ({report.pairs} task/model pairs)"),
            ("clients × requests", f"{report.clients} × {report.requests_per_client} = {s['requests']}"),
            ("failed requests", s["failed"]), ("wall time (s)", s["wall_s"]), ("throughput (req/s)", s["throughput_rps"]),
            ("CPU per request: server / clients (ms)", " / ".join(str(s["cpu_ms_per_request"].get(k, "n/a"))
                                                                 for k in ("server", "clients"))),
            ("latency p50 / p95 / max (s)", " / ".join(fmt(lat[k]) for k in ("p50", "p95", "max")))]
    rows += [(f"{e} p50 / p95 (s), n", f"{fmt(v['p50'])} / {fmt(v['p95'])}, {v['n']}")
             for e, v in s["latency_by_endpoint_s"].items()]
    rows += [(f"{kind} requests p50 / p95 / max (s), n", f"{fmt(v['p50'])} / {fmt(v['p95'])} / {fmt(v['max'])}, {v['n']}")
             for kind, v in s.get("latency_by_length_s", {}).items()]
    rows += [("RSS after warm-up / after run / after burst (MB)",
              " / ".join(f"{rss[k]:.0f}" if k in rss else "n/a" for k in ("after_warmup", "after_run", "after_burst"))),
             ("RSS growth over the run", f"{fmt(s['rss_growth_pct'])} %"),
             ("burst beyond the queue", _burst_row(b))]
    rows += [(f"target: {k}", "✓" if v else "✗") for k, v in s["targets"].items()]
    return "\n".join(["| measure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])


@contextlib.contextmanager
def served_app(args):
    """(tasks, root, process, clients) of app.py started on the checkpoints and warmed up (step 1); the app
    is stopped on leaving."""
    root = Path(args.checkpoints or os.environ.get("LAB_CHECKPOINTS") or PROJECT_ROOT / "checkpoints").resolve()
    tasks = checkpoint_pairs(root)
    if not tasks:
        raise LoadTestError(f"no checkpoints under {root} (<task>/<model>/config.json): run `make train` or pass --checkpoints")
    port = args.port or free_port()
    url = f"http://127.0.0.1:{port}/"
    log_path = Path(tempfile.mkstemp(prefix="loadtest-app-", suffix=".log")[1])
    with open(log_path, "wb") as log_file:
        proc = start_app(root, port, log_file)
        try:
            wait_until_up(url, proc, args.start_timeout, log_path)
            log.info("app up on %s (pid %d, log %s); %d clients connecting", url, proc.pid, log_path, args.clients)
            context = ssl.create_default_context()
            clients = [app_client(url, context) for _ in range(args.clients)]
            for task, (lang, models) in tasks.items():
                for text in (SENTENCES.get(lang, SENTENCES["en"])[0],) + ((LONG_TEXTS.get(lang, LONG_TEXTS["en"]),)
                                                                           if args.long_share else ()):
                    for model in models:
                        timed(clients[0], (text, model, task, "auto"), "/predict", args.request_timeout)
                    timed(clients[0], (text, task, "auto"), "/compare", args.request_timeout)
            warm = [request_plan(tasks, args.warmup, args.compare_share, 10_000 + i, args.long_share)
                    for i in range(args.clients)]
            run_clients(clients, warm, args.request_timeout, time.monotonic() + args.max_seconds)
            yield tasks, root, proc, clients
            if proc.poll() is not None:
                raise LoadTestError(f"app.py died during the load test (status {proc.returncode}); log: {log_path}")
            for client in clients:
                client.close()
        finally:
            stop_process(proc)


def load_test(args) -> tuple[dict, Report]:
    with served_app(args) as (tasks, root, proc, clients):
        report = Report(args.clients, args.requests, str(root), sum(len(m) for _, m in tasks.values()))
        report.rss_mb["after_warmup"] = rss_mb(proc.pid)
        log.info("warm; %d clients x %d requests", args.clients, args.requests)
        plans = [request_plan(tasks, args.requests, args.compare_share, i, args.long_share) for i in range(args.clients)]
        start, server_cpu, client_cpu = time.perf_counter(), cpu_seconds(proc.pid), time.process_time()  # 2.
        report.results = run_clients(clients, plans, args.request_timeout, time.monotonic() + args.max_seconds)
        report.wall_s = time.perf_counter() - start
        after = cpu_seconds(proc.pid)
        report.cpu_s = {"server": after - server_cpu if after is not None and server_cpu is not None else None,
                        "clients": time.process_time() - client_cpu}
        time.sleep(1.0)
        report.rss_mb["after_run"] = rss_mb(proc.pid)  # 3.
        if args.burst:  # 4.
            log.info("burst of %d /compare requests", args.burst)
            task = min(tasks, key=lambda t: (tasks[t][0] != "en", -len(tasks[t][1]), t))  # English, most models
            burst_plans = [[((BURST_TEXT, task, "auto"), "/compare", False)] for _ in range(args.burst)]
            report.burst = run_clients([clients[i % len(clients)] for i in range(args.burst)], burst_plans,
                                       args.request_timeout, time.monotonic() + args.request_timeout)
            report.rss_mb["after_burst"] = rss_mb(proc.pid)
    return summary(report, args.max_p95, args.max_growth, mixed=args.long_share > 0), report


def rss_sample(pid: int, start: float, requests_started: int) -> dict:
    return {"t_s": round(time.monotonic() - start, 1), "rss_mb": round(rss_mb(pid) or 0.0, 1), "requests_started": requests_started,
            "load_1min": round(os.getloadavg()[0], 2)}


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
        results = run_clients(clients, [plan(20_000 + i) for i in range(args.clients)], args.request_timeout,
                              start + seconds)
        wall = time.monotonic() - start
        stop.set()
        sampler.join()
        time.sleep(1.0)
        samples.append(dict(rss_sample(proc.pid, start, len(results)), at="end"))
    warm, end = samples[0]["rss_mb"], samples[-1]["rss_mb"]
    failed = [r for r in results if r.error]
    ratio = end / warm if warm else None
    return {"date": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(), "load_average_end": os.getloadavg(),
            "checkpoints": str(root), "requests": len(results), "failed": len(failed),
            "failures": sorted({r.error for r in failed})[:10], "wall_s": round(wall, 1),
            "throughput_rps": round((len(results) - len(failed)) / wall, 2) if wall else None,
            "latency_by_length_s": latency_by_length(results),
            "rss_mb": {"after_warmup": warm, "end": end, "max": max(x["rss_mb"] for x in samples)},
            "rss_end_over_warmup": round(ratio, 3) if ratio else None, "rss_samples": samples,
            "targets": {"no_failed_requests": not failed,
                        f"rss_end_le_{args.max_rss_ratio:g}x_warmup": ratio is not None and ratio <= args.max_rss_ratio}}


def soak_markdown(s: dict) -> str:
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
    rows = [("requests (failed)", f"{s['requests']} ({s['failed']})"), ("wall time (s)", s["wall_s"]),
            ("throughput (req/s)", s["throughput_rps"])]
    rows += [(f"{kind} requests p50 / p95 / max (s), n", f"{fmt(v['p50'])} / {fmt(v['p95'])} / {fmt(v['max'])}, {v['n']}")
             for kind, v in s["latency_by_length_s"].items()]
    rows += [("RSS after warm-up / end / max (MB)", " / ".join(f"{s['rss_mb'][k]:.0f}" for k in ("after_warmup", "end", "max"))),
             ("RSS end / after warm-up", s["rss_end_over_warmup"]),
             ("RSS samples (s: MB)", ", ".join(f"{x['t_s']:.0f}: {x['rss_mb']:.0f}" for x in s["rss_samples"][::max(1, len(s["rss_samples"]) // 12)]))]
    rows += [(f"target: {k}", "✓" if v else "✗") for k, v in s["targets"].items()]
    return "\n".join(["| soak | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])


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


PARTS = ("mixed", "soak")  # keys of docs/loadtest.json besides the plain run's figures


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per HTTP request otherwise
    parser = argparse.ArgumentParser(prog="python -m tools.loadtest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", default=None, help="<task>/<model>/ folders (default $LAB_CHECKPOINTS, else checkpoints/)")
    parser.add_argument("--profile", choices=("plain", "mixed"), default="plain",
                        help="plain: short sentences only; mixed: --long-share of the requests long")
    parser.add_argument("--long-share", type=float, default=0.1, help="share of long inputs in the mixed profile and the soak")
    parser.add_argument("--soak", type=int, nargs="?", const=5000, default=None,
                        help="soak instead: N mixed requests (default 5000) with the server's RSS sampled over time")
    parser.add_argument("--soak-minutes", type=float, default=None, help="soak bounded by time (with --soak: whichever ends first)")
    parser.add_argument("--rss-every", type=float, default=5.0, help="soak: seconds between RSS samples")
    parser.add_argument("--max-rss-ratio", type=float, default=1.1, help="soak target: RSS at the end / after the warm-up")
    parser.add_argument("--clients", type=int, default=32, help="concurrent gradio_client clients")
    parser.add_argument("--requests", type=int, default=20, help="requests per client, one after the other")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up requests per client (all clients at once)")
    parser.add_argument("--compare-share", type=float, default=0.2, help="share of /compare (every model) requests")
    parser.add_argument("--burst", type=int, default=160, help="requests submitted at once beyond the queue limit")
    parser.add_argument("--request-timeout", type=float, default=120.0, help="seconds one request may take")
    parser.add_argument("--max-seconds", type=float, default=600.0, help="bound on the whole run (the soak's without --soak-minutes)")
    parser.add_argument("--start-timeout", type=float, default=180.0, help="seconds for app.py to start serving")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--max-p95", type=float, default=1.0, help="target: p95 latency in seconds (mixed: of the short requests)")
    parser.add_argument("--max-growth", type=float, default=10.0, help="target: RSS growth over the run, percent")
    parser.add_argument("--out", default=str(PROJECT_ROOT / "docs" / "loadtest.json"), help="where the figures go ('' = nowhere)")
    args = parser.parse_args(argv)
    soak = args.soak is not None or args.soak_minutes is not None
    if min(args.clients, args.requests, args.warmup + 1, args.burst + 1, args.soak or 1, args.soak_minutes or 1,
           args.rss_every) <= 0 or not 0 <= args.compare_share <= 1 or not 0 <= args.long_share <= 1:
        parser.error("--clients, --requests, --soak, --soak-minutes and --rss-every must be > 0, --warmup and --burst "
                     ">= 0, --compare-share and --long-share in [0, 1]")
    if args.profile == "plain" and not soak:
        args.long_share = 0.0
    load_at_start = os.getloadavg()  # the machine is shared: its load goes beside every figure
    try:
        figures, report = (soak_test(args), None) if soak else load_test(args)
    except LoadTestError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    config = {k: v for k, v in vars(args).items() if k != "out"}
    if soak:
        figures = {**figures, "load_average_start": load_at_start, "config": config}
        print(soak_markdown(figures))
    else:
        figures = {"date": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(), "load_average_start": load_at_start,
                   "load_average": os.getloadavg(), "config": config, **figures}
        print(markdown(figures, report))
    if args.out:
        write_figures(Path(args.out), "soak" if soak else "mixed" if args.long_share else None, figures)
    return 0 if all(figures["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
