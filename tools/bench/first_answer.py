"""A newcomer's first `make demo`: a fresh clone of this repository, `make demo` in it, and the seconds until its
.venv is installed and until the app answers its first /compare. `python -m tools.bench.first_answer --help`."""

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from core.data import PROJECT_ROOT

SENTENCE = "It is not a bad film."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def compare_answered(url: str) -> bool:
    """One /compare through Gradio's REST API (docs/api.md), True once its event stream says complete."""
    body = json.dumps({"data": [SENTENCE, "auto", "auto"]}).encode()
    post = urllib.request.Request(f"{url}/gradio_api/call/compare", body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(post, timeout=10) as answer:
            event = json.load(answer)["event_id"]
        with urllib.request.urlopen(f"{url}/gradio_api/call/compare/{event}", timeout=60) as stream:
            return b"event: complete" in stream.read()
    except OSError:
        return False


def first_answer(clone: Path, timeout_s: float) -> dict:
    """Clone, `make demo` on a free port; seconds from the start to the installed venv and to the first answer."""
    subprocess.run(["git", "clone", "-q", str(PROJECT_ROOT), str(clone)], check=True)
    port = free_port()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "UV_CACHE_DIR": str(clone / ".uv-cache")}
    env["PIP_NO_CACHE_DIR"] = "1"  # a newcomer's machine has no pip cache either
    log = (clone / "demo.log").open("w")
    start = time.monotonic()
    demo = subprocess.Popen(
        ["make", "demo"], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    installed = answered = None
    try:
        while time.monotonic() - start < timeout_s and demo.poll() is None:
            if installed is None and (clone / ".venv" / ".app-installed").exists():
                installed = time.monotonic() - start
            if installed is not None and compare_answered(f"http://127.0.0.1:{port}"):
                answered = time.monotonic() - start
                break
            time.sleep(0.5)
    finally:
        os.killpg(demo.pid, signal.SIGTERM)
        demo.wait()
    installer = "uv" if (clone / ".venv" / "bin" / "uv").exists() else "pip"
    return {"installer": installer, "installed_s": installed, "answered_s": answered, "load": os.getloadavg()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timeout", type=float, default=600, help="give up after this many seconds (default 600)")
    parser.add_argument("--keep", action="store_true", help="keep the clone (its demo.log says what make printed)")
    args = parser.parse_args(argv)
    clone = Path(tempfile.mkdtemp(prefix="first-demo-")) / "lab"
    try:
        result = first_answer(clone, args.timeout)
    finally:
        if not args.keep:
            shutil.rmtree(clone.parent, ignore_errors=True)
    print(json.dumps({**result, "machine": f"{os.cpu_count()} cores, {platform.machine()}"}))
    return 0 if result["answered_s"] is not None else 1


if __name__ == "__main__":
    raise SystemExit(main())
