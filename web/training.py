"""The app's training queue: one worker process at a time, outside the request queue.

Each job runs in `python -m service.jobs run <job folder>`, a process of its own (forked with its imports done:
service.processes) at a lower priority with one torch thread, so the app's requests keep their speed while a model
trains (reports/train_load.md measures it). A scheduler thread starts the next queued job (service.jobs.queue_order:
clients take turns) when no worker runs, notices when the worker ends and adds the finished model to the running
Lab. On start it takes up where a previous app left off (service.jobs.recover_jobs): a job whose worker died with
the app resumes, and installed models are served, each to its owner alone (service.owners). Given an owner, status,
cancel and submit act for that owner only. A worker ends with this app (service.jobs.main) and holds its job
folder's lock, so a job left running by a worker still on its way out is queued again only once that worker is gone.
"""

import logging
import os
import threading
import time
from pathlib import Path

from core.checkpoints.checkpoint import CheckpointError
from core.data import PROJECT_ROOT
from service import processes
from service.cleanup import CleanupLimits, check_quota, clean_user_models
from service.jobs import (
    FINISHED,
    REFUSED,
    TrainLimits,
    TrainRequest,
    cancel_job,
    job_dir,
    job_status,
    list_jobs,
    next_queued,
    read_job,
    recover_jobs,
    submit_job,
    update_job,
)
from service.lab import ServedLab
from service.owners import PUBLIC
from service.settings import Settings
from service.user_models import checkpoint_owner, installed_checkpoints

log = logging.getLogger(__name__)
CLEAN_EVERY = 60.0  # seconds between two cleanups of the user-models folder (service.cleanup)


