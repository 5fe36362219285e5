"""Training jobs on a Ray cluster (LAB_TRAIN_BACKEND=ray; web/training_ray.py starts one driver per job).

    python -m service.remote run user_models/jobs/<id>     # the driver: the job's worker, on a cluster

The driver takes the place of service.jobs' worker process: it writes the job folder exactly as that
worker does (status, live progress, per-epoch history, then done with the checkpoint installed, or failed),
so the app's status, curves, ETA, cancel and serving do not know where the job trained. The training itself
is one Ray task (`train_remote`, one CPU) that shares no file system with the app: the uploaded file and
the job's settings travel through Ray's object store, the task trains in a temporary folder of its own and
sends back, through a small actor per job (`Mailbox`), its live progress and, after every epoch, its run/
folder (core.training.train's resumable state); the driver copies both into the job folder. The best
checkpoint comes back as the task's return value and is installed here (service.user_models).

Failures, each said in one line (the ray_* codes of service.jobs.JOB_TEXT; the front end words them):
  - the task's worker is killed, the cluster still there: the task is sent again with the last run/ the app
    holds, so it resumes after its last finished epoch (MAX_RESUMES times at most);
  - the cluster cannot be reached at start, or goes away mid-job: the job fails saying so, or, with
    LAB_TRAIN_FALLBACK=local (service.settings), goes on in this process as the local worker (`service.jobs run`, from
    run/'s last epoch), and the job carries a notice that says where it trained.
The cluster must run this project's code (the same version, with its requirements and Ray's version).
"""

import dataclasses
import fcntl
import io
import logging
import os
import shutil
import signal
import socket
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayError, RayTaskError

from core.data import PROJECT_ROOT
from core.training.train import Trainer
from service.jobs import (
    MAX_RESUMES,
    JobError,
    _Progress,
    complete_job,
    fail_job,
    job_results,
    job_trainer,
    locked_job,
    read_job,
    update_job,
)
from service.settings import Settings

log = logging.getLogger(__name__)
POLL = 0.5  # seconds between the driver's looks at the task
REPLY_SECONDS = 20  # a mailbox that does not answer in this time is taken as lost with its worker
START_SECONDS = 120  # ... and one that has never answered: its worker may still be starting


class RayJobError(JobError):
    """Why a job on the cluster failed, or (as a job's "notice") how it went on: a `ray_*` code of JOB_TEXT."""


# what a cluster runs of this project: Ray ships the working tree to every node that runs one of its tasks
# (runtime_env working_dir), less what no task reads. Folders anchored at the root ("checkpoints" alone also left out
# core/checkpoints/), hidden entries as ".[!.]*" (Ray matches ".*" against the working dir itself: an empty package);
# a worker of a cluster whose Python has the project installed editable imported that copy and hid both
SHIPPED_EXCLUDES = [
    ".[!.]*",
    "/runs",
    "/user_models",
    "/checkpoints",
    "/docs",
    "/reports",
    "/tests",
    "*.egg-info",
    "*.safetensors",
]


def runtime_env() -> dict:
    """The job's Ray runtime environment: this working tree as every task's working directory and import path,
    so a node needs Ray and the requirements, not a copy of the repository on its PYTHONPATH."""
    return {"working_dir": str(PROJECT_ROOT), "excludes": SHIPPED_EXCLUDES}


def connect(address: str | None, **init) -> None:
    """ray.init with the project shipped to the cluster (runtime_env)."""
    ray.init(address=address, log_to_driver=False, configure_logging=False, runtime_env=runtime_env(), **init)


def refusal(address: str) -> tuple[str, dict]:
    """Why a head whose port answers refused this driver, as a JOB_TEXT code and its parameters: Ray 2.60 heads
    use token authentication by default, and a driver without the token only hears "failed to connect"."""
    if not os.environ.get("RAY_AUTH_TOKEN"):
        return "ray_no_token", {"address": address}
    return "ray_refused", {"address": address, "version": ray.__version__}


