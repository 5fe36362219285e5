"""Red-team cases on identities, ownership and budgets (issue: a public Space), each run against a live app by
tools/bench/redteam.py: `case_<name>(url) -> (held, figure)`. QUICK names the ones the test suite runs too."""

import csv
import hashlib
import json
import random
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

QUICK = ("short_session", "bad_numbers", "task_key_bits", "owner_flood")
WORDS = ("good", "bad", "fine", "dull", "film", "story", "plot", "actor", "great", "awful", "music", "scene")
HTTP = httpx.Client()  # every case's calls: a client of its own per call loads the CA certificates (~40 ms of CPU)


def _file(rows: int, pad: int = 0, seed: int = 0) -> Path:
    """A labelled CSV of `rows` short reviews (each padded by `pad` characters) in a fresh temporary folder."""
    rng, path = random.Random(seed), Path(tempfile.mkdtemp(prefix="redteam-")) / f"reviews-{seed}.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["review", "stars"])
        for _ in range(rows):
            out.writerow([" ".join(rng.choices(WORDS, k=6)) + " " + "x" * pad, rng.choice(("1", "5"))])
    return path


def _upload(url: str, path: Path) -> httpx.Response:
    with open(path, "rb") as f:
        return HTTP.post(f"{url}gradio_api/upload", files={"files": (path.name, f)}, timeout=60)


def _call(
    url: str, api: str, data: list, session: str | None = None, timeout: float = 60, headers: dict | None = None
) -> Any:
    """One REST call (naming `session` when given, sending `headers` too); its answer's data (JSON: a dict, a
    list, a job's id), or {"error": ...}."""
    body = {"data": data, **({"session_hash": session} if session else {})}
    posted = HTTP.post(
        f"{url}gradio_api/call/{api}",
        content=json.dumps(body, allow_nan=True),
        headers={"content-type": "application/json", **(headers or {})},
        timeout=timeout,
    )
    if posted.status_code != 200:
        return {"error": f"HTTP {posted.status_code}: {posted.text[:120]}"}
    event = f"{url}gradio_api/call/{api}/{posted.json()['event_id']}"
    answer = HTTP.get(event, headers=headers, timeout=timeout).text
    last = json.loads(answer.strip().splitlines()[-1].removeprefix("data: "))
    return last if isinstance(last, dict) else last[0] if len(last) == 1 else last


def _train(url: str, session: str, cached: str, epochs=1, minutes=15, headers: dict | None = None) -> dict | str:
    return _call(
        url,
        "train",
        [{"path": cached, "meta": {"_type": "gradio.FileData"}}, "dcnn", "", "", epochs, minutes, "none"],
        session,
        headers=headers,
    )


def _wait(url: str, session: str, job: str, seconds: float = 300) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = _call(url, "train_status", [job], session)
        if isinstance(status, dict) and status.get("status") not in ("queued", "running"):
            return status
        time.sleep(1)
    return {"status": "timeout"}


def _session() -> str:
    return secrets.token_hex(12)


def case_free_identities(url: str) -> tuple[bool, str]:
    """80 fresh REST identities ask /train twice each with a 1 MB file; a victim's finished model still answers."""
    victim = _session()
    small = _upload(url, _file(40)).json()[0]
    job = _train(url, victim, small)
    if not isinstance(job, str):  # sign-in required: nobody anonymous trains, the victim included
        victim_status = None
    else:
        victim_status = _wait(url, victim, job)
    task = victim_status.get("task") if victim_status and victim_status.get("status") == "done" else None
    before = _call(url, "predict", ["a fine film", "dcnn", task, "auto"], victim) if task else None
    big = _upload(url, _file(80, pad=12_500, seed=1))
    if big.status_code != 200:
        return False, f"the 1 MB upload was refused: HTTP {big.status_code}"
    identities = [_session() for _ in range(80)]
    sent = [(session, _train(url, session, big.json()[0], epochs=20)) for session in identities for _ in "ab"]
    accepted = [(s, a) for s, a in sent if isinstance(a, str)]
    refusals = sorted({a["error"].split(";")[0].split(" (")[0] for _, a in sent if isinstance(a, dict)})
    after = _call(url, "predict", ["a fine film", "dcnn", task, "auto"], victim) if task else None
    for session, job in accepted:  # leave the queue as it was: the cases after this one train too
        _call(url, "train_cancel", [job], session)
    victim_kept = task is None or (isinstance(after, dict) and after.get("probs") == (before or {}).get("probs"))
    figure = f"{len(accepted)} of 160 jobs accepted (bar <= 10); refusals: {'; '.join(refusals)}; " + (
        f"the victim's model {'still answers' if victim_kept else 'is GONE'}" if task else "no victim (sign-in)"
    )
    return len(accepted) <= 10 and victim_kept, figure


