"""One training worker per job, and none without its app (issue 41, item 2): the worker holds its job folder's
lock for its whole life, ends with the app that started it, and installs nothing once a cancel is recorded; a
restarted app resumes a job whose worker died with the old one. Tiny jobs; the workers and apps are real
processes."""

import fcntl
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.data import PROJECT_ROOT
from service import jobs
from service.jobs import (
    REFUSED,
    WORKER_LOCK,
    TrainLimits,
    TrainRequest,
    cancel_job,
    has_worker,
    read_job,
    recover_jobs,
    run_job,
    submit_job,
    update_job,
)
from service.lab import ServedLab
from service.settings import Settings
from service.user_models import installed_checkpoints
from web.training import TrainingQueue

WORDS = {"5": ["good", "great", "fun"], "1": ["bad", "dull", "awful"]}
APP = (
    "import sys, time; from service.lab import ServedLab; from service.settings import Settings; "
    "from web.training import TrainingQueue; TrainingQueue(ServedLab({}), Settings.load(), sys.argv[1], poll=0.2); "
    "time.sleep(600)"
)


def _job(tmp_path: Path, epochs: int = 1, rows: int = 80) -> tuple[Path, dict]:
    rng = random.Random(5)
    lines = []
    for i in range(rows):
        stars = rng.choice("15")
        lines.append(f"{i},the film is {rng.choice(WORDS[stars])} and long,{stars}")
    data = tmp_path / "reviews.csv"
    data.write_text("id,review,stars\n" + "\n".join(lines) + "\n", encoding="utf-8")
    root = tmp_path / "um"
    job = submit_job(TrainRequest(data, "dcnn", epochs=epochs, minutes=5), root=root, limits=TrainLimits())
    return root, job


def _folder(root: Path, job: dict) -> Path:
    return root / "jobs" / job["id"]


