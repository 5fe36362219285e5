"""Training jobs: a user's file and settings become a queued job, a worker process trains it, and the best
checkpoint is installed where the lab loads it (core.checkpoints.user_models).

    job = submit_job("reviews.csv", "dcnn", "review", "stars", epochs=3)      # checked now, queued
    python -m core.training.jobs run user_models/jobs/<id>                              # the worker (one at a time)

A job is one folder, jobs/<id>/, holding the uploaded file, `job.json` (its settings, status, progress,
per-epoch history and, when done, its test metrics) and run/ (core.training.train's output, so a killed worker
resumes from its last epoch). Every write of job.json is atomic, so a reader sees the old state or the
new one. Statuses: queued -> running -> done | failed | cancelled | stopped (the worker was killed and
not resumed). Who writes: the submitter creates the job, the worker writes it while it runs, the
scheduler (demo/training.py, which starts the worker) records cancelled/stopped once the worker is gone.
On a Ray cluster (LAB_TRAIN_BACKEND=ray) a driver, core.training.remote, takes the worker's place.
A job belongs to its owner (core.owners): asked with an owner, another owner's job is an unknown one.
Core returns codes with parameters (JobError, UserDataError); the front end words them.
"""

import json
import logging
import os
import secrets
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from core.checkpoints.checkpoint import atomic_write_text
from core.data.user import read_rows, user_task_name
from core.models import PAPER_MODELS
from core.notices import NoticeError
from core.owners import PUBLIC
from core.training.config import TrainConfig
from core.training.train import Trainer
from core.checkpoints.user_models import install_checkpoint, user_models_dir

log = logging.getLogger(__name__)
JOB_FILE = "job.json"
ACTIVE, FINISHED = ("queued", "running"), ("done", "failed", "cancelled", "stopped")
MAX_RESUMES = 2  # a worker killed this often (by a restart of the app) is reported as stopped
VECTORS = ("none", "auto")  # random embeddings, or the pretrained ones of the file's language when present
LOSS_POINTS = 400  # the live loss curve keeps at most this many points (halved when full)

JOB_TEXT = {
    "no_file": "choose a CSV, TSV or JSONL file to train on",
    "unknown_model": "model '{model}' cannot be trained here; choose one of {models}",
    "bad_epochs": "epochs must be a whole number from 1 to {max_epochs}, got {value}",
    "bad_minutes": "the time budget must be from 0.5 to {max_minutes} minutes, got {value}",
    "bad_vectors": "vectors must be one of {choices}, got '{value}'",
    "unknown_job": "there is no training job '{job}'",
    "too_many_jobs": ("you already have {max_jobs} training jobs waiting or running; "
                      "wait for one to finish or cancel one"),
    "not_done": "job {job} has not finished ({status}): there is no model to publish yet",
    "no_token": "log in with Hugging Face or paste a write token to publish",
    "bad_repo": "'{repo}' is not a Hub model repo name (owner/name)",
    "hub_offline": "the Hugging Face Hub is not reachable from here (HF_HUB_OFFLINE is set): the model stays local",
    "hub_failed": "publishing to the Hub failed: {error}",
}


class JobError(NoticeError):
    """A job request we cannot take: `code` (a key of JOB_TEXT) and its `params`."""

    TEXT = JOB_TEXT


def _env_number(name: str, default: float) -> float:
    value = os.environ.get(name, "")
    return float(value) if value else default


@dataclass
class TrainLimits:
    """What one job may use, and how many one owner may have waiting or running; the defaults fit a free CPU
    Space (2 vCPU): a few minutes per job."""

    max_bytes: int = 5 * 2**20
    max_rows: int = 20_000
    max_epochs: int = 20
    max_minutes: float = 15.0
    max_jobs_per_owner: int = 2

    @classmethod
    def from_env(cls) -> "TrainLimits":
        """LAB_TRAIN_MAX_BYTES / _ROWS / _EPOCHS / _MINUTES / _JOBS_PER_OWNER override the defaults."""
        d = cls()
        return cls(int(_env_number("LAB_TRAIN_MAX_BYTES", d.max_bytes)), int(_env_number("LAB_TRAIN_MAX_ROWS", d.max_rows)),
                   int(_env_number("LAB_TRAIN_MAX_EPOCHS", d.max_epochs)),
                   _env_number("LAB_TRAIN_MAX_MINUTES", d.max_minutes),
                   int(_env_number("LAB_TRAIN_MAX_JOBS_PER_OWNER", d.max_jobs_per_owner)))


