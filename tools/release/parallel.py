"""`make train`'s runs as parallel Ray tasks (python -m tools.release.bundle train --parallel N).

Without RAY_ADDRESS a Ray of this machine with N CPUs runs N at a time; with RAY_ADDRESS (a cluster's head,
host:port) the cluster runs them all at once, as its CPUs allow. Each task is an ordinary core.training.train
run with one CPU and one torch thread, in a temporary folder of its worker (no shared file system): after
every epoch its run folder comes back through the object store into runs/ (service.remote's Mailbox),
so a killed `make train` continues with --resume, as a sequential one does; the finished folder (best/,
state/, log.jsonl, metrics.json) replaces it at the end. The cluster needs this project, its requirements
and the datasets (core.data's data folder, or --data-dir as the cluster sees it).
"""

import dataclasses
import logging
import os
import tempfile
from pathlib import Path

import ray

from core.training.config import TrainConfig
from core.training.train import Trainer
from service.remote import Mailbox, connect, pack, unpack

log = logging.getLogger("tools.release.parallel")
POLL = 2.0  # seconds between looks at the runs' progress


@ray.remote(num_cpus=1, max_retries=0)
def train_run(cfg: TrainConfig, run: bytes | None, mailbox) -> bytes:
    """Train `cfg` (resuming from `run`, a packed run folder, when cfg.resume) and return its packed folder."""
    with tempfile.TemporaryDirectory(prefix="lab-run-") as tmp:
        out = Path(tmp) / "run"
        if run is not None:
            unpack(run, out)
        trainer = Trainer.from_config(dataclasses.replace(cfg, out=str(out), threads=cfg.threads or 1, progress=False))

        def report(record: dict) -> None:
            mailbox.report.remote({"epoch": record["epoch"], "best_dev": record["best_dev"]})
            mailbox.save_run.remote(pack(out))

        trainer.fit(on_epoch=report)
        return pack(out)


def train_parallel(configs: dict[str, TrainConfig], parallel: int) -> None:
    """Train every {key: config} as a Ray task, logging each epoch and each finished run."""
    address = os.environ.get("RAY_ADDRESS", "")
    if not ray.is_initialized():
        connect(address or None, **({} if address else {"num_cpus": parallel, "include_dashboard": False}))
    where = f"the cluster at {address}" if address else f"{parallel} CPUs of this machine"
    log.info("%d runs on %s", len(configs), where)
    running = {}
    for key, cfg in configs.items():
        out = cfg.output_dir()
        state = pack(out) if cfg.resume and (out / "state").is_dir() else None
        mailbox = Mailbox.remote()  # type: ignore[attr-defined]  # @ray.remote made it an ActorClass
        running[train_run.remote(cfg, state, mailbox)] = (key, out, mailbox)
    progress = {key: "no epoch yet" for key in configs}
    while running:
        ended, _ = ray.wait(list(running), num_returns=len(running), timeout=POLL)
        for task, (key, out, mailbox) in list(running.items()):
            fields, blob = ray.get(mailbox.take.remote())
            if task in ended:
                unpack(ray.get(task), out)  # the training's own error, if any, raised as its own type
                del running[task]
                ray.kill(mailbox)
                progress[key] = "done"
            elif fields:
                if blob is not None:
                    unpack(blob, out)
                progress[key] = f"epoch {fields['epoch']}, best dev {fields['best_dev']:.4f}"
            else:
                continue
            done = sum(p == "done" for p in progress.values())
            runs = " · ".join(f"{k}: {p}" for k, p in progress.items())
            log.info("%d of %d runs done · %s", done, len(configs), runs)
