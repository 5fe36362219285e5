"""Training jobs: a user's file and settings become a queued job, a worker process trains it, and the best
checkpoint is installed where the lab loads it (service.user_models).

    job = submit_job(TrainRequest("reviews.csv", "dcnn", "review", "stars", epochs=3))  # checked now, queued
    python -m service.jobs run user_models/jobs/<id>                              # the worker (one at a time)

A job is one folder, jobs/<id>/, holding the uploaded file, `job.json` (its settings, status, progress, the
seconds of its time budget used, per-epoch history and, when done, its test metrics) and run/
(core.training.train's output, so a killed worker resumes from its last epoch). Every write of job.json is
atomic, so a reader sees the old state or the new one, and every change of it is made under job.lock, so that
no writer undoes another's. Statuses: queued -> running -> done | failed | cancelled | stopped (the worker was
killed and not resumed). Who writes: the submitter creates the job, the worker writes it while it runs, a
cancel is recorded at once (cancel_job), the scheduler (web/training.py, which starts the worker) records
stopped when a worker died silently. Queued jobs start in turns between clients, not by arrival (queue_order:
an anonymous visitor's network address, a signed-in user's owner id), and a job's queue position is its turn.

One worker per job, and none without its app: a worker holds worker.lock (an flock, which the kernel releases
when the process dies, however it dies) for its whole life, and a second one on the same folder refuses to
start. It ends with the app that started it (Linux PR_SET_PDEATHSIG, and a parent check at every batch), and
it installs nothing once a cancel is recorded: it looks, under job.lock, at every write and right before
installing. On a Ray cluster (Settings.train_backend="ray") a driver, service.remote, takes the
worker's place. A job belongs to its owner (service.owners): asked with an owner, another owner's job is
an unknown one. Core returns codes with parameters (JobError, UserDataError); the front end words them.
"""

import ctypes
import fcntl
import json
import logging
import math
import os
import re
import secrets
import shutil
import signal
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from core.checkpoints.checkpoint import WEIGHTS, atomic_write_text
from core.checkpoints.files import sha256
from core.data.user import read_rows, user_task_name
from core.gitinfo import git_commit
from core.models import PAPER_MODELS
from core.notices import NoticeError
from core.training.config import TrainConfig
from core.training.train import DEGENERATE_TEXT, STOP_TEXT, Trainer, stop_record
from service.budgets import is_signed_in_client
from service.owners import PUBLIC
from service.settings import DEFAULTS, Settings
from service.store import open_store
from service.user_models import install_checkpoint, user_models_dir

log = logging.getLogger(__name__)
JOB_FILE = "job.json"
JOB_LOCK, WORKER_LOCK = "job.lock", "worker.lock"  # held for one change of job.json / for a worker's life
ACTIVE, FINISHED = ("queued", "running"), ("done", "failed", "cancelled", "stopped")
MAX_RESUMES = 2  # a job queued again this often (after restarts of the app) is reported as stopped
VECTORS = ("none", "auto")  # random embeddings, or the pretrained ones of the file's language when present
LOSS_POINTS = 400  # the live loss curve keeps at most this many points (halved when full)
LOSS_POINTS_PER_EPOCH = 50  # a loss point per batch, or the mean of each 1/50 of a longer epoch
# an epoch of a visitor's file makes at least this many updates (core.training.config.small_file_batch): on a
# 200-row file every model then beats the majority class in one epoch (docs/training.md)
JOB_MIN_UPDATES = 40
JOB_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")  # checked before the id touches the disk, a log or a message
JOB_ID_BITS = 64  # random bits in a new job's id: nobody can guess or grind one