def jobs_dir(root: str | Path | None = None) -> Path:
    return Path(root or user_models_dir()) / "jobs"


def read_job(job_dir: str | Path) -> dict:
    return json.loads((Path(job_dir) / JOB_FILE).read_text(encoding="utf-8"))


def write_job(job_dir: str | Path, job: dict) -> None:
    atomic_write_text(Path(job_dir) / JOB_FILE, json.dumps(job, ensure_ascii=False, indent=1))


def update_job(job_dir: str | Path, **fields) -> dict:
    job = {**read_job(job_dir), **fields}
    write_job(job_dir, job)
    return job


def list_jobs(root: str | Path | None = None) -> list[dict]:
    """Every job, oldest first (a job still being created, in its hidden staging folder, is not one yet)."""
    folder = jobs_dir(root)
    paths = folder.glob(f"*/{JOB_FILE}") if folder.is_dir() else []
    jobs = [read_job(p.parent) for p in paths if not p.parent.name.startswith(".")]
    return sorted(jobs, key=lambda j: (j["created"], j["id"]))


def job_dir(job_id: str, root: str | Path | None = None, owner: str | None = None) -> Path:
    """The job's folder; JobError "unknown_job" for no such job or, when `owner` is given, another owner's."""
    folder = jobs_dir(root) / str(job_id)
    if not isinstance(job_id, str) or "/" in job_id or job_id.startswith(".") or not (folder / JOB_FILE).is_file():
        raise JobError("unknown_job", job=str(job_id)[:40])
    if owner is not None and read_job(folder).get("owner", PUBLIC) != owner:
        raise JobError("unknown_job", job=job_id[:40])  # worded as for no job at all: nothing says it exists
    return folder


def submit_job(file: str | Path | None, model: str, text_column: str = "", label_column: str = "", epochs: int = 3,
               minutes: float | None = None, vectors: str = "none", root: str | Path | None = None,
               limits: TrainLimits | None = None, owner: str = PUBLIC) -> dict:
    """Check the request and the file (read_rows: every UserDataError now, while the user waits), copy the
    file into a new job folder and queue it for `owner` (core.owners), whose task it makes. Nothing is written
    when a check fails, or when the owner already has its quota of jobs waiting or running."""
    limits = limits or TrainLimits.from_env()
    if not file:
        raise JobError("no_file")
    if model not in PAPER_MODELS:
        raise JobError("unknown_model", model=model, models=", ".join(PAPER_MODELS))
    if isinstance(epochs, bool) or not isinstance(epochs, (int, float)) or epochs != int(epochs) or not 1 <= epochs <= limits.max_epochs:
        raise JobError("bad_epochs", max_epochs=limits.max_epochs, value=epochs)
    minutes = limits.max_minutes if minutes in (None, 0) else minutes
    if not isinstance(minutes, (int, float)) or not 0.5 <= minutes <= limits.max_minutes:
        raise JobError("bad_minutes", max_minutes=limits.max_minutes, value=minutes)
    if vectors not in VECTORS:
        raise JobError("bad_vectors", choices=", ".join(VECTORS), value=vectors)
    active = sum(j.get("owner", PUBLIC) == owner and j["status"] in ACTIVE for j in list_jobs(root))
    if active >= limits.max_jobs_per_owner:
        raise JobError("too_many_jobs", max_jobs=limits.max_jobs_per_owner)
    file = Path(file)
    rows = read_rows(file, text_column or "", label_column or "", limits.max_bytes, limits.max_rows)
    job_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
    job = {
        "id": job_id, "status": "queued", "created": time.time(), "started": None, "finished": None,
        "owner": owner, "title": f"{file.name} · {time.strftime('%d %b %H:%M')}",  # what people see, not the ids
        "file": file.name, "data": "data" + file.suffix.lower(), "model": model,
        "task": user_task_name(file, rows.text_column, rows.label_column, owner),
        "text_column": rows.text_column, "label_column": rows.label_column, "lang": rows.lang,
        "labels": rows.label_names, "rows": len(rows.texts), "epochs": int(epochs), "minutes": float(minutes),
        "vectors": vectors, "resumes": 0, "progress": 0.0, "loss": [], "history": [], "metrics": None, "error": None,
    }
    folder = jobs_dir(root) / job_id
    staging = folder.with_name(f".{job_id}")  # renamed into place complete: a job is all there or not at all
    staging.mkdir(parents=True)
    shutil.copyfile(file, staging / job["data"])
    write_job(staging, job)
    staging.rename(folder)
    log.info("job %s queued: %s on %s (%d rows, %s)", job_id, model, file.name, len(rows.texts), rows.lang)
    return job


