"""The model worker as a Ray Serve deployment (LAB_SERVE_BACKEND=ray), on the Ray cluster that trains
(LAB_RAY_ADDRESS, service.remote; a head in token mode needs RAY_AUTH_TOKEN).

    python -m service.serve_ray --address host:port [--models N]    # the driver, started by the app

The app stays the one entry point: what it sends its local worker (long requests' models, probe suites, a file's
export chunks: web/runner.py) goes to the deployment DEPLOYMENT instead, whose replicas each run service.serving's
jobs in a Lab of their own (each checkpoint loaded on first use) and scale with the requests in flight
(AUTOSCALING). The app talks to the cluster through a driver process of its own, with the local worker's protocol
(a job's line in on stdin, its answer's line out; service.serving's answer on the replica): Ray ends a driver whose
head stays away, and that must not be the app (docs/cluster.md). The project reaches the replicas through the
runtime_env that training uses, and a checkpoint travels as its directory: a replica must see the app's
checkpoints at the same paths (one machine, or a shared file system).

When the cluster cannot be reached or refuses the app, or the driver ends, the app goes on with its local worker
and says so: one log line and `status()` (a Notice): `serve_ray` while the deployment answers, else why not. It does
not try the cluster again until the app restarts.
"""

import argparse
import json
import logging
import os
import select
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

from core.data import PROJECT_ROOT
from core.notices import Notice
from core.predict import Cancelled
from service.serving import answer, decode, encode, worker_lab
from service.settings import Settings

log = logging.getLogger(__name__)

DEPLOYMENT = "lab-models"
# replicas of one CPU each, from one to Settings.serve_replicas (4), about two jobs in flight per replica
AUTOSCALING = {"min_replicas": 1, "max_replicas": 4, "target_ongoing_requests": 2}
START_S = 300.0  # the driver's connection and the first replica, on a loaded machine: Ray's worker, torch, runtime_env


class Worker(Protocol):
    """What web/runner.py's ModelWorker offers: a job's answer, and a close at the end."""

    models: int | None

    def run(self, job: Any, alive: Callable[[], bool] = ...) -> Any: ...

    def close(self) -> None: ...


class ModelReplica:
    """One replica of the deployment: service.serving's worker, a job's line in, its answer's line out."""

    def __init__(self, models: int | None = None):
        self.lab = worker_lab(models) if models else worker_lab()

    def __call__(self, line: str) -> str:
        return answer(self.lab, line)


class ServeUnavailable(Exception):
    """Why the deployment cannot answer: a Notice's code and params."""

    def __init__(self, code: str, **params):
        super().__init__(f"{code}: {params}")
        self.notice = Notice(code, params)


def deploy(address: str, models: int | None = None):
    """The deployment on the cluster at `address` (started, or the running one updated), without Serve's HTTP
    proxy (the app is the entry point); its handle. ServeUnavailable when the cluster is out of reach or refuses."""
    from ray import serve

    from service.remote import connect, reachable, refusal

    if not address or not reachable(address):  # ray.init would wait minutes, or start a cluster of its own
        raise ServeUnavailable("serve_unreachable", address=address)
    try:
        connect(address)
    except (ConnectionError, RuntimeError) as err:  # a head that answers but refuses us (a token, another Ray)
        code, params = refusal(address)
        raise ServeUnavailable(code, **params) from err
    serve.start(proxy_location="Disabled")
    scaling = {**AUTOSCALING, "max_replicas": Settings.load().serve_replicas}
    options = {"num_cpus": 1}  # the replicas inherit the driver's runtime_env (the project, as training ships it)
    deployment = serve.deployment(name=DEPLOYMENT, autoscaling_config=scaling, ray_actor_options=options)(ModelReplica)
    return serve.run(deployment.bind(models), name=DEPLOYMENT, route_prefix=None)