def _worker(folder: Path, **env) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "service.jobs", "run", str(folder)],
        cwd=PROJECT_ROOT,
        env={**os.environ, "LAB_USER_MODELS": str(folder.parents[1]), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")  # a zombie has ended; its reaper may not have collected it yet


def _workers_on(folder: Path) -> list[int]:
    """The pids of live processes that hold the job folder's worker lock open (a worker forked by the app has the
    fork server's command line, not the folder's)."""
    lock, found = str(folder / WORKER_LOCK), []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and any(os.readlink(fd) == lock for fd in (proc / "fd").iterdir()):
                found.append(int(proc.name))
        except OSError:  # it ended while being looked at
            pass
    return [pid for pid in found if _alive(pid)]


def _until(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds} s: {what}")


def test_a_second_worker_on_a_locked_folder_refuses_and_touches_nothing(tmp_path):
    root, job = _job(tmp_path)
    folder = _folder(root, job)
    update_job(folder, status="running")
    with open(folder / WORKER_LOCK, "a") as lock:  # as a worker holds it
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        assert has_worker(folder)
        assert recover_jobs(root) == [] and read_job(folder)["status"] == "running"  # never queued while held
        second = _worker(folder)
        out, err = second.communicate(timeout=120)
        assert second.returncode == REFUSED
        assert err.strip().splitlines() == [f"job {job['id']} already has a worker; this one exits and changes nothing"]
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
        assert not (folder / "run").exists()
    assert not has_worker(folder)  # the kernel released it with the file
    assert [j["status"] for j in recover_jobs(root)] == ["queued"] and read_job(folder)["restarts"] == 1


def test_a_cancel_recorded_before_the_worker_installs_means_nothing_is_installed(tmp_path, monkeypatch):
    root, job = _job(tmp_path)
    folder = _folder(root, job)
    fit = jobs.Trainer.fit

    def cancelled_at_the_end(trainer, *args, **kwargs):  # the cancel arrives after the last epoch, before install
        metrics = fit(trainer, *args, **kwargs)
        assert cancel_job(job["id"], root)["status"] == "cancelled"
        return metrics

    monkeypatch.setattr(jobs.Trainer, "fit", cancelled_at_the_end)
    assert run_job(folder)["status"] == "cancelled"
    assert read_job(folder)["status"] == "cancelled" and installed_checkpoints(root) == []
    assert run_job(folder)["status"] == "cancelled" and installed_checkpoints(root) == []  # nor does a later worker
    finished = read_job(folder)["finished"]
    assert cancel_job(job["id"], root)["finished"] == finished  # a second cancel changes nothing


def test_a_worker_whose_app_is_gone_stops_at_the_next_batch_and_leaves_the_job_to_resume(tmp_path, monkeypatch):
    root, job = _job(tmp_path, epochs=2)
    folder = _folder(root, job)
    app, calls = os.getppid(), []

    def parent() -> int:  # the app dies during the first epoch: the worker's parent becomes another process
        calls.append(1)
        return app if len(calls) < 4 else 1

    monkeypatch.setattr(jobs.os, "getppid", parent)
    assert run_job(folder, parent=app)["status"] == "running"
    stored = read_job(folder)
    assert stored["loss"] and stored["history"] == [] and stored["error"] is None and stored["metrics"] is None
    assert installed_checkpoints(root) == [] and [j["status"] for j in recover_jobs(root)] == ["queued"]


def test_a_cancel_after_a_restart_stops_the_old_worker(tmp_path):
    """The old worker (started here, as a dead app's worker still running) trains; the new app's queue leaves
    the job to it (its lock is held), and the new app's cancel stops it: nothing is installed."""

    root, job = _job(tmp_path, epochs=20, rows=400)
    folder = _folder(root, job)
    old = _worker(folder)
    _until(lambda: has_worker(folder) and read_job(folder)["progress"] > 0, 120, "the old worker trains")
    queue = TrainingQueue(ServedLab({}), Settings.load(), root, poll=0.1)
    try:
        assert queue.worker is None and read_job(folder)["status"] == "running"
        assert queue.cancel(job["id"])["status"] == "cancelled"
        old.communicate(timeout=60)
        assert old.returncode == 1 and read_job(folder)["status"] == "cancelled"
        time.sleep(5 * queue.poll)  # the queue had its chances to start a worker on the job
        assert queue.worker is None and installed_checkpoints(root) == []
    finally:
        queue.stopped.set()
        old.kill()


@pytest.mark.slow
def test_a_killed_app_takes_its_worker_and_a_restart_resumes_the_job_once(tmp_path):
    """SIGKILL of the app alone (as the OOM killer does) in the middle of training: its worker goes; the next
    app queues the job again and a new worker resumes it from the saved epoch. Never two workers on the job; it
    ends done once, with one installed model. Two epochs: the kill comes in the second (an epoch of 400 rows lasts
    longer than the few checks between the first epoch's save and the kill), the new worker trains it. The app
    killed is a process of its own; the next app is this process's TrainingQueue, the same scheduler that an app
    runs (its worker a real process all the same), without the ~10 CPU-s of imports a second app would cost."""
    root, job = _job(tmp_path, epochs=2, rows=400)
    folder = _folder(root, job)
    first = subprocess.Popen([sys.executable, "-c", APP, str(root)], cwd=PROJECT_ROOT)
    queue = None
    try:
        _until(lambda: read_job(folder)["history"], 240, "a first epoch saved")
        old = read_job(folder)["pid"]
        assert _alive(old) and _workers_on(folder) == [old]
        first.send_signal(signal.SIGKILL)
        first.wait()
        _until(lambda: not _alive(old), 10, "the worker ends with its app")
        assert read_job(folder)["status"] == "running"
        queue = TrainingQueue(ServedLab({}), Settings.load(), root, poll=0.2)
        seen = set()
        deadline = time.monotonic() + 240
        while (status := read_job(folder)["status"]) != "done" and time.monotonic() < deadline:
            workers = _workers_on(folder)
            assert len(workers) <= 1, f"two workers on one job: {workers}"
            seen.update(workers)
            time.sleep(0.1)
        assert status == "done", read_job(folder)
        done = read_job(folder)
        assert old not in seen and done["pid"] != old
        assert (done["resumes"], done["restarts"]) == (1, 1)
        assert [r["epoch"] for r in done["history"]] == [1, 2]
        assert [p.parent.name for p in installed_checkpoints(root)] == [job["task"]]
        assert (folder / "worker.log").read_text().count("resumed") == 1
    finally:
        if queue is not None:
            queue.stopped.set()  # its worker, if any, ends with the scheduler's thread
        if first.poll() is None:
            first.kill()
            first.wait()
