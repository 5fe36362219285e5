"""Hyper-parameter search on Ray Tune: random search with ASHA early stopping, the papers' own method.

    python -m tools.research.sweep --model dcnn --task sst5 --phrases --samples 20 --max-epochs 8
    make sweep MODEL=dcnn TASK=sst5 SAMPLES=20

The search space is the [search] table of the model's recipe, configs/recipes/<model>.toml. Each
trial is an ordinary trainer run (core.training.train: the same log.jsonl, metrics.json and best/ checkpoint) in
runs/sweeps/<name>/<trial>/, and it reports its dev accuracy after every epoch; ASHA stops the weaker
half at each rung, and a stopped trial's state stays on disk. Ray runs locally (one trial per core, one
torch thread each) unless RAY_ADDRESS names a cluster. Run the same command again after an interruption
and the sweep resumes: finished trials are kept, unfinished ones continue from their last epoch.
Progress (trials done, best dev so far) is logged as trials report. The best trial's settings, dev
accuracy and the command that repeats it as an ordinary run go to runs/sweeps/<name>/best.json, which
`make bench` lists.
"""

import argparse
import dataclasses
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
from ray import tune
from ray.tune.schedulers import ASHAScheduler

from core.checkpoints.checkpoint import atomic_write_text
from core.data import PROJECT_ROOT
from core.models import model_class
from core.training.config import TrainConfig
from core.training.recipes import load_recipe
from core.training.train import Trainer
from tools.bench.accuracy import train_command

log = logging.getLogger("tools.research.sweep")
SWEEPS = PROJECT_ROOT / "runs" / "sweeps"
TRAIN_SETTINGS = set(TrainConfig.__dataclass_fields__)
METRIC = "best_dev"  # the trial's best dev accuracy so far: what the trainer keeps, so what ASHA compares


def tune_space(spec: dict) -> dict:
    """A model's declared search space as Ray Tune distributions."""
    kinds: dict[str, Callable[..., Any]] = {
        "choice": tune.choice,
        "uniform": tune.uniform,
        "loguniform": tune.loguniform,
    }
    space = {}
    for name, (kind, *args) in spec.items():
        if kind not in kinds:
            raise ValueError(f"search space {name!r}: unknown kind {kind!r}; choose {', '.join(kinds)}")
        space[name] = kinds[kind](*args)
    return space


def trial_config(base: TrainConfig, sampled: dict, out: Path) -> TrainConfig:
    """The trainer config of one trial: training settings set directly, model fields as --set overrides."""
    overrides = [f"{k}={v}" for k, v in sampled.items() if k not in TRAIN_SETTINGS]
    settings = {k: v for k, v in sampled.items() if k in TRAIN_SETTINGS}
    return dataclasses.replace(base, **settings, set=[*base.set, *overrides], out=str(out), resume=True, progress=False)


def command(cfg: TrainConfig) -> str:
    """The `python -m core.training.train` command that repeats a trial as an ordinary run."""
    return train_command(dataclasses.asdict(cfg))


def run_trial(sampled: dict, base: TrainConfig, root: Path) -> None:
    """One Ray Tune trial: an ordinary, resumable trainer run that reports after every epoch. The last
    report waits until the run has finished (metrics.json written): Tune ends a trial at the report that
    reaches max_t, and one that ASHA stops keeps its state for a resumed sweep."""
    out = root / tune.get_context().get_trial_id()
    cfg = trial_config(base, sampled, out)

    def report(epoch: int, dev: float, best_dev: float) -> None:
        tune.report({"epoch": epoch, "dev_accuracy": dev, METRIC: best_dev})

    def on_epoch(r: dict) -> None:
        if r["epoch"] < cfg.epochs:  # the last epoch reports below, once metrics.json is written
            report(r["epoch"], r["dev_accuracy"], r["best_dev"])

    trainer = Trainer.from_config(cfg)
    trainer.fit(on_epoch=on_epoch)
    report(trainer.epoch, trainer.history[-1]["dev_accuracy"], trainer.best_dev)


class Progress(tune.Callback):
    """Logs trials done and the best dev accuracy so far whenever a trial reports or ends."""

    def __init__(self, total: int):
        self.total, self.best, self.done = total, 0.0, 0

    def on_trial_result(self, iteration, trials, trial, result, **info):
        self.best = max(self.best, result.get(METRIC, 0.0))
        log.info(
            "trial %s epoch %d: dev %.4f; best so far %.4f; %d/%d trials done",
            trial.trial_id,
            result.get("epoch", 0),
            result.get("dev_accuracy", 0.0),
            self.best,
            self.done,
            self.total,
        )

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.done += 1
        log.info(
            "trial %s ended; %d/%d trials done, best dev so far %.4f", trial.trial_id, self.done, self.total, self.best
        )


