"""Red-team cases on the owner store and the sign-in (issue: one address cannot take the lab from a class), each
run against a live app by tools/bench/redteam.py: `case_<name>(url) -> (held, figure)`. The store's cases read its rows
in the user-models folder tools/bench/redteam.py gives the app it starts (Settings.user_models); the sign-in and
full-disk cases start a second app of their own (tools.bench.loadtest), the full-disk one on a tmpfs it mounts (as
root; without, the case says it did not run and fails)."""

import base64
import errno
import hashlib
import json
import os
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from core.data import PROJECT_ROOT
from service.settings import Settings
from service.store import STORE_FILE
from tools.bench.loadtest import percentile, rest_call, start_app, wait_until_up
from tools.bench.redteam_content import QueueError, load_event, queue_call
from tools.bench.redteam_identity import _call, _file, _upload
from tools.processes import free_port, stop_process

PREDICT = ("a fun film", "dcnn", "auto", "auto")
STORE_LINE = "the owner store is busy or full"


def _store_path() -> Path:
    """The store of the app tools/bench/redteam.py started (it sets LAB_USER_MODELS), else this checkout's."""
    return Settings.load().user_models / STORE_FILE


def _rows(path: Path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute("SELECT COUNT(*) FROM bindings").fetchone()[0]


def _page_load(http: httpx.Client, url: str, session: str) -> list:
    """The page's load event, joined directly in `session` with no key (a first visit), as a script would."""
    load, data = load_event(http.get(f"{url}config").json(), "")
    return queue_call(http, url.rstrip("/"), load, data, session)


def _owner(url: str) -> tuple[object, float]:
    """/owner with a fresh key from a fresh session: (its answer, seconds)."""
    start = time.monotonic()
    answer = _call(url, "owner", ["redteam-key-" + secrets.token_hex(8)], secrets.token_hex(12), timeout=30)
    return answer, time.monotonic() - start


def _one_line(answer: object) -> str:
    """The refusal's line, or "" when the answer is none (a key, or Gradio's bare {"error": null})."""
    error = answer.get("error") if isinstance(answer, dict) else None
    return error if isinstance(error, str) and "\n" not in error else ""


def _set_environ(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextmanager
def _second_app(env: dict[str, str | None], user_models: Path | None = None) -> Iterator[tuple[str, Path]]:
    """app.py started on the bundled checkpoints with `env` over this process's environment (None: unset), its own
    user-models folder (`user_models`, else a new one) and upload cache; yields (url, its log), stopped after."""
    work = Path(tempfile.mkdtemp(prefix="redteam-store-"))
    env = {
        "LAB_USER_MODELS": str(user_models or work / "user_models"),
        "GRADIO_TEMP_DIR": str(work / "gradio"),
        **env,
    }
    saved = {name: os.environ.get(name) for name in env}
    _set_environ(env)  # start_app passes this process's environment on
    port, log_path = free_port(), work / "app.log"
    try:
        with open(log_path, "w") as log:
            proc = start_app(PROJECT_ROOT / "checkpoints", port, log)
    finally:
        _set_environ(saved)
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_until_up(url, proc, 240, log_path)
        yield url, log_path
    finally:
        stop_process(proc)


def case_page_loads_write_no_flood(url: str) -> tuple[bool, str]:
    """60 page-load events from one address, each joined directly in a fresh session, add at most 30 rows to the
    owner store (a page load binds in memory; only owner-bound work writes)."""
    if not (path := _store_path()).exists():
        return False, f"not run: no owner store at {path} (run without --url, or with the app's LAB_USER_MODELS)"
    before, answered = _rows(path), 0
    with httpx.Client(timeout=httpx.Timeout(30, read=None)) as http:
        for _ in range(60):
            try:
                answered += bool(_page_load(http, url, secrets.token_hex(6)))
            except QueueError:
                pass
    added = _rows(path) - before
    return added <= 30 and answered == 60, f"60 page loads: {answered} answered, {added} store rows added (<= 30)"


def case_locked_store_answers(url: str) -> tuple[bool, str]:
    """Another process holds the store locked for ~20 s while an honest client calls /predict once a second and
    /owner once: /predict p95 <= 1 s with none failed, /owner one line within 1 s. /owner is called once before
    the lock: Gradio's first call of an endpoint is slow whatever the store does."""
    if not (path := _store_path()).exists():
        return False, f"not run: no owner store at {path} (run without --url, or with the app's LAB_USER_MODELS)"
    _owner(url)
    hold = (
        "import sqlite3, sys, time\n"
        f"db = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
        "db.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(20); db.execute('ROLLBACK')\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    try:
        if holder.stdout is None or holder.stdout.readline().strip() != "locked":
            return False, "the store could not be locked from another process"
        predictions, owner = [], None
        with httpx.Client() as http:
            for second in range(18):
                start = time.monotonic()
                predictions.append(rest_call(http, url, "predict", PREDICT, timeout=30))
                if second == 5:
                    owner = _owner(url)
                time.sleep(max(0.0, 1 - (time.monotonic() - start)))
    finally:
        holder.wait(timeout=30)
    p95 = percentile([r.seconds for r in predictions], 0.95) or 0.0
    failed = sum(bool(r.error) for r in predictions)
    answer, seconds = owner or ({}, 0.0)
    line = _one_line(answer)
    held = p95 <= 1 and not failed and STORE_LINE in line and seconds <= 1
    return held, (
        f"store locked 20 s: {len(predictions)} /predict p95 {p95:.2f} s, {failed} failed; "
        f"/owner in {seconds:.2f} s: {line or answer!r}"[:300]
    )


def _forged_cookie(username: str) -> str:
    """A session cookie for `username`, signed as Gradio's mocked sign-in signs its own (its secret is public:
    sha256 of "-v4" when OAUTH_CLIENT_SECRET is unset)."""
    from itsdangerous import TimestampSigner

    info = {
        "access_token": "hf_forged",
        "token_type": "bearer",
        "scope": "openid profile",
        "expires_at": time.time() + 3600,
        "userinfo": {"sub": "1", "name": username, "preferred_username": username, "picture": "", "profile": ""},
    }
    payload = base64.b64encode(json.dumps({"oauth_info": info}).encode())
    secret = hashlib.sha256(b"-v4").hexdigest()
    return TimestampSigner(secret).sign(payload).decode()


def case_mocked_login_signs_nobody_in(url: str) -> tuple[bool, str]:
    """A copy of the Space without Hugging Face's OAuth (SPACE_ID set, SYSTEM unset, HF_TOKEN a dummy): it starts,
    /login/huggingface signs nobody in, and a forged session cookie gets no signed-in work (/train refused)."""
    env = {"SPACE_ID": "someone/sentence-lab", "SYSTEM": None, "LAB_SIGN_IN": None, "HF_TOKEN": "hf_dummy_redteam"}
    with _second_app(env) as (second, log_path):
        login = httpx.get(f"{second}login/huggingface", follow_redirects=False, timeout=30)
        cached = _upload(second, _file(30, seed=5)).json()[0]
        body = {"data": [{"path": cached, "meta": {"_type": "gradio.FileData"}}, "dcnn", "", "", 1, 5, "none"]}
        with httpx.Client(cookies={"session": _forged_cookie("victim")}, timeout=60) as http:
            posted = http.post(f"{second}gradio_api/call/train", json=body)
            answer = http.get(f"{second}gradio_api/call/train/{posted.json()['event_id']}").text
        last = json.loads(answer.strip().splitlines()[-1].removeprefix("data: "))
        line = _one_line(last)
        logged = "writing work is off" in log_path.read_text(errors="replace")
    held = login.status_code == 404 and "sign-in" in line and logged
    return held, (
        f"started; /login/huggingface HTTP {login.status_code}; forged cookie for 'victim': /train "
        f"{'refused: ' + line if line else repr(last)}; start log says writing is off: {logged}"
    )[:300]


def _fill(folder: Path) -> int:
    """Fill the file system of `folder` to the last byte: the filler's size."""
    written = 0
    with open(folder / "filler", "wb", buffering=0) as f:
        for chunk in (2**16, 2**12, 1):
            try:
                while True:
                    written += f.write(b"\0" * chunk)
            except OSError as err:
                if err.errno != errno.ENOSPC:
                    raise
    return written


def case_full_store_answers(url: str) -> tuple[bool, str]:
    """A second app whose user-models folder is on a small tmpfs, filled to the last byte: /owner answers the
    store's line within 1 s, and /predict and a page load keep answering (/owner called once before the disk
    fills, as in case_locked_store_answers)."""
    disk = Path(tempfile.mkdtemp(prefix="redteam-tmpfs-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        return False, f"not run: cannot mount a tmpfs ({mounted.stderr.decode(errors='replace').strip()[:120]})"
    try:
        with _second_app({}, disk / "user_models") as (second, _):
            _owner(second)
            filled = _fill(disk)
            answers = [_owner(second) for _ in range(5)]
            with httpx.Client(timeout=httpx.Timeout(30, read=None)) as http:
                predicted = rest_call(http, second, "predict", PREDICT, timeout=30)
                try:
                    page = bool(_page_load(http, second, secrets.token_hex(6)))
                except QueueError:
                    page = False
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)
        disk.rmdir()
    lines = [_one_line(answer) for answer, _ in answers]
    refused = [line for line in lines if STORE_LINE in line]
    slowest = max(seconds for _, seconds in answers)
    odd = [answer for (answer, _), line in zip(answers, lines, strict=True) if not line and not isinstance(answer, str)]
    held = bool(refused) and not odd and slowest <= 1 and not predicted.error and page
    return held, (
        f"disk full ({filled / 2**20:.1f} MB filler): {len(refused)} of 5 /owner refused in one line "
        f"(slowest {slowest:.2f} s){', odd answers: ' + repr(odd[:1]) if odd else ''}; /predict "
        f"{'answered' if not predicted.error else 'FAILED ' + predicted.error} in {predicted.seconds:.2f} s; "
        f"page load {'answered' if page else 'FAILED'}"
    )[:300]