class TrainingQueue:
    worker_module = "service.jobs"  # the worker: `python -m <it> run <job folder>`

    def __init__(
        self,
        lab: ServedLab,
        settings: Settings,  # the app's, from the Train tab; a test's or a tool's own
        root: str | Path | None = None,
        limits: TrainLimits | None = None,
        poll: float = 0.5,
    ):
        self.lab, self.root, self.poll = lab, Path(root or settings.user_models), poll
        self.limits = limits or TrainLimits.from_settings(settings)
        self.cleanup_limits, self.cleaned = CleanupLimits.from_settings(settings), 0.0
        self.lock = threading.Lock()
        self.submitting = threading.Lock()  # an owner's quota is counted and taken in one step
        self.worker: processes.Worker | None = None
        self.job_id: str | None = None
        self.stopped = threading.Event()  # set: the scheduler stops, and its workers with it
        self.recovering = self._recover()
        for path in installed_checkpoints(self.root):
            owner = PUBLIC
            try:
                owner, title = checkpoint_owner(path)
                task, model = lab.add_checkpoint(path, f"trained here: {path.parent.name}/{path.name}", owner, title)
                log.info("checkpoint %s/%s <- %s", task, model, path)
            except (CheckpointError, OSError, ValueError, KeyError) as err:
                if owner:  # the load-problem banner is everybody's: a visitor's model is only logged
                    log.error("checkpoint %s not served: %s", path, err)
                else:
                    lab.errors = {**lab.errors, str(path): str(err)}
        threading.Thread(target=self._schedule, daemon=True, name="training-queue").start()

    def submit(self, request: TrainRequest, owner: str = PUBLIC, client: str = "") -> dict:
        """Queue a job once the folder has room for it (JobError "disk_full" while it is full) and the owner, its
        client and the Space are within their quotas (service.jobs.submit_job)."""
        with self.lock:
            self._clean()
        check_quota(self.root, self.cleanup_limits)
        with self.submitting:
            return submit_job(request, self.root, self.limits, owner, client)

    def status(self, job_id: str, owner: str | None = None) -> dict:
        """The job's state; a job is reported finished only once the Lab serves its model (the worker writes
        "done" just before it exits, and the scheduler notices the exit within `poll` seconds). Its worker's exit
        is waited for outside the lock: a worker slow to go holds up no other visitor's submit or cancel, nor the
        scheduler."""
        job = job_status(job_id, self.root, owner)
        if job["status"] in FINISHED:
            with self.lock:
                worker = self._worker(job_id)
            if worker is not None:
                worker.wait(timeout=30)
                with self.lock:
                    if self._worker(job_id) is worker:  # not let go by the scheduler meanwhile
                        self._let_go(job_id)
            job = job_status(job_id, self.root)
        return job

    def cancel(self, job_id: str, owner: str | None = None) -> dict:
        """The cancel is recorded at once (no worker installs the job's model after it, an old one neither);
        this app's worker on the job is stopped, and is gone when this returns. Another owner's job is unknown."""
        job_dir(job_id, self.root, owner)
        with self.lock:
            cancel_job(job_id, self.root)
            if self.job_id == job_id and self.worker is not None:
                self.worker.terminate()
        return self.status(job_id, owner)

    def _schedule(self) -> None:
        while not self.stopped.is_set():
            try:
                with self.lock:
                    self._step()
            except Exception:  # the queue must outlive one broken job folder
                log.exception("training queue")
            self.stopped.wait(self.poll)
        with self.lock:  # its workers end with it, as they end with the app
            for worker in self._running():
                worker.terminate()

    def _step(self) -> None:
        if self.worker is not None and self.job_id is not None and self.worker.poll() is not None:
            self._let_go(self.job_id)
        if self.worker is None and self.recovering:
            self.recovering = self._recover()
        if self.worker is None and (job := next_queued(self.root)) is not None:
            self._start(job)
        if time.monotonic() - self.cleaned > CLEAN_EVERY:
            self._clean()

    def _running(self) -> list[processes.Worker]:
        return [self.worker] if self.worker is not None else []

    def _worker(self, job_id: str) -> processes.Worker | None:
        """This app's worker on the job (the callers hold the lock)."""
        return self.worker if self.job_id == job_id else None

    def _let_go(self, job_id: str) -> None:
        """The job's worker has ended: its end handled, its place free (the callers hold the lock)."""
        if self.worker is None or self.job_id != job_id:
            raise RuntimeError(f"no training worker on job {job_id} to let go")
        self._ended(job_id, self.worker.returncode)
        self.worker, self.job_id = None, None

    def _recover(self) -> bool:
        """Queue again the jobs whose worker died with the previous app; True while a job is left running by a
        worker that still holds its lock (the scheduler then looks again while it has no worker of its own)."""
        for job in recover_jobs(self.root):
            log.info("job %s was running when the app stopped: %s", job["id"], job["status"])
        return any(job["status"] == "running" for job in list_jobs(self.root))

    def _clean(self) -> None:
        """Remove jobs and models past their time or over the quota; the Lab stops serving the removed models."""
        removed = clean_user_models(self.root, self.cleanup_limits, busy=(self.job_id,) if self.job_id else ())
        self.lab.remove_checkpoints([path for job in removed for path in job["removed_checkpoints"]])
        self.cleaned = time.monotonic()

    def _start(self, job: dict) -> None:
        folder = job_dir(job["id"], self.root)
        update_job(folder, status="running", started=time.time())
        self.worker = self._spawn(folder)
        self.job_id = job["id"]
        log.info("job %s started (worker pid %d)", job["id"], self.worker.pid)

    def _spawn(self, folder: Path) -> processes.Worker:
        """`python -m <worker_module> run <folder>` (forked with its imports done: service.processes), logging to
        the job's worker.log."""
        env = {**os.environ, "OMP_NUM_THREADS": "1", "LAB_USER_MODELS": str(self.root)}
        return processes.start(self.worker_module, ["run", str(folder)], env, PROJECT_ROOT, log=folder / "worker.log")

    def _ended(self, job_id: str, code: int | None) -> dict:
        """A worker ended: serve its model, or record why it stopped when it could not say so itself."""
        folder = job_dir(job_id, self.root)
        job = read_job(folder)
        if code == REFUSED:  # another process's worker holds the job (one started from the command line)
            self.recovering = True  # queued again should that worker die without a verdict
        elif job["status"] not in FINISHED:  # killed (out of memory, a signal) before it could write
            job = update_job(
                folder, status="stopped", finished=time.time(), error={"code": "stopped", "params": {"exit": code}}
            )
        elif job["status"] == "done":
            self.lab.add_checkpoint(
                job["checkpoint"], f"trained here: job {job['id']}", job.get("owner", PUBLIC), job.get("title", "")
            )
        log.info("job %s %s (worker exit %s)", job["id"], job["status"], code)
        return job
