"""Red-team cases on long work, lost models and content (issue 48, items 2, 7 and 8), run against a running app:
each `case_<name>(base_url) -> (held, one line with its figure)`, within about a minute. `make redteam` collects
them with the other tools/bench/redteam_*.py modules; tests/app/test_public_content.py runs them on the tiny models.

They speak Gradio's own protocols: gradio_client for the named endpoints, and for the page's private events
(the Lab's Analyse, its model choice, "Attributions of a file") the queue calls the page itself makes
(/gradio_api/queue/join, then the session's event stream), each found in /config by its trigger's elem_id.
"""

import copy
import csv
import functools
import io
import json
import os
import signal
import ssl
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

import httpx

from core.analysis.export import CSV, FORMULA_START
from tools.bench.loadtest import app_client, percentile, process_tree, role

LONG_TEXT = " ".join(["the film is good but the plot is dull"] * 6)  # 54 words: the long lane, the worker
# 57 lines of about 20 words: the file the issue exported with model "all" (214 s in the app process)
EXPORT_LINES = [
    f"the {['first', 'second', 'last'][i % 3]} film {i} is not as good as the book but the cast and the music "
    f"make it {['worth seeing', 'a dull evening', 'fun'][i % 3]} once more"
    for i in range(57)
]
# words a spreadsheet would run as formulas, and a label's would-be link
HOSTILE_LINES = ['=HYPERLINK("http://example.com/x","click") is a good film', "+1 for the cast", "@everyone -2 dull"]
PREDICT_ARGS = ("a good film", "dcnn", "auto", "auto")
PAGE_WIDTH = 1280  # the figures' room in px, which the page sends with every analysis
P95_S = 1.0  # /predict's bar while exports run (the class profile's short p95)


class QueueError(Exception):
    """A private event answered with an error: its message (Gradio's toast)."""


def event_index(config: dict, elem_id: str, trigger: str) -> int:
    """The fn_index of the event `trigger` ("click", "select") of the component with `elem_id`."""
    ids = [c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == elem_id]
    return next(d["id"] for d in config["dependencies"] if any(t == [ids[0], trigger] for t in d["targets"]))


def upload(http: httpx.Client, base_url: str, name: str, data: bytes) -> dict:
    """A file sent the way the page sends it; the FileData an event takes."""
    sent = http.post(f"{base_url}/gradio_api/upload", files=[("files", (name, data, "text/plain"))])
    sent.raise_for_status()
    return {"path": sent.json()[0], "orig_name": name, "meta": {"_type": "gradio.FileData"}}


def load_event(config: dict, key: str) -> tuple[int, list]:
    """The page's load event (demo/ui.py's on_page) and what a page sends it: the owner key its localStorage holds
    (demo/ui.py's READ_KEY), then each other input's value in the page's config."""
    props = {c["id"]: c.get("props", {}) for c in config["components"]}
    store = next(i for i, p in props.items() if p.get("elem_id") == "owner-key")
    load = next(
        d
        for d in config["dependencies"]
        if d["backend_fn"] and d["inputs"][:1] == [store] and any(event == "load" for _, event in d["targets"])
    )
    return load["id"], [key, *(props[i].get("value") for i in load["inputs"][1:])]