def sweep(base: TrainConfig, samples: int, max_epochs: int, grace: int, name: str, root: Path = SWEEPS) -> dict:
    """Run (or resume) the sweep `name`; returns the best trial's record, also written to best.json."""
    spec = load_recipe(base.model).search_space
    if not spec:
        raise ValueError(f"{base.model} recipe declares no [search] space")
    root = (root / name).resolve()
    threads = base.threads or 1
    if not ray.is_initialized():  # RAY_ADDRESS (a cluster) is read by ray.init itself
        ray.init(
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            num_cpus=None if os.environ.get("RAY_ADDRESS") else os.cpu_count(),
        )
    base = dataclasses.replace(base, epochs=max_epochs, threads=threads)
    trainable = tune.with_resources(tune.with_parameters(run_trial, base=base, root=root / "trials"), {"cpu": threads})
    experiment = root / "tune"
    if tune.Tuner.can_restore(str(experiment)):
        log.info("resuming the sweep in %s", experiment)
        tuner = tune.Tuner.restore(str(experiment), trainable, resume_unfinished=True, resume_errored=True)
    else:
        scheduler = ASHAScheduler(time_attr="epoch", max_t=max_epochs, grace_period=grace, reduction_factor=2)
        tuner = tune.Tuner(
            trainable,
            param_space=tune_space(spec),
            tune_config=tune.TuneConfig(
                metric=METRIC,
                mode="max",
                num_samples=samples,
                scheduler=scheduler,
                search_alg=tune.search.BasicVariantGenerator(random_state=base.seed),
            ),
            run_config=tune.RunConfig(name="tune", storage_path=str(root), verbose=0, callbacks=[Progress(samples)]),
        )
    results = tuner.fit()
    best = results.get_best_result(metric=METRIC, mode="max")
    if best.config is None or best.metrics is None:
        raise RuntimeError(f"the sweep in {experiment} has no finished trial")
    trials = [
        {
            "trial": r.metrics["trial_id"],
            "config": r.config,
            METRIC: r.metrics.get(METRIC),
            "epochs": r.metrics.get("epoch"),
        }
        for r in (results[i] for i in range(len(results)))  # a ResultGrid indexes, but has no __iter__
        if r.metrics
    ]
    cfg = trial_config(base, best.config, root / "trials" / best.metrics["trial_id"])
    record = {
        "model": base.model,
        "task": base.task,
        "phrases": base.phrases,
        "samples": samples,
        "max_epochs": max_epochs,
        "search_space": {k: list(v) for k, v in spec.items()},
        "best": {
            "config": best.config,
            "dev_accuracy": best.metrics[METRIC],
            "epochs": best.metrics["epoch"],
            "run": cfg.out,
            "command": command(cfg),
        },
        "trials": sorted(trials, key=lambda t: -(t[METRIC] or 0)),
    }
    atomic_write_text(root / "best.json", json.dumps(record, indent=1))
    return record


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    parser = argparse.ArgumentParser(prog="python -m tools.research.sweep", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the model to search")
    parser.add_argument("--task", required=True, help="the task to search on")
    parser.add_argument("--phrases", action="store_true", help="SST: train on every labelled phrase")
    parser.add_argument("--samples", type=int, default=16, help="trials to sample")
    parser.add_argument("--max-epochs", type=int, default=8, help="epochs of a trial that ASHA never stops")
    parser.add_argument("--grace", type=int, default=1, help="epochs every trial gets before ASHA may stop it")
    parser.add_argument("--seed", type=int, default=1, help="the trials' training seed and the sampler's")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (and Ray CPUs) per trial")
    parser.add_argument("--name", default="", help="default <model>-<task>[-phrases]")
    parser.add_argument("--data-dir", default="", help="where the datasets are (default: the project's data folder)")
    parser.add_argument("--max-train", type=int, default=0, help="only the first N training examples (smoke runs)")
    parser.add_argument("--vectors", default="auto", help='the trials\' word vectors: a file, "auto" or "none"')
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="fixed model config override")
    args = parser.parse_args(argv)
    try:
        model_class(args.model)
        base = TrainConfig(
            model=args.model,
            task=args.task,
            phrases=args.phrases,
            seed=args.seed,
            threads=args.threads,
            data_dir=args.data_dir,
            max_train=args.max_train,
            vectors=args.vectors,
            set=args.set,
        )
        name = args.name or f"{args.model}-{args.task}{'-phrases' if args.phrases else ''}"
        record = sweep(base, args.samples, args.max_epochs, args.grace, name)
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    best = record["best"]
    print(
        json.dumps(
            {
                "best_dev": best["dev_accuracy"],
                "config": best["config"],
                "command": best["command"],
                "record": str(SWEEPS / name / "best.json"),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