def case_owner_flood(url: str) -> tuple[bool, str]:
    """300 anonymous /owner calls, then a bound client still sees its job (cancelled at once: no worker trains
    meanwhile, and a cancelled job is still its owner's to see)."""
    bound, key = _session(), "redteam-bound-" + secrets.token_hex(8)
    _call(url, "owner", [key], bound)
    job = _train(url, bound, _upload(url, _file(30, seed=2)).json()[0], epochs=20)
    if not isinstance(job, str):
        return True, f"no anonymous job to lose (training refused: {job.get('error', '')[:60]})"
    _call(url, "train_cancel", [job], bound)
    refused = 0
    for _ in range(300):
        answer = _call(url, "owner", ["flood-" + secrets.token_hex(10)], timeout=10)
        refused += isinstance(answer, dict) and "error" in answer
    seen = _call(url, "train_status", [job], bound)
    held = isinstance(seen, dict) and seen.get("id") == job
    return (
        held,
        f"300 /owner calls ({refused} refused by the rate budget); "
        f"the bound client {'still sees' if held else 'LOST'} its job",
    )


def case_task_key_bits(url: str) -> tuple[bool, str]:
    """A task key's digest is 64 bits: grinding a file into another owner's task is out of reach."""
    session = _session()
    job = _train(url, session, _upload(url, _file(30, seed=3)).json()[0], epochs=20)
    if not isinstance(job, str):
        return True, f"anonymous training refused ({job.get('error', '')[:60]}): no task key to grind"
    status = _call(url, "train_status", [job], session)
    _call(url, "train_cancel", [job], session)
    bits = 4 * len(status["task"].rsplit("_", 1)[1])
    start, tries = time.perf_counter(), 200_000
    for i in range(tries):
        hashlib.sha256(b"a small labelled file %d" % i).digest()
    rate = tries / (time.perf_counter() - start)
    years = 2 ** (bits - 1) / rate / 3.15e7
    return (
        bits >= 64,
        f"task digest {bits} bits, job id {4 * len(job.rsplit('-', 1)[1])} bits: "
        f"~{years:.1e} years at {rate / 1e6:.1f} M tries/s",
    )


def case_short_session(url: str) -> tuple[bool, str]:
    """A REST session id of one character owns nothing."""
    answer = _train(url, "x", _upload(url, _file(30, seed=4)).json()[0])
    held = isinstance(answer, dict) and "too short" in (answer.get("error") or "") or "sign-in" in str(answer)
    return held, f"/train with session_hash 'x': {str(answer)[:90]}"


def case_bad_numbers(url: str) -> tuple[bool, str]:
    """/train with epochs NaN or "3" is refused in one line, not a traceback."""
    cached, lines = _upload(url, _file(30, seed=5)).json()[0], []
    for epochs in (float("nan"), "3"):
        answer = _train(url, _session(), cached, epochs=epochs)
        lines.append(str(answer.get("error") if isinstance(answer, dict) else answer)[:60])
    held = all(line and line != "None" and "number" in line for line in lines)
    return held, " | ".join(lines)


def case_upload_cache(url: str) -> tuple[bool, str]:
    """60 anonymous 9.9 MB uploads: the rate budget and the cache's cap refuse most of them."""
    codes = []
    for i in range(60):  # each file its own content: Gradio keeps one copy of identical files
        path = _file(1, pad=int(9.9e6), seed=100 + i)
        codes.append(_upload(url, path).status_code)
        path.unlink()
    accepted = codes.count(200)
    held = accepted * 9.9 <= 512 and accepted < 60
    refused = {code: codes.count(code) for code in sorted(set(codes)) if code != 200}
    return held, f"{accepted} of 60 accepted ({accepted * 9.9:.0f} MB); refused: {refused}"