class ServeWorker:
    """The worker's place taken by the deployment, through a driver process (`python -m service.serve_ray`), one
    job at a time as the local worker; once the cluster fails, `local` (the app's own worker) for good."""

    def __init__(self, local: Worker, address: str):
        self.local, self.address = local, address
        self._process: subprocess.Popen[str] | None = None
        self._fallen: Notice | None = None
        self._lock = threading.Lock()

    @property
    def models(self) -> int | None:
        return self.local.models

    @models.setter
    def models(self, value: int | None) -> None:
        self.local.models = value

    def status(self) -> Notice:
        """Where the model work runs: `serve_ray` (address, deployment) or why not: `serve_unreachable`,
        `ray_no_token` or `ray_refused` (service.remote.refusal), `serve_failed` (what the driver said last)."""
        return self._fallen or Notice("serve_ray", {"address": self.address, "deployment": DEPLOYMENT})

    def run(self, job, alive: Callable[[], bool] = lambda: True):
        with self._lock:
            process = self._started()
            line = ""
            if process is not None and process.stdin and process.stdout:
                try:
                    process.stdin.write(encode(job) + "\n")
                    process.stdin.flush()
                    line = process.stdout.readline()
                except OSError:
                    pass
                if not line:  # the driver ended: Ray ended it (its head went away), or it failed
                    self._fall_back(Notice("serve_failed", {"address": self.address, "exit": process.poll()}))
        if not line:
            return self.local.run(job, alive)
        if not alive():  # its client left while it ran
            raise Cancelled()
        return decode(line)

    def _started(self) -> "subprocess.Popen[str] | None":
        """The driver, started on first use: its first line says whether the deployment answers."""
        if self._process is None and self._fallen is None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "service.serve_ray", "--address", self.address]
                + (["--models", str(self.models)] if self.models else []),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=PROJECT_ROOT,
                text=True,
                encoding="utf-8",
            )
            answers = self._process.stdout
            assert answers is not None  # stdout=PIPE
            first = answers.readline() if select.select([answers], [], [], START_S)[0] else ""
            status: dict[str, Any] = (
                json.loads(first) if first.startswith("{") else {"code": "serve_failed", "params": {}}
            )
            if status["code"] != "serve_ray":
                self._fall_back(Notice(status["code"], {"address": self.address, **status["params"]}))
            else:
                log.info("model work on Ray Serve at %s (%s)", self.address, DEPLOYMENT)
        return self._process

    def _fall_back(self, notice: Notice) -> None:
        process, self._process, self._fallen = self._process, None, notice
        if process is not None:
            process.kill()
            process.wait()
        log.warning(
            "Ray Serve unavailable (%s %s): model work goes to the app's own worker", notice.code, notice.params
        )

    def close(self) -> None:
        with self._lock:
            if self._process is not None and self._process.stdin:
                self._process.stdin.close()  # the driver ends at the end of its input
                self._process.wait()
        self.local.close()


def worker(local: Worker, settings: Settings) -> Worker:
    """The app's model worker for its Settings.serve_backend: `local` (the app's own worker process, the default)
    itself, or with `ray` a ServeWorker in front of it."""
    if settings.serve_backend != "ray":
        return local
    return ServeWorker(local, settings.ray_address)


def main(argv: list[str] | None = None) -> int:
    """The driver: its first line the status (a Notice as JSON), then one answer line per job line."""
    parser = argparse.ArgumentParser(prog="python -m service.serve_ray", description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", required=True, help="the Ray head, host:port")
    parser.add_argument("--models", type=int, default=None, help="checkpoints each replica keeps loaded")
    args = parser.parse_args(argv)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # Ray's own output must not corrupt the answers
    try:
        handle = deploy(args.address, args.models)
        status: dict[str, Any] = {"code": "serve_ray", "params": {}}
    except ServeUnavailable as err:
        handle, status = None, {"code": err.notice.code, "params": err.notice.params}
    except Exception as err:  # Serve could not start the deployment: said, and the app goes on without it
        handle, status = None, {"code": "serve_failed", "params": {"error": f"{type(err).__name__}: {err}"[:300]}}
    answers.write(json.dumps(status) + "\n")
    answers.flush()
    for line in sys.stdin if handle is not None else ():
        answers.write(handle.remote(line.rstrip("\n")).result() + "\n")
        answers.flush()
    return 0


if __name__ == "__main__":  # the classes by their module's name, which a replica imports, not as __main__'s
    from service.serve_ray import main as driver

    sys.exit(driver())
