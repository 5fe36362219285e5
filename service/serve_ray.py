"""The model worker as a Ray Serve deployment (LAB_SERVE_BACKEND=ray), on the Ray cluster that trains
(LAB_RAY_ADDRESS, service.remote; a head in token mode needs RAY_AUTH_TOKEN).

The app stays the one entry point: what it sends its local worker (long requests' models, probe suites, a file's
export chunks: demo/runner.py) goes to the deployment DEPLOYMENT instead, whose replicas each run service.serving's
jobs in a Lab of their own (each checkpoint loaded on first use) and scale with the requests in flight
(AUTOSCALING). Jobs and answers cross as service.serving's lines (encode, answer, decode), the project reaches the
cluster through the runtime_env that training uses, and a checkpoint travels as its directory: a replica must see
the app's checkpoints at the same paths (one machine, or a shared file system).

When the cluster cannot be reached, refuses the driver, or a call to the deployment fails, the app goes on with its
local worker and says so: one log line and `status()` (a Notice), `serve_ray` while the deployment answers, else
why not; it does not try the cluster again until the app restarts.
"""

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from core.notices import Notice
from core.predict import Cancelled
from service.serving import answer, decode, encode, worker_lab

log = logging.getLogger(__name__)

DEPLOYMENT = "lab-models"
# replicas of one CPU each, from one to MAX_REPLICAS, about two jobs in flight per replica; $LAB_SERVE_REPLICAS
AUTOSCALING = {"min_replicas": 1, "max_replicas": 4, "target_ongoing_requests": 2}
POLL_S = 0.1  # how often a waiting request checks that its client is still there
START_S = 120.0  # the deployment's first replica, on a loaded machine: Ray's worker, torch, the runtime_env


def serve_backend() -> str:
    """LAB_SERVE_BACKEND: `local` (the app's own worker process, the default) or `ray` (this module)."""
    backend = os.environ.get("LAB_SERVE_BACKEND", "").strip().lower() or "local"
    if backend not in ("local", "ray"):
        raise ValueError(f"LAB_SERVE_BACKEND must be local or ray, got {backend!r}")
    return backend


class Worker(Protocol):
    """What demo/runner.py's ModelWorker offers: a job's answer, and a close at the end."""

    models: int | None

    def run(self, job: Any, alive: Callable[[], bool] = ...) -> Any: ...

    def close(self) -> None: ...


class ModelReplica:
    """One replica of the deployment: service.serving's worker, a job's line in, its answer's line out."""

    def __init__(self, models: int | None = None):
        self.lab = worker_lab(models)

    def __call__(self, line: str) -> str:
        return answer(self.lab, line)


def deploy(address: str, models: int | None = None, replicas: int | None = None):
    """The deployment on the cluster at `address` (started, or the running one replaced), without Serve's HTTP
    proxy: the app is the entry point; its handle."""
    import ray
    from ray import serve

    from service.remote import connect, reachable, refusal

    if not ray.is_initialized():
        if not address or not reachable(address):  # ray.init would wait minutes, or start a cluster of its own
            raise ServeUnavailable("serve_unreachable", address=address)
        try:
            connect(address)
        except (ConnectionError, RuntimeError) as err:  # a head that answers but refuses us (a token, another Ray)
            code, params = refusal(address)
            raise ServeUnavailable(code, error=str(err), **params) from err
    serve.start(proxy_location="Disabled")
    scaling = {**AUTOSCALING, "max_replicas": replicas or int(os.environ.get("LAB_SERVE_REPLICAS") or 4)}
    scaling["min_replicas"] = min(scaling["min_replicas"], scaling["max_replicas"])
    app = serve.deployment(
        ModelReplica, name=DEPLOYMENT, autoscaling_config=scaling, ray_actor_options={"num_cpus": 1}
    ).bind(models)
    return serve.run(app, name=DEPLOYMENT, route_prefix=None)


class ServeUnavailable(Exception):
    """Why the deployment cannot answer: a Notice's code and params."""

    def __init__(self, code: str, **params):
        super().__init__(f"{code}: {params}")
        self.notice = Notice(code, params)


class ServeWorker:
    """The worker's place taken by the deployment: each job to a replica, or, once the cluster has failed, to
    `local` (the app's own worker) for good. `alive` is checked while the job runs: a client that left cancels
    it there (Cancelled), as the local worker's caller would stop at the next model."""

    def __init__(self, local: Worker, address: str, deploy: Callable = deploy):
        self.local, self.address, self._deploy = local, address, deploy
        self._handle: Any = None
        self._fallen: Notice | None = None
        self._lock = threading.Lock()

    @property
    def models(self) -> int | None:
        return self.local.models

    @models.setter
    def models(self, value: int | None) -> None:
        self.local.models = value

    def status(self) -> Notice:
        """Where the model work runs: `serve_ray` (address, deployment), or why not: `serve_unreachable`,
        `ray_no_token` or `ray_refused` (service.remote.refusal), `serve_fallback` (the error); each has the address."""
        return self._fallen or Notice("serve_ray", {"address": self.address, "deployment": DEPLOYMENT})

    def run(self, job, alive: Callable[[], bool] = lambda: True):
        handle = self._connected()
        if handle is None:
            return self.local.run(job, alive)
        try:
            response = handle.remote(encode(job))
            while True:
                try:
                    line = response.result(timeout_s=POLL_S)
                    break
                except TimeoutError:
                    if not alive():
                        response.cancel()
                        raise Cancelled() from None
        except Cancelled:
            raise
        except Exception as err:  # the cluster went away, the replica died: the local worker from now on
            self._fall_back(Notice("serve_fallback", {"address": self.address, "error": _line(err)}))
            return self.local.run(job, alive)
        if not alive():
            raise Cancelled()
        return decode(line)

    def _connected(self):
        with self._lock:
            if self._handle is None and self._fallen is None:
                start = time.monotonic()
                try:
                    self._handle = self._deploy(self.address, self.local.models)
                    log.info("model work on Ray Serve at %s (%s), ready in %.1f s", self.address, DEPLOYMENT,
                             time.monotonic() - start)  # fmt: skip
                except ServeUnavailable as err:
                    self._fall_back(err.notice)
                except Exception as err:  # the cluster cannot be reached, Serve failed to start
                    self._fall_back(Notice("serve_fallback", {"address": self.address, "error": _line(err)}))
            return self._handle

    def _fall_back(self, notice: Notice) -> None:
        self._handle, self._fallen = None, notice
        log.warning("Ray Serve unavailable (%s): model work goes to the app's own worker", notice.params)

    def close(self) -> None:
        self.local.close()


def _line(err: BaseException) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"[:300]


def worker(local: Worker) -> Worker:
    """The app's model worker for LAB_SERVE_BACKEND: `local` itself, or a ServeWorker in front of it."""
    if serve_backend() != "ray":
        return local
    from service.remote import ray_address

    return ServeWorker(local, ray_address())
