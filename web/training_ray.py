"""The training queue on a Ray cluster: several jobs at once, each followed by a driver process of its own.

    LAB_TRAIN_BACKEND=ray RAY_ADDRESS=head:6379 python app.py     # LAB_RAY_ADDRESS overrides RAY_ADDRESS

A driver (`python -m service.remote run <job folder>`) takes the local worker's place: it writes the
job folder as that worker does, while the training runs as a Ray task on the cluster (service.remote
says how and what happens when the cluster fails). The drivers are processes, not threads of the app, so
a cluster that goes away cannot take the app down with it. Up to Settings.ray_max_jobs jobs run at once (the
cluster queues the tasks beyond its CPUs); owners, quotas, status, cancel and serving are TrainingQueue's.
"""

import logging
import time
from pathlib import Path

from service import processes
from service.jobs import TrainLimits, cancel_job, job_dir, next_queued, update_job
from service.lab import ServedLab
from service.settings import Settings
from web.training import TrainingQueue

log = logging.getLogger(__name__)


class RayTrainingQueue(TrainingQueue):
    worker_module = "service.remote"

    def __init__(
        self,
        lab: ServedLab,
        settings: Settings,
        root: str | Path | None = None,
        limits: TrainLimits | None = None,
        poll: float = 0.5,
        max_running: int | None = None,
    ):
        # set before the scheduler thread, which the base class starts, reads them
        self.workers: dict[str, processes.Worker] = {}
        self.max_running = max_running or settings.ray_max_jobs
        super().__init__(lab, settings, root, limits, poll)

    def cancel(self, job_id: str, owner: str | None = None) -> dict:
        """The cancel is recorded at once (no driver installs the job's model after it); a running job's driver is
        stopped, and it cancels its task on the cluster."""
        job_dir(job_id, self.root, owner)
        with self.lock:
            cancel_job(job_id, self.root)
            if job_id in self.workers:
                self.workers[job_id].terminate()
        return self.status(job_id, owner)

    def _step(self) -> None:
        for job_id, worker in list(self.workers.items()):
            if worker.poll() is not None:
                self._let_go(job_id)
        while len(self.workers) < self.max_running and (job := next_queued(self.root)) is not None:
            self._start(job)

    def _running(self) -> list[processes.Worker]:
        return list(self.workers.values())

    def _worker(self, job_id: str) -> processes.Worker | None:
        return self.workers.get(job_id)

    def _let_go(self, job_id: str) -> None:
        self._ended(job_id, self.workers.pop(job_id).returncode)

    def _start(self, job: dict) -> None:
        folder = job_dir(job["id"], self.root)
        update_job(folder, status="running", started=time.time())
        self.workers[job["id"]] = self._spawn(folder)
        log.info("job %s sent to the cluster (driver pid %d)", job["id"], self.workers[job["id"]].pid)


def training_queue(lab: ServedLab, settings: Settings, root: str | Path | None = None) -> TrainingQueue:
    """The queue Settings.train_backend names: local (the default: one worker process at a time) or ray. A
    setting that cannot work stops the app at start, with what to set (service.settings checks the names)."""
    if settings.train_backend == "local":
        return TrainingQueue(lab, settings, root)
    address = settings.ray_address
    if ":" not in address or address.startswith("ray://"):
        raise ValueError(
            "LAB_TRAIN_BACKEND=ray needs the cluster's head as host:port in LAB_RAY_ADDRESS or "
            f"RAY_ADDRESS (got {address!r})"
        )
    log.info("training on the Ray cluster at %s (fallback: %s)", address, settings.train_fallback or "none")
    return RayTrainingQueue(lab, settings, root)
