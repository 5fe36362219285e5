"""The one trainer for every model.

    python -m core.training.train --model tensor_cnn --task sst5 --phrases --seed 1
    python -m core.training.train --model dcnn --task sst2 --phrases --set k_top=4 --epochs 5
    python -m core.training.train --model nbow --task sst5 --phrases --resume   # continue a killed run
    python -m core.training.train --model dcnn --data reviews.csv --text-column review --label-column stars

It knows nothing model-specific: a model brings its config dataclass and its parameter groups, and its
recipe (configs/recipes/<model>.toml: training settings, presets per task) the rest. The flow:
  1. core.training.config.build_run(config): the task, vocabulary and model, every setting decided;
  2. Trainer(run): the optimizers for the recipe (`build_optimizers`); with --resume, the saved state,
     after checking it was trained with the same settings (`resume_conflicts`);
  3. fit(): per epoch, shuffled exact-length buckets (order derived from (seed, epoch), so a resumed run
     sees the same batches); per batch forward, loss, backward, clip, step, zero_grad, and dev
     evaluations spread over the epoch, the best one saved; at the epoch's end the full training state
     (model, optimizers, RNG, counters) for --resume;
  4. finish(): test accuracy of the best dev checkpoint.
Output directory:
    best/            the checkpoint of the best dev evaluation (core.checkpoints.checkpoint format)
    state/           the last epoch's training state
    log.jsonl        one line per epoch
    metrics.json     final report: test at the best dev evaluation, per-class P/R/F1, confusion, epoch times
"""

import argparse
import dataclasses
import json
import logging
import random
import sys
import time
import typing
import warnings
from collections.abc import Callable

import torch
from tqdm import tqdm

from core.analysis.metrics import evaluate, evaluate_as_binary
from core.checkpoints.checkpoint import (
    CheckpointError,
    atomic_write_text,
    load_checkpoint,
    load_training_state,
    save_checkpoint,
    save_training_state,
)
from core.data import DataError, load_task
from core.data.batching import bucket_batches
from core.data.user import read_rows, user_task_name
from core.gitinfo import git_commit
from core.models.base import SentenceClassifier
from core.notices import Notice
from core.training.config import Run, Schedule, TrainConfig, build_run, schedule

log = logging.getLogger("core.training.train")
# torch warns once per process that it does not validate the sparse embedding gradients it builds itself
warnings.filterwarnings("ignore", message="Sparse invariant checks are implicitly disabled")

# Settings a resumed run may change: how long it goes on and how it reports, never what a step computes.
# Every other TrainConfig field, and the pretrained vectors file, must equal the saved run's, so that
# metrics.json, which records the final settings, describes the whole run.
RESUMABLE = frozenset({"epochs", "patience", "progress", "threads", "resume", "out", "max_minutes"})

# Why fit() ended, as codes with parameters (core.notices); service.jobs records the code in the job and
# adds its own "stop_cancelled", the front end words them in English and Chinese.
STOP_TEXT = {
    "stop_epochs": "Trained every epoch asked for: {epochs}.",
    "stop_patience": (
        "Stopped early at epoch {epoch} of {epochs}: dev accuracy did not improve for {patience} epochs "
        "(best {best_dev:.3f} at epoch {best_epoch})."
    ),
    "stop_time": "Stopped at epoch {epoch:g} of {epochs}: the {minutes:g}-minute time budget was spent.",
    "stop_cancelled": "Cancelled during epoch {epoch} of {epochs}.",
}


# a trained model no better than not reading at all, said beside its accuracy (the Train tab, its Lab panel)
DEGENERATE_TEXT = {
    "model_one_class": (
        "This model answers {label} for every test row (test accuracy {accuracy:.1%}; always answering the "
        "commonest class gets {majority:.1%}): it has not learnt to tell the classes apart. Try more epochs, "
        "pretrained word vectors, another model or more rows."
    ),
    "model_below_majority": (
        "This model is no better than always answering the commonest class (test accuracy {accuracy:.1%} against "
        "{majority:.1%}). Try more epochs, pretrained word vectors, another model or more rows."
    ),
}