def queue_call(
    http: httpx.Client, base_url: str, fn_index: int, data: list, session: str, started: threading.Event | None = None
) -> list:
    """One private event as the page calls it, in `session`: its outputs as the page ends up showing them, or
    QueueError with its message. `started` is set once the handler runs. A generator's chunks after its first come
    as diffs, and its final message repeats its last chunk, which may leave outputs unchanged (gr.skip())."""
    joined = http.post(
        f"{base_url}/gradio_api/queue/join",
        json={"data": data, "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None},
    )
    joined.raise_for_status()
    sent: list | None = None  # a generator's last chunk: its next comes as a diff of it
    shown: list = []
    with http.stream("GET", f"{base_url}/gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            message = json.loads(line[5:]) if line.startswith("data:") else {}
            if message.get("msg") == "process_starts" and started:
                started.set()
            if message.get("msg") in ("process_generating", "process_completed") and message.get("success"):
                data = message["output"]["data"]
                generating = message["msg"] == "process_generating"
                sent = data if sent is None or not generating else [_applied(v, d) for v, d in zip(sent, data)]
                shown = [old if _unchanged(new) else new for old, new in zip(shown or sent, sent)]
            if message.get("msg") == "process_completed":
                if not message.get("success"):
                    raise QueueError(str((message.get("output") or {}).get("error")))
                return shown
    raise QueueError("the event stream ended without an answer")


def _applied(value, diff: list):
    """`value` with a chunk's diff applied, as the page applies it: edits ("replace", "append", "add", "delete") at
    a path of keys and indices, the empty path the value itself."""
    value = copy.deepcopy(value)
    for action, path, new in diff:
        if not path:
            value = new if action == "replace" else value + new
            continue
        *parents, last = path
        target = functools.reduce(lambda at, key: at[key], parents, value)
        if action == "delete":
            del target[last]
        elif action == "append":
            target[last] += new
        elif action == "add" and isinstance(target, list):
            target.insert(last, new)
        else:  # "replace", or "add" to a dict
            target[last] = new
    return value


def _unchanged(value) -> bool:
    """An update that sets no value (gr.skip(), or only a component's props): the page keeps what it shows."""
    return isinstance(value, dict) and value.get("__type__") == "update" and "value" not in value


def _base(base_url: str) -> str:
    return base_url.rstrip("/")


def _config(http: httpx.Client, base_url: str) -> dict:
    return http.get(f"{base_url}/config").json()


def export_files(base_url: str, lines: list[str], model: str = "all", n: int = 1, seconds: float = 600) -> dict:
    """`n` exports of a file of `lines` at once, each in a session of its own, and meanwhile /predict from
    another client, one call after another; after `seconds` the exports still running are abandoned (their
    streams closed). {"predict": [seconds...], "predict_failed", "started", "done", "failed": [messages],
    "outputs": [each finished export's output]}."""
    base = _base(base_url)
    found: dict = {"predict": [], "predict_failed": 0, "started": 0, "done": 0, "failed": [], "outputs": []}
    starts = [threading.Event() for _ in range(n)]
    clients = [httpx.Client(timeout=httpx.Timeout(30, read=None)) for _ in range(n)]
    index = event_index(_config(clients[0], base), "attr-export-run", "click")
    data = "\n".join(lines).encode()
    over = threading.Event()

    def export(i: int) -> None:
        try:
            sent = upload(clients[i], base, f"file-{i}.txt", data)
            found["outputs"].append(
                queue_call(clients[i], base, index, [sent, model, "auto", "auto"], uuid.uuid4().hex, starts[i])
            )
        except QueueError as err:
            found["failed"].append(str(err))
        except httpx.HTTPError:  # its stream closed once the case was over
            if not over.is_set():
                raise

    client = app_client(base + "/", ssl.create_default_context())
    client.predict(*PREDICT_ARGS, api_name="/predict")  # the session and the short path warm
    with ThreadPoolExecutor(n) as pool:
        futures = [pool.submit(export, i) for i in range(n)]
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not all(f.done() for f in futures):
            start = time.perf_counter()
            try:
                client.predict(*PREDICT_ARGS, api_name="/predict")
                found["predict"].append(time.perf_counter() - start)
            except Exception:  # counted: a /predict that fails is a failure of the case
                found["predict_failed"] += 1
            time.sleep(0.2)
        over.set()
        found["started"], found["done"] = sum(s.is_set() for s in starts), len(found["outputs"])
        for http in clients:  # the exports not finished are abandoned: Gradio drops them from its queue
            http.close()
        for future in futures:
            try:
                future.result()
            except Exception as err:  # a closed stream mid-read
                found["failed"].append(f"{type(err).__name__}" if not over.is_set() else "abandoned")
    client.close()
    return found


def case_exports_leave_predict_alone(base_url: str, n: int = 16, seconds: float = 40) -> tuple[bool, str]:
    """16 exports of a 57-line file with model "all" at once: /predict keeps p95 <= 1 s and never fails."""
    found = export_files(base_url, EXPORT_LINES, "all", n, seconds)
    p95 = percentile(found["predict"], 0.95)
    held = bool(found["predict"]) and p95 is not None and p95 <= P95_S and not found["predict_failed"]
    return held, (
        f"/predict p95 {p95 or 0:.2f} s over {len(found['predict'])} calls ({found['predict_failed']} failed) with "
        f"{n} exports of {len(EXPORT_LINES)} lines x all models at once ({found['started']} started, "
        f"{found['done']} done in {seconds:g} s)"
    )


WORD_COLUMNS = ("word", "label", "gold", "model")  # words.csv's text columns


def _cells(csv_text: str) -> list[str]:
    return [cell for row in csv.DictReader(io.StringIO(csv_text)) for k, cell in row.items() if k in WORD_COLUMNS]


def case_export_csv_has_no_formulas(base_url: str) -> tuple[bool, str]:
    """Words that start with =, +, - or @ come back in words.csv with a single quote in front (the OWASP rule)."""
    found = export_files(base_url, HOSTILE_LINES, "dcnn", 1, 60)
    if not found["outputs"]:
        return False, f"the export gave no files: {found['failed'][:1]}"
    files = found["outputs"][0][0]
    url = next(f["url"] for f in files if f["path"].endswith(CSV))
    cells = _cells(httpx.get(url, timeout=30).text)
    raw = [c for c in cells if c.startswith(FORMULA_START)]
    quoted = [c for c in cells if c.startswith("'") and c[1:].startswith(FORMULA_START)]
    return not raw and bool(quoted), f"{len(raw)} formula cells, {len(quoted)} neutralised of {len(cells)} text cells"


def case_reset_intervention_is_no_error(base_url: str) -> tuple[bool, str]:
    """The Lab's race: an intervention chosen, then "All five", and Analyse arriving with the intervention the
    server has just reset: the analysis answers (all five), never Gradio's "not in the list of choices"."""
    base, session = _base(base_url), uuid.uuid4().hex
    with httpx.Client(timeout=httpx.Timeout(30, read=120)) as http:
        config = _config(http, base)
        on_model, run = event_index(config, "model", "select"), event_index(config, "run", "click")
        choices = queue_call(http, base, on_model, ["tensor_cnn", "auto"], session)[1]
        keys = [value for _, value in choices.get("choices", [])] if isinstance(choices, dict) else []
        key = next((k for k in keys if k != "none"), "consecutive")
        queue_call(http, base, on_model, ["all", "auto"], session)  # the server resets the menu to "none"
        try:
            summary, _, result = queue_call(
                http, base, run, ["a good film", "all", "auto", "auto", "occlusion", key, 1, PAGE_WIDTH], session
            )[1:]
        except QueueError as err:
            return False, f"Analyse with the reset '{key}' answered the error: {err}"
    panels = str(result.get("value", result) if isinstance(result, dict) else result).count('class="model-panel"')
    text = summary.get("value", summary) if isinstance(summary, dict) else summary
    return panels >= 2, f"Analyse with the reset '{key}' answered {panels} model panels: {str(text)[:60]!r}"


def worker_pids(base_url: str) -> list[int]:
    """The model worker processes (`python -m service.serving`) of the app listening on `base_url`'s port, when it
    runs on this machine (found through /proc: the socket's owner, then the processes below it)."""
    port = urlparse(base_url).port or 80
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
                inodes.add(f"socket:[{fields[9]}]")

    def link(fd: Path) -> str:
        try:
            return os.readlink(fd)
        except OSError:  # closed while we looked
            return ""

    owners = set()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and any(link(fd) in inodes for fd in (proc / "fd").iterdir()):
                owners.add(int(proc.name))
        except OSError:  # another user's process, or one that ended
            continue
    found = []
    for member in {pid for owner in owners for pid in process_tree(owner)}:
        try:
            if role(member) == "model worker":
                found.append(member)
        except OSError:  # it ended while we looked
            continue
    return sorted(found)


def with_worker_killed(base_url: str, call):
    """`call()`'s answer when the app's model worker is killed (SIGKILL) during it: the worker is stopped first, so
    that the job `call` sends it is certainly still running a second later. None when the app's worker is not one
    process on this machine."""
    pids = worker_pids(base_url)
    if len(pids) != 1:
        return None
    os.kill(pids[0], signal.SIGSTOP)
    threading.Timer(1.0, os.kill, (pids[0], signal.SIGKILL)).start()
    return call()


def case_worker_crash_names_the_model(base_url: str) -> tuple[bool, str]:
    """A SIGKILL of the model worker during a long /compare: the answer names the model it lost, and why."""
    client = app_client(_base(base_url) + "/", ssl.create_default_context())
    try:
        whole = client.predict(LONG_TEXT, "auto", "auto", api_name="/compare")  # the worker runs
        answer = with_worker_killed(base_url, lambda: client.predict(LONG_TEXT, "auto", "auto", api_name="/compare"))
    finally:
        client.close()
    if answer is None:
        return False, f"no single model worker of the app at {base_url} on this machine to kill"
    lost = [a for a in answer if "error" in a]
    named = [f"{a['model']}: {a['error']}" for a in lost]
    held = (
        len(answer) == len(whole) and len(lost) == 1 and lost[0]["error"] == "worker_ended" and bool(lost[0]["message"])
    )
    return held, f"{len(answer) - len(lost)} of {len(whole)} models answered, the other named: {named}"


def case_worker_crash_is_named_on_the_lab_page(base_url: str) -> tuple[bool, str]:
    """The same in the Lab (Analyse, all five, a long sentence): the notices under the summary name the model."""
    base, session = _base(base_url), uuid.uuid4().hex
    with httpx.Client(timeout=httpx.Timeout(30, read=120)) as http:
        run = event_index(_config(http, base), "run", "click")
        data = [LONG_TEXT, "all", "auto", "auto", "occlusion", "none", 1, PAGE_WIDTH]
        queue_call(http, base, run, data, session)  # the worker runs
        answer = with_worker_killed(base_url, lambda: queue_call(http, base, run, data, session))
    if answer is None:
        return False, f"no single model worker of the app at {base_url} on this machine to kill"
    notices = answer[2].get("value", "") if isinstance(answer[2], dict) else str(answer[2])
    panels = str(answer[3]).count('class="model-panel"')
    named = [line for line in notices.splitlines() if "gave no answer" in line]
    return len(named) == 1 and panels == 4, f"{panels} model panels, and the notice: {named[:1]}"
