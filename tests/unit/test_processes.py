"""service.processes: a worker forked from the preloaded fork server behaves as `python -m <module>` would (its
arguments, environment, folder, streams and exit status, read through Popen's interface), without paying the
preloaded imports again."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.data import PROJECT_ROOT
from service import processes

HERE = Path(__file__).parent


def probe(tmp_path: Path, status: int = 0, **start) -> processes.Worker:
    env = {**os.environ, "PROBE": "given", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(HERE)}
    return processes.start("forked_probe", [str(status)], env, tmp_path, **start)


def test_a_forked_worker_gets_its_arguments_environment_folder_and_pipes(tmp_path):
    worker = probe(tmp_path, pipes=True)
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write("hello\n")
    worker.stdin.flush()
    seen = json.loads(worker.stdout.readline())
    assert seen["line"] == "hello" and seen["argv"] == ["0"] and seen["probe"] == "given"
    assert Path(seen["cwd"]) == tmp_path and seen["threads"] == 1
    # torch was imported by the forkserver: the worker's own CPU before its first answer is not torch's ~2.5 s
    assert seen["cpu"] < 1.0, seen
    worker.stdin.close()
    assert worker.wait(timeout=30) == 0 and worker.returncode == 0 and worker.stdout.read() == ""


def test_its_output_goes_to_its_log_and_its_exit_status_is_popens(tmp_path):
    log = tmp_path / "worker.log"
    worker = probe(tmp_path, status=3, log=log)  # its input is empty: it exits at once
    assert worker.wait(timeout=30) == 3 and worker.poll() == 3
    assert "probe: stderr" in log.read_text() and worker.stdin is None


def test_a_worker_waited_for_too_briefly_or_terminated_reads_as_popen_s(tmp_path):
    worker = probe(tmp_path, pipes=True)  # waits for input
    with pytest.raises(subprocess.TimeoutExpired):
        worker.wait(timeout=0.2)
    assert worker.poll() is None and worker.pid > 0
    worker.terminate()
    assert worker.wait(timeout=30) == -signal.SIGTERM


def test_a_worker_is_named_after_its_module(tmp_path):
    worker = probe(tmp_path, pipes=True)
    try:
        deadline = time.monotonic() + 30
        while Path(f"/proc/{worker.pid}/comm").read_text().strip() != "forked_probe":
            assert time.monotonic() < deadline, "the worker kept the forkserver's name"
            time.sleep(0.05)
    finally:
        worker.kill()
        worker.wait(timeout=30)


APP = """
import os, signal, sys
from pathlib import Path
from core.data import PROJECT_ROOT
from service import processes
env = {**os.environ, "PYTHONPATH": sys.argv[1]}
worker = processes.start("forked_probe", ["0", "--sleep"], env, Path(sys.argv[2]))
print(worker.pid, flush=True)
signal.pause()
"""


def test_the_workers_end_with_their_app_however_it_dies(tmp_path):
    """The app SIGKILLed (as the OOM killer does) while its worker sleeps: the fork server sees its socket close and
    ends, and the worker gets its parent-death signal."""
    app = subprocess.Popen(
        [sys.executable, "-c", APP, str(HERE), str(tmp_path)], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True
    )
    worker = int(app.stdout.readline())
    time.sleep(1)
    assert alive(worker)
    app.kill()
    app.wait()
    deadline = time.monotonic() + 30
    while alive(worker):
        assert time.monotonic() < deadline, "the worker outlived its app"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