def degenerate(test: dict, labels: list[str]) -> dict | None:
    """A test evaluation (core.analysis.evaluate) that shows a model answering one class for every row, or doing
    no better than the commonest class, as a stored record (stop_record's form); None for a model that learnt."""
    confusion = test["confusion"]  # rows: the true class, columns: the predicted one
    total = sum(map(sum, confusion))
    if not total:
        return None
    answered = [j for j in range(len(confusion)) if any(row[j] for row in confusion)]
    figures = {"accuracy": test["accuracy"], "majority": max(map(sum, confusion)) / total}
    if len(answered) == 1 and len(labels) > 1:
        return stop_record("model_one_class", label=labels[answered[0]], **figures)
    if figures["accuracy"] <= figures["majority"]:
        return stop_record("model_below_majority", **figures)
    return None


def stop_record(code: str, **params) -> dict:
    """A stop reason as stored (metrics.json, a job's "stop"): its code, parameters and English."""
    return {"code": code, "params": params, "message": Notice(code, params).format({**STOP_TEXT, **DEGENERATE_TEXT})}


class DenseGradientAdadelta(torch.optim.Adadelta):
    """Adadelta for a model whose trained embedding has sparse gradients: PyTorch's Adadelta has no sparse
    form, so each sparse gradient is made dense before the update (a (V, d) update per step: slower, and the
    same update as a dense embedding's)."""

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and p.grad.is_sparse:
                    p.grad = p.grad.to_dense()
        return super().step(closure)


def build_optimizers(model: SentenceClassifier, cfg: TrainConfig) -> list[torch.optim.Optimizer]:
    """The recipe's optimizer over the model's parameter groups. A trained embedding has sparse gradients
    (SentenceClassifier.build_embedding) and each optimizer takes them its own way: Adagrad itself (its
    group has no weight decay, which sparse updates cannot apply), Adam through its sparse twin SparseAdam,
    Adadelta densified (DenseGradientAdadelta)."""
    settings = schedule(cfg)
    groups = model.param_groups(settings.l2)
    if settings.optimizer == "adagrad":
        # √(acc + ε) is torch's Adagrad with the accumulator starting at ε and nothing added after the root
        if cfg.adagrad_root_eps:
            return [
                torch.optim.Adagrad(groups, lr=settings.lr, initial_accumulator_value=cfg.adagrad_root_eps, eps=0.0)
            ]
        return [torch.optim.Adagrad(groups, lr=settings.lr)]
    if settings.optimizer == "adadelta":
        return [DenseGradientAdadelta(groups, lr=settings.lr, rho=cfg.rho)]
    if settings.optimizer == "adam":
        embedding = model.embedding.weight
        if not (model.embedding.sparse and embedding.requires_grad):
            return [torch.optim.Adam(groups, lr=settings.lr)]
        dense = [dict(g, params=[p for p in g["params"] if p is not embedding]) for g in groups]
        return [
            torch.optim.Adam([g for g in dense if g["params"]], lr=settings.lr),
            torch.optim.SparseAdam([embedding], lr=settings.lr),
        ]
    raise ValueError(f"unknown optimizer {settings.optimizer!r}; choose adagrad, adadelta or adam")


def resume_conflicts(saved: dict, current: dict) -> list[str]:
    """'name: saved -> current' for each setting outside RESUMABLE that differs. A setting an older
    state did not record is not compared."""
    return [
        f"{name}: {saved[name]!r} -> {value!r}"
        for name, value in current.items()
        if name not in RESUMABLE and name in saved and saved[name] != value
    ]