def queue_position(job: dict, jobs: list[dict]) -> int | None:
    """1 for the next job to start, 2 for the one after it...; None when the job is not waiting."""
    if job["status"] != "queued":
        return None
    waiting = [j["id"] for j in jobs if j["status"] == "queued"]
    return waiting.index(job["id"]) + 1


def job_status(job_id: str, root: str | Path | None = None, owner: str | None = None) -> dict:
    """The job as stored, plus its queue position and, while it runs, the seconds it has left (the
    elapsed time scaled by the part not yet done, at most the rest of its time budget). With an `owner`,
    only that owner's job (job_dir)."""
    job_dir(job_id, root, owner)  # an unknown or malformed id, another owner's job: JobError
    jobs = list_jobs(root)
    # the job as this one snapshot of every job has it: read apart, its worker may start it in between
    job = next(j for j in jobs if j["id"] == job_id)
    job["queue_position"] = queue_position(job, jobs)
    job["eta_seconds"] = None
    if job["status"] == "running" and job["started"]:
        elapsed, done = time.time() - job["started"], job["progress"] / job["epochs"]
        if done > 0:
            job["eta_seconds"] = max(0.0, min(elapsed * (1 - done) / done, job["minutes"] * 60 - elapsed))
    return job


def next_queued(root: str | Path | None = None) -> dict | None:
    return next((j for j in list_jobs(root) if j["status"] == "queued"), None)


def recover_jobs(root: str | Path | None = None) -> list[dict]:
    """After an app restart: a job left running lost its worker; it is queued again to resume from its
    last saved epoch, or reported stopped once it was resumed MAX_RESUMES times. Returns the jobs changed."""
    changed = []
    for job in list_jobs(root):
        if job["status"] == "running":
            folder = jobs_dir(root) / job["id"]
            if job["resumes"] < MAX_RESUMES:
                changed.append(update_job(folder, status="queued", resumes=job["resumes"] + 1))
            else:
                changed.append(update_job(folder, status="stopped", finished=time.time(),
                                          error={"code": "stopped", "params": {"resumes": job["resumes"]}}))
    return changed


# -- the worker ------------------------------------------------------------------------------------