JOB_TEXT = {
    "no_file": "choose a CSV, TSV or JSONL file to train on",
    "unknown_model": "model '{model}' cannot be trained here; choose one of {models}",
    "bad_epochs": "epochs must be a whole number from 1 to {max_epochs}, got {value}",
    "bad_minutes": "the time budget must be from 0.5 to {max_minutes} minutes, got {value}",
    "bad_vectors": "vectors must be one of {choices}, got '{value}'",
    "unknown_job": "there is no training job '{job}'",
    "too_many_jobs": (
        "you already have {max_jobs} training jobs waiting or running; wait for one to finish or cancel one"
    ),
    "too_many_jobs_client": (
        "{max_jobs} training jobs from your network are waiting or running already; wait for one to finish"
    ),
    "queue_full": (
        "the training queue is full ({max_jobs} jobs waiting or running in this Space); try again in a few minutes"
    ),
    "no_owner": "this session cannot own a training job: call /owner first, or use a session id of 16+ characters",
    "model_taken": "the model '{model}' of task '{task}' belongs to someone else; nothing was installed",
    # a job on a Ray cluster (service.remote): why it failed, or (as its "notice") how it went on
    "ray_unreachable": "the training cluster at {address} cannot be reached; try again later",
    "ray_no_token": (
        "the training cluster at {address} refused this app, which has no token: set RAY_AUTH_TOKEN to the "
        "cluster's token (Ray heads use token authentication by default)"
    ),
    "ray_refused": (
        "the training cluster at {address} refused this app: check that RAY_AUTH_TOKEN is the cluster's token "
        "and that the cluster runs Ray {version}"
    ),
    "ray_refused_local": "the training cluster at {address} refused this app: trained on this machine instead",
    "ray_lost": (
        "the training cluster at {address} went away after epoch {epoch} of {epochs}; "
        "start the training again when it is back"
    ),
    "ray_worker_lost": "the training cluster lost this job's worker {resumes} times; start the training again",
    "ray_resumed": "its worker on the training cluster was lost; resumed there after epoch {epoch}",
    "ray_local": "the training cluster at {address} cannot be reached: trained on this machine instead",
    "ray_lost_local": "the training cluster at {address} went away: went on on this machine after epoch {epoch}",
    "disk_full": (
        "the space for trained models is full ({max_mb:.0f} MB); nobody's model is removed to make room, "
        "try again later"
    ),
    "not_done": "job {job} has not finished ({status}): there is no model to publish yet",
    "no_token": "log in with Hugging Face or paste a write token to publish",
    "bad_repo": "'{repo}' is not a Hub model repo name (owner/name)",
    "hub_offline": "the Hugging Face Hub is not reachable from here (HF_HUB_OFFLINE is set): the model stays local",
    "hub_failed": "publishing to the Hub failed: {error}",
    **STOP_TEXT,  # why a job's training ended (its "stop")
    **DEGENERATE_TEXT,  # a model no better than the commonest class (its "degenerate")
}


class JobError(NoticeError):
    """A job request we cannot take: `code` (a key of JOB_TEXT) and its `params`."""

    TEXT = JOB_TEXT


@dataclass
class TrainLimits:
    """What one job may use, and how many jobs may wait or run at once: per owner, per client address (owners
    cost nothing to make where no sign-in is needed) and in the whole Space. The defaults fit a free CPU Space
    (2 vCPU, one worker): a few minutes per job, and a queue that empties within about two hours."""

    max_bytes: int = DEFAULTS.train_max_bytes
    max_rows: int = DEFAULTS.train_max_rows
    max_epochs: int = DEFAULTS.train_max_epochs
    max_minutes: float = DEFAULTS.train_max_minutes
    max_jobs_per_owner: int = DEFAULTS.train_max_jobs_per_owner
    max_jobs_per_client: int = DEFAULTS.train_max_jobs_per_client  # anonymous jobs from one network address
    max_active_jobs: int = DEFAULTS.train_max_active_jobs
    max_signed_in_jobs_per_client: int = DEFAULTS.train_max_signed_in_jobs_per_client  # signed-in users' jobs

    @classmethod
    def from_settings(cls, settings: Settings) -> "TrainLimits":
        return cls(
            settings.train_max_bytes,
            settings.train_max_rows,
            settings.train_max_epochs,
            settings.train_max_minutes,
            settings.train_max_jobs_per_owner,
            settings.train_max_jobs_per_client,
            settings.train_max_active_jobs,
            settings.train_max_signed_in_jobs_per_client,
        )


def jobs_dir(root: str | Path | None = None) -> Path:
    return Path(root or user_models_dir()) / "jobs"


def read_job(job_dir: str | Path) -> dict:
    return json.loads((Path(job_dir) / JOB_FILE).read_text(encoding="utf-8"))


def write_job(job_dir: str | Path, job: dict) -> None:
    atomic_write_text(Path(job_dir) / JOB_FILE, json.dumps(job, ensure_ascii=False, indent=1))