class Trainer:
    def __init__(self, run: Run):
        self.run = run
        self.cfg, self.task, self.vocab, self.model = run.config, run.task, run.vocab, run.model
        self.out = self.cfg.output_dir()
        if self.cfg.threads:
            torch.set_num_threads(self.cfg.threads)
        self.optimizers = build_optimizers(self.model, self.cfg)
        self.epoch, self.best_dev, self.best_epoch, self.bad_epochs, self.eval_seconds = 0, -1.0, 0, 0, 0.0
        self.history: list[dict] = []
        self.stop: Notice | None = None  # why fit() ended (STOP_TEXT), once it has
        self.epoch_devs: list[tuple[int, float]] = []  # this epoch's dev evaluations so far: (step, accuracy)
        # called after every training step with (step, steps in the epoch, loss): live progress for service.jobs
        self.on_batch: Callable[[int, int, float], None] | None = None
        # the time budget (max_minutes) is spent by this run and by earlier ones of the same training: a resumed
        # job's (service.jobs), whose seconds it records; the clock is a test's to replace
        self.clock: Callable[[], float] = time.monotonic
        self.seconds_before, self.fit_start = 0.0, self.clock()

    @property
    def schedule(self) -> Schedule:
        """The config's training settings, read anew: a caller may change `cfg` between fits."""
        return schedule(self.cfg)

    @classmethod
    def from_config(cls, cfg: TrainConfig) -> "Trainer":
        """build_run, then a Trainer for it: the way in for the CLI, scripts and tests."""
        return cls(build_run(cfg))

    # -- state for --resume ---------------------------------------------------------------------
    def settings(self) -> dict:
        """What decides the result: the resolved training config and the pretrained vectors file used."""
        return {**dataclasses.asdict(self.cfg), "vectors_file": self.run.coverage and self.run.coverage["file"]}

    def state_dict(self) -> dict:
        return {
            "model": self.model.state_dict(),
            "optimizers": [o.state_dict() for o in self.optimizers],
            "epoch": self.epoch,
            "best_dev": self.best_dev,
            "best_epoch": self.best_epoch,
            "bad_epochs": self.bad_epochs,
            "history": self.history,
            "torch_rng": torch.get_rng_state(),
            "python_rng": list(random.getstate()[1]),
            "vocab": self.vocab.itos,
            "config": self.settings(),
        }

    def load_state_dict(self, state: dict) -> None:
        if conflicts := resume_conflicts(state["config"], self.settings()):
            raise CheckpointError(
                f"{self.out}/state was trained with other settings ({'; '.join(conflicts)}); --resume may "
                f"change only {', '.join(sorted(RESUMABLE))}: repeat the run's settings or start a fresh run"
            )
        if state["vocab"] != self.vocab.itos:
            raise CheckpointError(
                f"{self.out}/state: saved for a different vocabulary; start a fresh run (no --resume)"
            )
        self.model.load_state_dict(state["model"])
        for optimizer, saved in zip(self.optimizers, state["optimizers"]):
            optimizer.load_state_dict(saved)
        self.epoch, self.best_dev, self.best_epoch = state["epoch"], state["best_dev"], state["best_epoch"]
        self.bad_epochs, self.history = state["bad_epochs"], state["history"]
        torch.set_rng_state(state["torch_rng"])
        random.setstate((3, tuple(state["python_rng"]), None))

    def _meta(self) -> dict:
        return {
            "task": self.task.name,
            "lang": self.task.lang,
            "labels": self.task.labels,
            "phrases": self.cfg.phrases,
            "seed": self.cfg.seed,
            "train_config": dataclasses.asdict(self.cfg),
        }

    # -- the loop -------------------------------------------------------------------------------
    def evaluate_dev(self) -> float:
        """Dev accuracy now; a new best is saved as the best checkpoint."""
        start = time.perf_counter()
        dev = evaluate(self.model, self.task.dev, self.vocab, self.task.labels)["accuracy"]
        if dev > self.best_dev:
            self.best_dev, self.best_epoch = dev, self.epoch + 1
            save_checkpoint(self.out / "best", self.model, self.vocab, self._meta())
        self.eval_seconds += time.perf_counter() - start
        return dev

    def reset_adagrad(self) -> None:
        """Every AdaGrad accumulator back to its initial value."""
        for optimizer in self.optimizers:
            if isinstance(optimizer, torch.optim.Adagrad):
                for group in optimizer.param_groups:
                    for p in group["params"]:
                        if "sum" in optimizer.state.get(p, {}):
                            optimizer.state[p]["sum"].fill_(group["initial_accumulator_value"])

    def seconds_spent(self) -> float:
        """Seconds of the time budget spent: before this run (seconds_before) and by this fit() so far."""
        return self.seconds_before + self.clock() - self.fit_start

    def out_of_time(self) -> bool:
        return bool(self.cfg.max_minutes) and self.seconds_spent() >= self.cfg.max_minutes * 60

    def time_stop(self, epoch: float) -> Notice:
        """The stop of a spent budget at `epoch` (fractional within an epoch)."""
        params = {"epoch": round(epoch, 2), "epochs": self.schedule.epochs, "minutes": self.cfg.max_minutes}
        return Notice("stop_time", params)

    def train_epoch(self) -> tuple[float, list[float]]:
        """One pass over the training data with `evals_per_epoch` dev evaluations spread evenly over it
        (the last at its end): (mean training loss, the dev accuracies). A time budget spent before its last
        batch ends it there (self.stop), after a dev evaluation: the best checkpoint holds the training so far."""
        cfg, settings, model = self.cfg, self.schedule, self.model
        if settings.adagrad_reset and self.epoch and self.epoch % settings.adagrad_reset == 0:
            self.reset_adagrad()
        model.train()
        batches = bucket_batches(self.task.train, self.vocab, settings.batch_size, seed=cfg.seed * 1000 + self.epoch)
        evals = settings.evals_per_epoch
        eval_after = {round(len(batches) * (i + 1) / evals) for i in range(evals)}
        show = cfg.progress and sys.stderr.isatty()
        total, count, self.epoch_devs = 0.0, 0, []
        for step, batch in enumerate(tqdm(batches, desc=f"epoch {self.epoch + 1}", disable=not show, leave=False), 1):
            # forward
            loss = model(batch.ids, batch.lengths, batch.labels).loss
            if not torch.isfinite(loss):
                raise FloatingPointError(
                    f"loss became {loss.item()} in epoch {self.epoch + 1}; stopped. "
                    f"The last good state is in {self.out / 'state'}"
                    " (try a lower --lr or a --clip)"
                )
            if cfg.embed_l2 and model.embedding.weight.requires_grad:
                penalty = cfg.embed_l2 * model.embedding(batch.ids.unique()).pow(2).sum()
            else:
                penalty = 0.0
            # backward, clip, step
            (loss + penalty).backward()
            if settings.clip:  # the dense gradients: clip_grad_norm_ cannot take sparse ones
                torch.nn.utils.clip_grad_norm_(
                    [p for p in model.parameters() if p.grad is not None and not p.grad.is_sparse], settings.clip
                )
            for optimizer in self.optimizers:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            # log, evaluate
            total += loss.item() * len(batch.labels)
            count += len(batch.labels)
            # at the epoch's last batch fit() looks at the budget, once the epoch is saved
            out_of_time = step < len(batches) and self.out_of_time()
            if step in eval_after or out_of_time:  # before on_batch, so that its report holds this evaluation
                self.epoch_devs.append((step, self.evaluate_dev()))
                model.train()
            if self.on_batch is not None:
                self.on_batch(step, len(batches), loss.item())
            if out_of_time:
                self.stop = self.time_stop(self.epoch + step / len(batches))
                break
        return total / max(1, count), [accuracy for _, accuracy in self.epoch_devs]

    def fit(self, on_epoch: Callable[[dict], None] | None = None) -> dict:
        """Train until `epochs` or `patience` runs out; `on_epoch(record)` after each epoch's state is saved
        (a hyper-parameter search reports it and may stop the run there: it resumes from that state).
        `max_minutes` ends training at the batch that spends it, counting `seconds_before` (train_epoch): a part
        epoch is not saved as one, and its history has the epochs finished."""
        cfg, self.stop, self.fit_start = self.cfg, None, self.clock()
        self.out.mkdir(parents=True, exist_ok=True)
        if cfg.resume and (state := load_training_state(self.out / "state")) is not None:
            self.load_state_dict(state)
            log.info("resumed %s after epoch %d (best dev %.4f)", self.out, self.epoch, self.best_dev)
        while self.epoch < self.schedule.epochs and self.bad_epochs < cfg.patience:
            start, best_before, self.eval_seconds = time.perf_counter(), self.best_dev, 0.0
            train_loss, devs = self.train_epoch()
            if self.stop is not None:  # the budget was spent within the epoch
                break
            seconds = time.perf_counter() - start - self.eval_seconds  # the training pass alone
            self.epoch += 1
            dev = devs[-1]
            record: dict[str, object] = {
                "epoch": self.epoch,
                "train_loss": train_loss,
                "dev_accuracy": dev,
                "train_seconds": seconds,
            }
            if len(devs) > 1:
                record["dev_evals"] = devs
            self.bad_epochs = 0 if self.best_dev > best_before else self.bad_epochs + 1
            self.history.append(record)
            log.info(
                "epoch %d  loss %.4f  dev %.4f  (best %.4f @%d)  %.1fs",
                self.epoch,
                train_loss,
                dev,
                self.best_dev,
                self.best_epoch,
                seconds,
            )
            save_training_state(self.out / "state", self.state_dict())
            # the log is rewritten from the saved history, so a killed and resumed run never repeats a line
            atomic_write_text(self.out / "log.jsonl", "".join(json.dumps(r) + "\n" for r in self.history))
            if on_epoch is not None:
                on_epoch({**record, "best_dev": self.best_dev, "best_epoch": self.best_epoch})
            if (
                self.out_of_time() and self.epoch < self.schedule.epochs and self.bad_epochs < cfg.patience
            ):  # nothing else did
                self.stop = self.time_stop(self.epoch)
                break
        if self.stop is None:
            self.stop = self.stop_reason()
        log.info("%s", self.stop.format(STOP_TEXT))
        return self.finish()

    def _as_sst2(self, model) -> dict:
        """An SST-5 run is also read as SST-2 on SST-2's dev and test sentences (`binary_from_fine`): the
        binary task a fine-grained model answers without a second training run."""
        if self.task.name != "sst5":
            return {}
        sst2 = load_task("sst2", self.cfg.data_dir or None)
        return {
            "as_sst2": {split: evaluate_as_binary(model, getattr(sst2, split), self.vocab) for split in ("dev", "test")}
        }

    def stop_reason(self) -> Notice:
        """Why the loop above ended without a time budget spent: every epoch trained, or patience run out."""
        if self.epoch >= self.schedule.epochs:
            return Notice("stop_epochs", {"epochs": self.schedule.epochs})
        return Notice(
            "stop_patience",
            {
                "epoch": self.epoch,
                "epochs": self.schedule.epochs,
                "patience": self.cfg.patience,
                "best_dev": self.best_dev,
                "best_epoch": self.best_epoch,
            },
        )

    def finish(self) -> dict:
        best = load_checkpoint(self.out / "best")
        test = evaluate(best.model, self.task.test, self.vocab, self.task.labels)
        metrics = {
            "model": self.cfg.model,
            "task": self.task.name,
            "seed": self.cfg.seed,
            "phrases": self.cfg.phrases,
            "split": self.task.split_note,
            "train_examples": len(self.task.train),
            "test": test,
            "degenerate": degenerate(test, self.task.labels),
            "dev_accuracy": self.best_dev,
            "best_epoch": self.best_epoch,
            "epochs_run": self.epoch,
            "stop": stop_record(self.stop.code, **self.stop.params) if self.stop else None,
            "epoch_seconds": [r["train_seconds"] for r in self.history],
            "extra_tests": {
                name: evaluate(best.model, examples, self.vocab, self.task.labels)
                for name, examples in self.task.extra_tests.items()
            },
            "parameters": sum(p.numel() for p in best.model.parameters() if p.requires_grad),
            **self._as_sst2(best.model),
            "vectors": self.run.coverage,
            "train_config": dataclasses.asdict(self.cfg),
            "model_config": dataclasses.asdict(best.model.config),
            "commit": git_commit(),
            "command": "python -m core.training.train " + " ".join(sys.argv[1:])
            if sys.argv[0].endswith("train.py")
            else "",
            "torch_threads": torch.get_num_threads(),
        }
        atomic_write_text(self.out / "metrics.json", json.dumps(metrics, indent=2))
        atomic_write_text(self.out / "best" / "metrics.json", json.dumps(metrics, indent=2))
        log.info(
            "test accuracy %.4f at best dev epoch %d (dev %.4f)",
            metrics["test"]["accuracy"],
            self.best_epoch,
            self.best_dev,
        )
        if metrics["degenerate"]:
            log.warning("%s", metrics["degenerate"]["message"])
        return metrics


