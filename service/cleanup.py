"""Keeping $LAB_USER_MODELS within bounds on a shared Space: jobs and the models they installed are removed,
oldest first, once they are past their time or past their owner's quota.

    removed = clean_user_models(root, CleanupLimits.from_settings(settings))  # the jobs removed, with their models

What goes, in this order (a queued or running job never does; nor does a checkpoint no removed job installed,
such as one `make train-data` put there):
1. a cancelled, failed or stopped job, `failed_minutes` after it ended (its status stays readable that long);
2. any finished job older than `ttl_hours`, with the model it installed;
3. an owner's finished jobs beyond `max_models_per_owner`, that owner's oldest first.
A finished job's run/ folder (its resumable state) goes as soon as the scheduler is done with it: its model is
installed and job.json keeps its history. A model installed by a job is removed only when no remaining job
installed it too (a later run of the same task and model replaces it in place), and its claim in the owner
store (service.store) goes with it. Nothing is ever removed to make room for another owner's job: while the
folder is past `max_mb`, new jobs are refused (JobError "disk_full"); the owner store's bytes do not count (its
row caps bound it). The scheduler (web/training.py) runs this
every minute and before each submission.
"""

import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from service.jobs import ACTIVE, JobError, jobs_dir, list_jobs
from service.settings import DEFAULTS, Settings
from service.store import STORE_FILES, open_store
from service.user_models import user_models_dir

log = logging.getLogger(__name__)


@dataclass
class CleanupLimits:
    """The defaults fit a free CPU Space (50 GB of disk, wiped on restart) shared by a class: a job with its
    model takes 2 to 10 MB."""

    max_mb: float = DEFAULTS.user_models_max_mb  # jobs and models together; past it new jobs wait, nobody's model goes
    ttl_hours: float = DEFAULTS.user_models_ttl_hours  # a finished job and its model
    failed_minutes: float = DEFAULTS.failed_jobs_ttl_minutes  # a cancelled, failed or stopped job
    max_models_per_owner: int = DEFAULTS.models_per_owner  # finished jobs (with their models) an owner keeps

    @classmethod
    def from_settings(cls, settings: Settings) -> "CleanupLimits":
        return cls(
            settings.user_models_max_mb,
            settings.user_models_ttl_hours,
            settings.failed_jobs_ttl_minutes,
            settings.models_per_owner,
        )


def folder_bytes(path: Path) -> int:
    """The bytes of every file under `path` (0 when it is gone)."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except FileNotFoundError:  # removed while we counted
                pass
    return total


def user_models_bytes(root: Path) -> int:
    """folder_bytes of the user-models folder but the owner store (service.store), which its row caps bound: a
    flood of bindings never counts against the disk for trained models."""
    store = 0
    for name in STORE_FILES:
        try:
            store += os.lstat(root / name).st_size
        except FileNotFoundError:
            pass
    return folder_bytes(root) - store


def _remove(job: dict, root: Path, remaining: list[dict]) -> list[str]:
    """Remove a job's folder and the checkpoint it installed unless a remaining job installed the same one;
    the checkpoint folders removed."""
    shutil.rmtree(jobs_dir(root) / job["id"], ignore_errors=True)
    checkpoint = job.get("checkpoint")
    if not checkpoint or any(j.get("checkpoint") == checkpoint for j in remaining):
        return []
    shutil.rmtree(checkpoint, ignore_errors=True)
    if job.get("task") and job.get("model"):
        store = open_store(root)
        try:
            store.release_model(job["task"], job["model"])
        finally:
            store.close()
    return [checkpoint]


def clean_user_models(
    root: str | Path | None = None,
    limits: CleanupLimits | None = None,
    now: float | None = None,
    busy: tuple[str, ...] = (),
) -> list[dict]:
    """Remove what is past its time or past its owner's quota (see the module's docstring); the removed jobs,
    each with "removed_checkpoints" (the folders to stop serving). `busy`: ids of jobs whose worker the
    scheduler has not yet seen end (it still reads them)."""
    root, limits = Path(root or user_models_dir()), limits or CleanupLimits.from_settings(Settings.load())
    now = time.time() if now is None else now
    jobs = [j for j in list_jobs(root) if j["status"] not in ACTIVE and j["id"] not in busy]  # oldest first

    def expired(job: dict) -> bool:
        ended = job.get("finished") or job["created"]
        if job["status"] != "done" and now - ended > limits.failed_minutes * 60:
            return True
        return now - job["created"] > limits.ttl_hours * 3600

    doomed = [j for j in jobs if expired(j)]
    kept = [j for j in jobs if not expired(j)]
    by_owner: dict[str, list[dict]] = {}
    for job in kept:
        if job["status"] == "done":
            by_owner.setdefault(job.get("owner", ""), []).append(job)
    for done in by_owner.values():  # each owner's oldest beyond its quota, its own and nobody else's
        doomed += done[: max(0, len(done) - limits.max_models_per_owner)]
    kept = [j for j in kept if j not in doomed]
    for job in kept:
        if job["status"] == "done":
            shutil.rmtree(jobs_dir(root) / job["id"] / "run", ignore_errors=True)
    remaining = kept + [j for j in list_jobs(root) if j["status"] in ACTIVE or j["id"] in busy]
    removed = []
    for job in doomed:
        job["removed_checkpoints"] = _remove(job, root, remaining)
        removed.append(job)
        log.info(
            "job %s removed (%s, created %s)",
            job["id"],
            job["status"],
            time.strftime("%Y-%m-%d %H:%M", time.localtime(job["created"])),
        )
    return removed


def check_quota(root: str | Path | None = None, limits: CleanupLimits | None = None) -> None:
    """JobError "disk_full" while the folder is over its quota even after cleaning (active jobs fill it)."""
    root, limits = Path(root or user_models_dir()), limits or CleanupLimits.from_settings(Settings.load())
    if limits.max_mb and user_models_bytes(root) > limits.max_mb * 2**20:
        raise JobError("disk_full", max_mb=limits.max_mb)