@contextmanager
def locked_job(job_dir: str | Path):
    """One change of job.json at a time, across processes (a read, then a write that depends on it)."""
    with open(Path(job_dir) / JOB_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def update_job(job_dir: str | Path, **fields) -> dict:
    with locked_job(job_dir):
        job = {**read_job(job_dir), **fields}
        write_job(job_dir, job)
    return job


def has_worker(job_dir: str | Path) -> bool:
    """Whether a worker process holds the job folder's lock now (the lock dies with its process)."""
    path = Path(job_dir) / WORKER_LOCK
    if not path.exists():
        return False
    with open(path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False  # closing the file released the lock just taken


def cancel_job(job_id: str, root: str | Path | None = None) -> dict:
    """Record the cancel of a queued or running job at once; its worker, whichever process it is (an old one
    too), stops at its next write and installs nothing. A finished job stays as it is."""
    folder = job_dir(job_id, root)
    with locked_job(folder):
        job = read_job(folder)
        if job["status"] in ACTIVE:
            job = {**job, "status": "cancelled", "finished": time.time()}
            if job["started"]:  # a job that trained says where it was; a waiting one was only "cancelled"
                epoch = min(int(job["progress"]) + 1, job["epochs"])  # the epoch under way
                job["stop"] = stop_record("stop_cancelled", epoch=epoch, epochs=job["epochs"])
            write_job(folder, job)
    return job


_parsed: dict[Path, tuple[tuple, dict]] = {}  # job.json -> (its stat when read, the job): list_jobs reads only changes


def _read_cached(path: Path) -> dict | None:
    """The job in `path` as last written (every write replaces the file, so a new inode, size or mtime);
    None when it went away meanwhile (cleaned up)."""
    try:
        st = path.stat()
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        if (hit := _parsed.get(path)) is None or hit[0] != key:
            _parsed[path] = hit = (key, read_job(path.parent))
    except FileNotFoundError:
        return None
    return dict(hit[1])


def list_jobs(root: str | Path | None = None) -> list[dict]:
    """Every job, oldest first (a job still being created, in its hidden staging folder, is not one yet).
    Each job.json is parsed again only when it has changed since the last call."""
    folder = jobs_dir(root)
    paths = [p for p in folder.glob(f"*/{JOB_FILE}") if not p.parent.name.startswith(".")] if folder.is_dir() else []
    present = set(paths)
    for gone in [p for p in list(_parsed) if p.parent.parent == folder and p not in present]:
        _parsed.pop(gone, None)
    jobs = [job for job in map(_read_cached, paths) if job is not None]
    return sorted(jobs, key=lambda j: (j["created"], j["id"]))


def job_dir(job_id: str, root: str | Path | None = None, owner: str | None = None) -> Path:
    """The job's folder; JobError "unknown_job" for a malformed id, no such job or, when `owner` is given,
    another owner's (worded as for no job at all: nothing says it exists)."""
    if not isinstance(job_id, str) or not JOB_ID.fullmatch(job_id):
        raise JobError("unknown_job", job=str(job_id)[:40])
    folder = jobs_dir(root) / job_id
    if not (folder / JOB_FILE).is_file():
        raise JobError("unknown_job", job=job_id[:40])
    if owner is not None and read_job(folder).get("owner", PUBLIC) != owner:
        raise JobError("unknown_job", job=job_id[:40])
    return folder


@dataclass(frozen=True)
class TrainRequest:
    """What one training asks for, named from the Train tab (or /train) to submit_job: the uploaded file, its
    columns ("": detected), the model and the settings. Checked by submit_job, not here: a REST caller may send
    anything JSON holds."""

    file: str | Path | None
    model: str
    text_column: str = ""
    label_column: str = ""
    epochs: int = 3
    minutes: float | None = None  # None or 0: the server's maximum
    vectors: str = "none"


def submit_job(
    request: TrainRequest,
    root: str | Path | None = None,
    limits: TrainLimits | None = None,
    owner: str = PUBLIC,
    client: str = "",
) -> dict:
    """Check the request and its file (read_rows: every UserDataError now, while the user waits), copy the
    file into a new job folder and queue it for `owner` (service.owners), whose task it makes. Nothing is written
    when a check fails, or when the owner, its `client` (a hash of its network address: service.budgets) or
    the whole Space already has its quota of jobs waiting or running ("" for a client: not counted per address;
    a signed-in user's client, service.budgets.signed_in_client, has its own cap)."""
    limits = limits or TrainLimits.from_settings(Settings.load())
    if not request.file:
        raise JobError("no_file")
    if request.model not in PAPER_MODELS:
        raise JobError("unknown_model", model=request.model, models=", ".join(PAPER_MODELS))
    epochs = request.epochs
    if not finite_number(epochs) or epochs != int(epochs) or not 1 <= epochs <= limits.max_epochs:
        raise JobError("bad_epochs", max_epochs=limits.max_epochs, value=str(epochs)[:20])
    minutes = limits.max_minutes if request.minutes in (None, 0) else request.minutes
    if not finite_number(minutes) or not 0.5 <= minutes <= limits.max_minutes:
        raise JobError("bad_minutes", max_minutes=limits.max_minutes, value=str(minutes)[:20])
    if request.vectors not in VECTORS:
        raise JobError("bad_vectors", choices=", ".join(VECTORS), value=str(request.vectors)[:20])
    active = [j for j in list_jobs(root) if j["status"] in ACTIVE]
    if sum(j.get("owner", PUBLIC) == owner for j in active) >= limits.max_jobs_per_owner:
        raise JobError("too_many_jobs", max_jobs=limits.max_jobs_per_owner)
    per_client = limits.max_signed_in_jobs_per_client if is_signed_in_client(client) else limits.max_jobs_per_client
    if client and sum(j.get("client") == client for j in active) >= per_client:
        raise JobError("too_many_jobs_client", max_jobs=per_client)
    if len(active) >= limits.max_active_jobs:
        raise JobError("queue_full", max_jobs=limits.max_active_jobs)
    file = Path(request.file)
    rows = read_rows(file, request.text_column or "", request.label_column or "", limits.max_bytes, limits.max_rows)
    job_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(JOB_ID_BITS // 8)
    job: dict[str, Any] = {
        "id": job_id,
        "status": "queued",
        "created": time.time(),
        "started": None,
        "finished": None,
        "owner": owner,
        "client": client,
        "title": f"{file.name} · {time.strftime('%Y-%m-%d %H:%M')}",  # what people see: no month name
        "file": file.name,
        "data": "data" + file.suffix.lower(),
        "model": request.model,
        "task": user_task_name(file, rows.text_column, rows.label_column, owner),
        "text_column": rows.text_column,
        "label_column": rows.label_column,
        "lang": rows.lang,
        "labels": rows.label_names,
        "rows": len(rows.texts),
        "epochs": int(epochs),
        "minutes": float(minutes),
        "vectors": request.vectors,
        "resumes": 0,
        "restarts": 0,
        "progress": 0.0,
        "loss": [],
        "dev": [],
        "history": [],
        "metrics": None,
        "error": None,
    }
    folder = jobs_dir(root) / job_id
    staging = folder.with_name(f".{job_id}")  # renamed into place complete: a job is all there or not at all
    staging.mkdir(parents=True)
    shutil.copyfile(file, staging / job["data"])
    write_job(staging, job)
    staging.rename(folder)
    log.info("job %s queued: %s on %s (%d rows, %s)", job_id, request.model, file.name, len(rows.texts), rows.lang)
    return job


def finite_number(value) -> bool:
    """A finite int or float (not a bool, a string or NaN): what a REST caller may send is anything JSON holds."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def job_client(job: dict) -> tuple[str, str]:
    """Whom the queue takes turns between: an anonymous job's network address (its `client`), else its owner (a
    signed-in user, from wherever they connect: their client is marked, service.budgets; or the operator's PUBLIC)."""
    client = job.get("client")
    return ("client", client) if client and not is_signed_in_client(client) else ("owner", job.get("owner", PUBLIC))


def queue_order(jobs: list[dict]) -> list[dict]:
    """The queued jobs of `jobs` in the order they start: each turn goes to the client (job_client) served least
    recently, one never served first (the longest waiting of them), then by its last job's start; it starts that
    client's oldest job. So one address's many long jobs hold another's job for at most one of theirs."""
    waiting: dict[tuple[str, str], list[dict]] = {}
    served: dict[tuple[str, str], tuple[int, float]] = {}  # (0, last start) of a client that trained, (1, turn) here
    for job in sorted(jobs, key=lambda j: (j["created"], j["id"])):
        client = job_client(job)
        if job["status"] == "queued":
            waiting.setdefault(client, []).append(job)
        if job.get("started"):  # a running or finished job, or a queued one that ran before an app restart
            served[client] = max(served.get(client, (0, 0.0)), (0, job["started"]))
    order: list[dict] = []
    while waiting:
        turn = min(waiting, key=lambda c: (served.get(c, (-1, 0.0)), waiting[c][0]["created"], waiting[c][0]["id"]))
        order.append(waiting[turn].pop(0))
        served[turn] = (1, len(order))  # served after every real start, in the order of these turns
        if not waiting[turn]:
            del waiting[turn]
    return order


def queue_position(job: dict, jobs: list[dict]) -> int | None:
    """1 for the next job to start, 2 for the one after it... (queue_order); None when the job is not waiting."""
    ids = [j["id"] for j in queue_order(jobs)] if job["status"] == "queued" else []
    return ids.index(job["id"]) + 1 if job["id"] in ids else None


def job_status(job_id: str, root: str | Path | None = None, owner: str | None = None) -> dict:
    """The job as stored, plus its queue position and, while it runs, the seconds it has left (the
    elapsed time scaled by the part not yet done, at most the rest of its time budget). With an `owner`,
    only that owner's job (job_dir)."""
    folder = job_dir(job_id, root, owner)  # an unknown or malformed id, another owner's job: JobError
    try:
        job = read_job(folder)
    except FileNotFoundError:  # removed (service.cleanup) since job_dir looked
        raise JobError("unknown_job", job=job_id[:40]) from None
    # only a waiting job needs the others (parsed again only where changed): how many wait before it
    job["queue_position"] = queue_position(job, list_jobs(root)) if job["status"] == "queued" else None
    job["eta_seconds"] = None
    if job["status"] == "running" and job["started"]:
        elapsed, done = time.time() - job["started"], job["progress"] / job["epochs"]
        if done > 0:
            left = job["minutes"] * 60 - job.get("seconds_used", 0.0)  # every run's seconds, this one's so far
            job["eta_seconds"] = max(0.0, min(elapsed * (1 - done) / done, left))
    return job


def next_queued(root: str | Path | None = None) -> dict | None:
    """The job to start next (queue_order), or None when none waits."""
    return next(iter(queue_order(list_jobs(root))), None)


def recover_jobs(root: str | Path | None = None) -> list[dict]:
    """After an app restart: a job left running lost its worker; it is queued again to resume from its
    last saved epoch with what its time budget has left (seconds_used), or reported stopped once it was queued
    again MAX_RESUMES times. A job whose folder lock is still held keeps its worker (one on its way out, or
    started from the command line) and is left alone. Returns the jobs changed."""
    changed = []
    for job in list_jobs(root):
        folder = jobs_dir(root) / job["id"]
        if job["status"] != "running" or has_worker(folder):
            continue
        with locked_job(folder):
            job = read_job(folder)
            if job["status"] != "running":  # finished or cancelled since it was listed
                continue
            restarts = job.get("restarts", 0)
            if restarts < MAX_RESUMES:
                job.update(status="queued", restarts=restarts + 1)
            else:
                job.update(
                    status="stopped", finished=time.time(), error={"code": "stopped", "params": {"restarts": restarts}}
                )
            write_job(folder, job)
        changed.append(job)
    return changed


# -- the worker ------------------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1  # linux/prctl.h
REFUSED = 3  # the worker's exit status when its job folder already has a worker


class _Stop(Exception):
    """The worker stops without a verdict of its own: its job was cancelled, or its app is gone (the job
    stays running, and the next app queues it again to resume)."""


class _Writer:
    """The worker's writes of its job: each one first looks at what is recorded, under job.lock, so that it
    never overwrites a cancel, and at the app that started it."""

    def __init__(self, folder: Path, parent: int):
        self.folder, self.parent = folder, parent

    def check_app(self) -> None:
        if os.getppid() != self.parent:  # the app died, and this process was handed to another
            raise _Stop(f"its app (pid {self.parent}) is gone")

    @contextmanager
    def checked(self):
        self.check_app()
        with locked_job(self.folder):
            if read_job(self.folder)["status"] == "cancelled":
                raise _Stop("cancelled")
            yield

    def write(self, job: dict) -> None:
        with self.checked():
            write_job(self.folder, job)


class _Progress:
    """Writes the job's live progress at most twice a second: the epoch fraction, the training loss (a point
    per batch, or per group of batches on a long epoch) and every dev evaluation so far, so that a job of a few
    seconds draws its curves while it runs. The app's presence is looked at every batch."""

    def __init__(self, writer: "_Writer | None", job: dict, trainer: Trainer):
        self.writer, self.job, self.trainer, self.last = writer, job, trainer, 0.0
        self.losses: list[float] = []  # this group of batches' training losses
        self.dev_before: list | None = None  # the dev points of the epochs done; None before the first step
        trainer.on_batch = self.batch

    def batch(self, step: int, steps: int, loss: float) -> None:
        if self.writer is not None:
            self.writer.check_app()
        if self.dev_before is None:  # the first step (of a resumed run: after its saved epochs)
            self.job["loss"] = [p for p in self.job["loss"] if p[0] <= self.trainer.epoch]
            self.dev_before = [p for p in self.job.get("dev", []) if p[0] <= self.trainer.epoch]
            self.job["history"] = list(self.trainer.history)
        epoch = self.trainer.epoch + step / steps
        self.losses.append(loss)
        if len(self.losses) * LOSS_POINTS_PER_EPOCH >= steps or step == steps:
            points = self.job["loss"]
            points.append([round(epoch, 4), sum(self.losses) / len(self.losses)])
            if len(points) > LOSS_POINTS:
                points[:] = points[::2]
            self.losses = []
        self.job["dev"] = self.dev_before + [
            [round(self.trainer.epoch + at / steps, 4), accuracy] for at, accuracy in self.trainer.epoch_devs
        ]
        if time.monotonic() - self.last < 0.5 and step < steps:
            return
        self.last = time.monotonic()
        self.job.update(progress=epoch, seconds_used=self.trainer.seconds_spent())
        self.write()

    def epoch(self, record: dict) -> None:
        self.job["history"] = list(self.trainer.history)
        self.job.update(progress=float(record["epoch"]), seconds_used=self.trainer.seconds_spent())
        self.dev_before = list(self.job["dev"])
        self.write()

    def write(self) -> None:  # a job trained on a Ray cluster sends it to the app instead (service.remote)
        self.writer.write(self.job)  # type: ignore[union-attr]  # None only in remote's _RemoteProgress, which overrides write


def train_config(folder: Path, job: dict) -> TrainConfig:
    """The core.training.train settings of a job: one torch thread, resumable from its own run/ folder."""
    return TrainConfig(
        model=job["model"],
        task=job["task"],
        data=str(folder / job["data"]),
        text_column=job["text_column"],
        label_column=job["label_column"],
        epochs=job["epochs"],
        max_minutes=job["minutes"],
        vectors=job["vectors"],
        min_updates=JOB_MIN_UPDATES,
        out=str(folder / "run"),
        resume=True,
        progress=False,
        threads=1,
    )


def job_trainer(folder: Path, job: dict) -> Trainer:
    """The job's trainer (train_config), with the seconds of its time budget that earlier runs spent (a resumed
    job's "seconds_used", which _Progress records): the minutes are the job's, however often it resumes."""
    trainer = Trainer.from_config(train_config(folder, job))
    trainer.seconds_before = job.get("seconds_used", 0.0)
    return trainer


def job_results(trainer: Trainer, metrics: dict) -> dict:
    """What a finished job records of its run: epochs, history and the test metrics of its best checkpoint."""
    test = metrics["test"]
    return {
        "progress": float(trainer.epoch),
        "seconds_used": trainer.seconds_spent(),
        "history": trainer.history,
        "metrics": {
            "test_accuracy": test["accuracy"],
            "test_examples": test["n"],
            "confusion": test["confusion"],
            "per_class": test["per_class"],
            "dev_accuracy": metrics["dev_accuracy"],
            "best_epoch": metrics["best_epoch"],
            "epochs_run": metrics["epochs_run"],
            "train_examples": metrics["train_examples"],
            "labels": trainer.task.labels,
        },
        "stop": metrics["stop"],
        "degenerate": metrics["degenerate"],  # a model that answers one class, or no better than the commonest
    }


def complete_job(folder: Path, job: dict, results: dict) -> dict:
    """Install run/best for the job's owner and record the job done with `results` (job_results). The job first
    claims its (task, model) in the owner store: another owner's model is never replaced (JobError)."""
    root, owner = folder.parents[1], job.get("owner", PUBLIC)
    store = open_store(root)
    try:
        if not store.claim_model(job["task"], job["model"], owner, job["id"]):
            raise JobError("model_taken", task=job["task"], model=job["model"])
    finally:
        store.close()
    installed = install_checkpoint(folder / "run" / "best", root, owner, job.get("title", ""))
    # what the Lab's captions name: the weights installed and the code that trained them
    job.update(status="done", finished=time.time(), checkpoint=str(installed), **results)
    job.update(sha256=sha256(installed / WEIGHTS), commit=git_commit())
    write_job(folder, job)
    return job


def fail_job(folder: Path, job: dict, err: Exception) -> dict:
    """Record the job failed with `err`'s code and parameters (a NoticeError's) and its English."""
    job.update(
        status="failed",
        finished=time.time(),
        error={
            "code": getattr(err, "code", "error"),
            "params": getattr(err, "params", {}),
            "message": f"{type(err).__name__}: {err}",
        },
    )
    write_job(folder, job)
    return job


def run_job(folder: str | Path, parent: int | None = None) -> dict:
    """Train one job to the end (the worker process's whole life, under its folder lock): status running,
    live progress, then done with the test metrics and the checkpoint installed, or failed with the error.
    A job that is cancelled, or whose app (`parent`, by default the process that started this one) ends,
    before or while it trains, is left as recorded: cancelled, or running for the next app to resume."""
    folder = Path(folder)
    writer = _Writer(folder, os.getppid() if parent is None else parent)
    try:
        with writer.checked():
            job = read_job(folder)
            if job["status"] not in ACTIVE:
                raise _Stop(f"the job is {job['status']} already")
            resumed = (folder / "run" / "state").exists()  # a real resume: a worker before this one saved epochs
            job.update(status="running", started=time.time(), pid=os.getpid(), resumes=job["resumes"] + resumed)
            write_job(folder, job)
        try:
            trainer = job_trainer(folder, job)
            results = job_results(trainer, trainer.fit(on_epoch=_Progress(writer, job, trainer).epoch))
            with writer.checked():  # a cancel recorded by now wins: nothing is installed
                complete_job(folder, job, results)
        except _Stop:
            raise
        except Exception as err:  # the worker reports every failure in the job; the trace goes to its log
            log.exception("job %s failed", job["id"])
            with writer.checked():
                fail_job(folder, job, err)
    except _Stop as stop:
        log.info("job %s: this worker stops, %s", folder.name, stop)
        return read_job(folder)
    return job


def _end_with_parent() -> None:
    """Ask Linux for SIGTERM when the thread that started this process ends (so with its app, however the
    app dies). Elsewhere, and should the app die before this call, the parent check in run_job does it."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def main(argv: list[str] | None = None) -> int:
    """`python -m service.jobs run <job folder>`: the worker. It yields the CPU to the app: the lowest priority
    (nice 19: Linux then gives the app's threads about 98% of a core they both want, and the worker all the CPU
    the app leaves idle) and one torch thread. Its app is the process that started it: the app's fork server
    (service.processes), which ends with the app, or whoever ran the command."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] != "run":
        print("usage: python -m service.jobs run <job folder>", file=sys.stderr)
        return 2
    _end_with_parent()
    parent = os.getppid()
    folder = Path(argv[1])
    if not (folder / JOB_FILE).is_file():
        print(f"{folder} is not a training job folder (no {JOB_FILE})", file=sys.stderr)
        return 2
    with open(folder / WORKER_LOCK, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"job {folder.name} already has a worker; this one exits and changes nothing", file=sys.stderr)
            return REFUSED
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
        os.nice(19 - os.nice(0))  # predictions in the app come first
        torch.set_num_threads(1)
        return 0 if run_job(folder, parent)["status"] == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