# each TrainConfig field's line in --help (the reasons behind the defaults: core/training/config.py)
FLAG_HELP = {
    "model": "the model to train (core.models: nbow, tensor_cnn, dcnn, mrnn, adasent, agt)",
    "task": "a registered task (core.data.TASKS), or the name of a --data file's task",
    "phrases": "SST: train on every labelled phrase too (evaluation stays on sentences)",
    "seed": "the random seed",
    "epochs": "epochs to train (default: the model's recipe, configs/recipes/<model>.toml)",
    "batch_size": "examples per batch (default: the recipe's)",
    "min_updates": "a small file's batches shrink (not under 4 rows) until an epoch makes this many updates; 0: off",
    "optimizer": "adagrad, adadelta or adam (default: the recipe's)",
    "lr": "learning rate (default: the recipe's)",
    "l2": "L2 weight penalty (default: the recipe's)",
    "clip": "max norm of the dense gradients, 0: off (default: the recipe's)",
    "embed_l2": "L2 penalty on the embedding rows each batch looks up",
    "patience": "stop after this many epochs without a better dev accuracy",
    "evals_per_epoch": "dev evaluations per epoch, the best kept (default: the recipe's, else 1)",
    "rho": "Adadelta's decay",
    "adagrad_reset": "reset AdaGrad's accumulator every N epochs (0 or unset: never)",
    "adagrad_root_eps": "AdaGrad's epsilon under the square root (0: torch's own)",
    "vectors": 'a word vectors file, "auto" (.cache/vectors/<lang> when present) or "none"',
    "extra_vocab": "add this many frequent words from the vectors beyond the training vocabulary",
    "missing_vectors": "the row of a word the vectors lack: random or zero",
    "out": "the run's folder (default runs/<task>[-phrases]/<model>-s<seed>[-f<fold>])",
    "resume": "continue the run in --out from its saved state",
    "data_dir": "where the datasets are (default: the project's data folder)",
    "data": "your own CSV/TSV/JSONL file to train on instead of a registered task",
    "text_column": "the --data file's text column (default: detected)",
    "label_column": "the --data file's label column (default: detected)",
    "max_minutes": "stop after this many minutes of training (0: no limit)",
    "fold": "MR/CR/SUBJ/MPQA cross-validation fold",
    "max_train": "use only the first N training examples (0: all)",
    "max_words": "cut longer training examples to their first N words (0: keep all)",
    "threads": "torch threads (0: torch's default)",
    "progress": "a progress bar when stderr is a terminal",
}