def reachable(address: str, seconds: float = 3.0) -> bool:
    """Whether the head's port answers: ray.init and a driver's calls wait minutes for a head that is gone."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except (OSError, ValueError):
        return False
    return True


def pack(folder: Path) -> bytes:
    """The folder as a gzipped tar in memory: what travels through the object store."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def unpack(blob: bytes, folder: Path) -> None:
    """Replace `folder` with the packed one; a reader sees the old folder or the new one, whole."""
    new, old = folder.with_name(f".{folder.name}-new"), folder.with_name(f".{folder.name}-old")
    shutil.rmtree(new, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        tar.extractall(new, filter="data")
    if folder.exists():
        folder.rename(old)
    new.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


# -- on the cluster ---------------------------------------------------------------------------------


@ray.remote(num_cpus=0)
class Mailbox:
    """What a job's task sends the app: the latest progress fields and run/ folder, until the driver takes them."""

    def __init__(self):
        self.fields, self.run = {}, None

    def report(self, fields: dict) -> None:
        self.fields.update(fields)

    def save_run(self, blob: bytes) -> None:
        self.run = blob

    def take(self) -> tuple[dict, bytes | None]:
        taken = self.fields, self.run
        self.fields, self.run = {}, None
        return taken


class _RemoteProgress(_Progress):
    """service.jobs' live progress, written to the mailbox; after each epoch also the run/ folder."""

    def __init__(self, folder: Path, job: dict, trainer: Trainer, mailbox):
        super().__init__(None, job, trainer)  # on the cluster: no app to look for, no job.json to guard
        self.folder, self.mailbox = folder, mailbox

    def write(self) -> None:
        fields = ("progress", "seconds_used", "loss", "dev", "history")
        self.mailbox.report.remote({key: self.job[key] for key in fields})

    def epoch(self, record: dict) -> None:
        # the run/ folder first: the mailbox takes calls in order, so the app never shows an epoch whose state it
        # lacks (a cluster gone just after would have the job start over while saying it went on after it)
        self.mailbox.save_run.remote(pack(self.folder / "run"))
        super().epoch(record)


@ray.remote(num_cpus=1, max_retries=0)  # not retried by Ray: the driver resends it with the newest run/
def train_remote(job: dict, data: bytes, run: bytes | None, mailbox, data_path: str) -> dict:
    """Train the job in a temporary folder (resuming from `run`, a packed run/ folder); its results
    (service.jobs.job_results) and the packed best checkpoint. `data_path` is the file's path in the app."""
    mailbox.report.remote(
        {"ray_worker": {"node": ray.util.get_node_ip_address(), "pid": os.getpid(), "started": time.time()}}
    )
    with tempfile.TemporaryDirectory(prefix="lab-job-") as tmp:
        folder = Path(tmp)
        (folder / job["data"]).write_bytes(data)
        if run is not None:
            unpack(run, folder / "run")
        trainer = job_trainer(folder, job)
        # the run records the app's file, wherever it trained: a resumed run (on the cluster or, falling back,
        # in the app) must find the settings it was saved with, and the data path is one of them
        trainer.cfg = dataclasses.replace(trainer.cfg, data=data_path)
        progress = _RemoteProgress(folder, job, trainer, mailbox)
        results = job_results(trainer, trainer.fit(on_epoch=progress.epoch))
        return {"results": results, "best": pack(folder / "run" / "best")}


# -- the driver, beside the app ---------------------------------------------------------------------


def _notice(code: str, **params) -> dict:
    return {"code": code, "params": params, "message": str(RayJobError(code, **params))}


def _follow(folder: Path, data, address: str) -> tuple[str, Any]:
    """Send the job to the cluster and copy its progress into the folder until it ends: ("done", the task's
    return), ("failed", the training's exception), ("crashed", None): its worker or mailbox was lost, or
    ("lost", None): the cluster's head no longer answers."""
    run = folder / "run"
    mailbox = Mailbox.remote()  # type: ignore[attr-defined]  # @ray.remote made it an ActorClass
    job = read_job(folder)
    task = train_remote.remote(
        job, data, pack(run) if (run / "state").is_dir() else None, mailbox, str(folder / job["data"])
    )
    lost, answered = False, False
    take, asked = mailbox.take.remote(), time.monotonic()  # one take in flight at a time: none lost in a timeout
    try:
        while True:
            time.sleep(POLL)
            if not reachable(address):
                lost = True
                return "lost", None
            ended = bool(ray.wait([task], timeout=0)[0])
            if not ended and not ray.wait([take], timeout=0)[0]:
                # a mailbox that has not answered yet is still starting: on a busy node its worker unpacks the
                # project and imports torch, which took over REPLY_SECONDS beside a loaded machine's tests
                if time.monotonic() - asked > (REPLY_SECONDS if answered else START_SECONDS):
                    return "crashed", None
                continue
            for _ in range(2 if ended else 1):  # once ended: a take asked after the task's end too
                try:
                    fields, blob = ray.get(take, timeout=REPLY_SECONDS if answered else START_SECONDS)
                except (GetTimeoutError, RayError):
                    return "crashed", None
                answered = True
                take, asked = mailbox.take.remote(), time.monotonic()
                if blob is not None:
                    unpack(blob, run)
                if fields:
                    update_job(folder, **fields)
            if ended:
                try:
                    return "done", ray.get(task)
                except RayTaskError as err:  # the training raised: its own error, not Ray's wrapper
                    return "failed", err.cause if isinstance(err.cause, Exception) else err
                except RayError:  # WorkerCrashedError, NodeDiedError, ObjectLostError...
                    return "crashed", None
    finally:
        if not lost:  # a cancel (SIGTERM) or an end: nothing of the job stays on the cluster
            ray.cancel(task, force=True)
            ray.kill(mailbox)


def _elsewhere(folder: Path, job: dict, fallback: str | None, error: str, notice: str, **params) -> dict:
    """The cluster is out of reach: fail saying so, or with the fallback "local" (Settings.train_fallback) become
    the local worker, which resumes from run/."""
    if fallback != "local":
        return fail_job(folder, job, RayJobError(error, **params))
    update_job(folder, notice=_notice(notice, **params))
    log.warning("job %s: %s", job["id"], RayJobError(notice, **params))
    # one local training at a time, as the local queue runs them: the lock passes through exec and is held
    # by the worker until it ends
    lock = os.open(folder.parent / ".local-fallback.lock", os.O_CREAT | os.O_RDWR)
    os.set_inheritable(lock, True)
    fcntl.flock(lock, fcntl.LOCK_EX)
    logging.shutdown()
    # exec, not a child: the same pid the app follows, and no Ray client left waiting for a head that is gone
    os.execv(sys.executable, [sys.executable, "-m", "service.jobs", "run", str(folder)])


def drive(folder: str | Path, settings: Settings) -> dict:
    """Run one job on the cluster to its end (the driver process's whole life), as service.jobs.run_job."""
    folder = Path(folder)
    job = update_job(folder, status="running", started=time.time(), pid=os.getpid(), backend="ray")
    address, fallback = settings.ray_address, settings.train_fallback
    if not reachable(address):
        return _elsewhere(folder, job, fallback, "ray_unreachable", "ray_local", address=address)
    try:
        connect(address)
    except (ConnectionError, RuntimeError) as err:  # a head that answers but refuses us (a token, another Ray)
        log.error("job %s: %s", job["id"], err)
        code, params = refusal(address)
        return _elsewhere(folder, job, fallback, code, "ray_refused_local", **params)
    data = ray.put((folder / job["data"]).read_bytes())
    while True:
        outcome, value = _follow(folder, data, address)
        job = read_job(folder)
        if outcome == "done":
            unpack(value["best"], folder / "run" / "best")
            with locked_job(folder):  # a cancel recorded by now wins: nothing is installed
                job = read_job(folder)
                return job if job["status"] == "cancelled" else complete_job(folder, job, value["results"])
        if outcome == "failed":
            log.error("job %s failed on the cluster: %r", job["id"], value)
            return fail_job(folder, job, value)
        epoch = len(job["history"])
        if outcome == "lost":
            return _elsewhere(
                folder, job, fallback, "ray_lost", "ray_lost_local", address=address, epoch=epoch, epochs=job["epochs"]
            )
        if job["resumes"] >= MAX_RESUMES:
            return fail_job(folder, job, RayJobError("ray_worker_lost", resumes=job["resumes"] + 1))
        log.warning("job %s: its worker was lost; sent again after epoch %d", job["id"], epoch)
        update_job(folder, resumes=job["resumes"] + 1, notice=_notice("ray_resumed", epoch=epoch))


def main(argv: list[str] | None = None) -> int:
    """`python -m service.remote run <job folder>`: the driver; a SIGTERM (the app's cancel) ends its task."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] != "run":
        print("usage: python -m service.remote run <job folder>", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))  # unwinds _follow, which cancels
    settings = Settings.at_start()
    try:
        job = drive(argv[1], settings)
    except Exception as err:  # as the local worker: every failure is reported in the job, the trace in its log
        log.exception("job in %s failed", argv[1])
        job = fail_job(Path(argv[1]), read_job(argv[1]), err)
    logging.shutdown()
    # no ray.shutdown(): with the head gone it would wait for it
    os._exit(0 if job["status"] == "done" else 1)


if __name__ == "__main__":
    sys.exit(main())