class _Progress:
    """Writes the job's live progress (epoch fraction, a loss curve) at most twice a second."""

    def __init__(self, folder: Path, job: dict, trainer: Trainer):
        self.folder, self.job, self.trainer, self.last, self.losses = folder, job, trainer, 0.0, []
        trainer.on_batch = self.batch

    def batch(self, step: int, steps: int, loss: float) -> None:
        if not self.losses and self.last == 0.0:  # the first step (of a resumed run: after its saved epochs)
            self.job["loss"] = [p for p in self.job["loss"] if p[0] <= self.trainer.epoch]
            self.job["history"] = list(self.trainer.history)
        self.losses.append(loss)
        if time.monotonic() - self.last < 0.5 and step < steps:
            return
        epoch = self.trainer.epoch + step / steps
        points = self.job["loss"]
        points.append([round(epoch, 4), sum(self.losses) / len(self.losses)])
        if len(points) > LOSS_POINTS:
            points[:] = points[::2]
        self.losses, self.last = [], time.monotonic()
        self.job["progress"] = epoch
        self.write()

    def epoch(self, record: dict) -> None:
        self.job["history"] = list(self.trainer.history)
        self.job["progress"] = float(record["epoch"])
        self.write()

    def write(self) -> None:  # a job trained on a Ray cluster sends it to the app instead (core.training.remote)
        write_job(self.folder, self.job)


def train_config(folder: Path, job: dict) -> TrainConfig:
    """The core.training.train settings of a job: one torch thread, resumable from its own run/ folder."""
    return TrainConfig(model=job["model"], task=job["task"], data=str(folder / job["data"]), text_column=job["text_column"],
                       label_column=job["label_column"], epochs=job["epochs"], max_minutes=job["minutes"],
                       vectors=job["vectors"], out=str(folder / "run"), resume=True, progress=False, threads=1)


def job_results(trainer: Trainer, metrics: dict) -> dict:
    """What a finished job records of its run: epochs, history and the test metrics of its best checkpoint."""
    test = metrics["test"]
    return {"progress": float(trainer.epoch), "history": trainer.history,
            "metrics": {"test_accuracy": test["accuracy"], "test_examples": test["n"], "confusion": test["confusion"],
                        "per_class": test["per_class"], "dev_accuracy": metrics["dev_accuracy"],
                        "best_epoch": metrics["best_epoch"], "epochs_run": metrics["epochs_run"],
                        "train_examples": metrics["train_examples"], "labels": trainer.task.labels}}


def complete_job(folder: Path, job: dict, results: dict) -> dict:
    """Install run/best for the job's owner and record the job done with `results` (job_results)."""
    installed = install_checkpoint(folder / "run" / "best", folder.parents[1], job.get("owner", PUBLIC),
                                   job.get("title", ""))
    job.update(status="done", finished=time.time(), checkpoint=str(installed), **results)
    write_job(folder, job)
    return job


def fail_job(folder: Path, job: dict, err: Exception) -> dict:
    """Record the job failed with `err`'s code and parameters (a NoticeError's) and its English."""
    job.update(status="failed", finished=time.time(),
               error={"code": getattr(err, "code", "error"), "params": getattr(err, "params", {}),
                      "message": f"{type(err).__name__}: {err}"})
    write_job(folder, job)
    return job


def run_job(folder: str | Path) -> dict:
    """Train one job to the end (the worker process's whole life): status running, live progress, then
    done with the test metrics and the checkpoint installed, or failed with the error."""
    folder = Path(folder)
    job = update_job(folder, status="running", started=time.time(), pid=os.getpid())
    try:
        trainer = Trainer.from_config(train_config(folder, job))
        progress = _Progress(folder, job, trainer)
        results = job_results(trainer, trainer.fit(on_epoch=progress.epoch))
        return complete_job(folder, job, results)
    except Exception as err:  # the worker reports every failure in the job; the trace goes to its log
        log.exception("job %s failed", job["id"])
        return fail_job(folder, job, err)


def main(argv: list[str] | None = None) -> int:
    """`python -m core.training.jobs run <job folder>`: the worker. It yields the CPU to the app: the lowest priority
    (nice 19: Linux then gives the app's threads about 98% of a core they both want, and the worker all the CPU
    the app leaves idle) and one torch thread."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] != "run":
        print("usage: python -m core.training.jobs run <job folder>", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    os.nice(19 - os.nice(0))  # predictions in the app come first
    torch.set_num_threads(1)
    return 0 if run_job(argv[1])["status"] == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