def parse_args(argv: list[str] | None = None) -> TrainConfig:
    parser = argparse.ArgumentParser(prog="python -m core.training.train", description=__doc__.split("\n\n")[0])
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        if f.type is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=FLAG_HELP[f.name])
        elif f.name == "set":
            parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="model config override")
        else:
            kind = [a for a in typing.get_args(f.type) if a is not type(None)] or [f.type]
            parser.add_argument(flag, type=kind[0], default=f.default, help=FLAG_HELP[f.name])
    cfg = TrainConfig(**vars(parser.parse_args(argv)))
    named_task = any(a == "--task" or a.startswith("--task=") for a in (sys.argv[1:] if argv is None else argv))
    if cfg.data and not named_task:  # a user's file is a task of its own
        rows = read_rows(cfg.data, cfg.text_column, cfg.label_column)  # the columns it chose, when auto
        cfg = dataclasses.replace(cfg, task=user_task_name(cfg.data, rows.text_column, rows.label_column))
    return cfg


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    try:
        cfg = parse_args(argv)
        metrics = Trainer.from_config(cfg).fit()
    except (DataError, CheckpointError, ValueError, FileNotFoundError, FloatingPointError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (
        OSError
    ) as err:  # a full disk, a read-only folder: every file is written atomically, so nothing saved is lost
        where = f" ({err.filename})" if err.filename else ""
        print(
            f"error: {err.strerror or err}{where}; the last saved epoch is intact: free the space and continue "
            "with --resume",
            file=sys.stderr,
        )
        return 2
    print(
        json.dumps(
            {
                "test_accuracy": metrics["test"]["accuracy"],
                "dev_accuracy": metrics["dev_accuracy"],
                "best_epoch": metrics["best_epoch"],
                "out": str(cfg.output_dir()),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
