"""The one trainer for every model.

    python -m core.train --model tensor_cnn --task sst5 --phrases --seed 1
    python -m core.train --model dcnn --task sst2 --phrases --set k_top=4 --epochs 5
    python -m core.train --model nbow --task sst5 --phrases --resume   # continue a killed run

It knows nothing model-specific: a model brings its config dataclass, its paper's training recipe
(`default_training`, `presets` per task) and its parameter groups. Per epoch: shuffled exact-length
buckets (order derived from (seed, epoch), so a resumed run sees the same batches), forward, loss,
backward, clip, step; then dev and test accuracy, the best-on-dev checkpoint, and the full training
state (model, optimizer, RNG, counters) for --resume. Output directory:
    best/            the checkpoint of the best dev epoch (core.checkpoint format)
    state/           the last epoch's training state
    log.jsonl        one line per epoch
    metrics.json     final report: test at the best dev epoch, per-class P/R/F1, confusion, epoch times
"""

import argparse
import dataclasses
import json
import logging
import random
import subprocess
import sys
import time
import types
import typing
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch
from tqdm import tqdm

from core.batching import bucket_batches
from core.checkpoint import (CheckpointError, atomic_write_text, load_checkpoint, load_training_state,
                             save_checkpoint, save_training_state)
from core.data import PROJECT_ROOT, DataError, load_task
from core.metrics import evaluate
from core.models import model_class
from core.vectors import embedding_matrix, load_vectors, reduce_dim
from core.vocab import Vocab

log = logging.getLogger("core.train")
# torch warns once per process that it does not validate the sparse embedding gradients it builds itself
warnings.filterwarnings("ignore", message="Sparse invariant checks are implicitly disabled")


@dataclass
class TrainConfig:
    model: str = "nbow"
    task: str = "sst5"
    phrases: bool = False  # SST: train on every labelled phrase too (evaluation stays on sentences)
    seed: int = 1
    epochs: int | None = None  # None: the model's default_training
    batch_size: int | None = None
    optimizer: str | None = None  # adagrad | adadelta | adam
    lr: float | None = None
    l2: float | None = None
    clip: float | None = None  # max gradient norm, 0 = off
    # L2 on the trained embedding rows each batch looks up (sparse gradients take no weight decay): penalty
    # embed_l2 * sum of their squared entries, added once per step a row appears
    embed_l2: float = 0.0
    patience: int = 5  # stop after this many epochs without a better dev accuracy
    # dev evaluations per epoch, the best one kept: the authors select their model this way (Godin's DCNN
    # evaluates every 10 batches, Lei's --eval_period) and dev peaks early; None: the model's recipe, else 1
    evals_per_epoch: int | None = None
    # reset AdaGrad's accumulator every N epochs (the DCNN authors' Matlab trick, via Godin); None/0: never
    adagrad_reset: int | None = None
    vectors: str = "auto"  # a vectors file, "auto" (.cache/vectors/<lang> when present) or "none"
    extra_vocab: int = 0  # add this many frequent words from the vectors beyond the training vocabulary
    out: str = ""  # default runs/<task>[-phrases]/<model>-s<seed>[-f<fold>]
    resume: bool = False
    data_dir: str = ""
    fold: int = 0  # MR/CR/SUBJ/MPQA cross-validation fold
    max_train: int = 0  # use only the first N training examples (tests, smoke runs); 0 = all
    max_words: int = 0  # cut longer training examples to their first N words (long Chinese reviews); 0 = keep all
    threads: int = 0  # torch threads, 0 = torch's default
    progress: bool = True  # a progress bar when stderr is a terminal
    set: list[str] = field(default_factory=list)  # model config overrides, key=value

    def output_dir(self) -> Path:
        task = self.task + ("-phrases" if self.phrases and self.task in ("sst5", "sst2") else "")
        fold = f"-f{self.fold}" if self.fold else ""  # fold 0 keeps the plain name: it is every task's default split
        return Path(self.out) if self.out else PROJECT_ROOT / "runs" / task / f"{self.model}-s{self.seed}{fold}"


def _parse_value(text: str, annotation):
    """Convert `text` to the type of a dataclass field (int, float, bool, str, or X | None)."""
    is_union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    options = [a for a in typing.get_args(annotation) if a is not type(None)] if is_union else [annotation]
    target = options[0]
    if text.lower() == "none" and type(None) in typing.get_args(annotation):
        return None
    if target is bool:
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"expected true/false, got {text!r}")
        return text.lower() in ("true", "1")
    if target in (int, float, str):
        return target(text)
    if typing.get_origin(target) is list:
        item = typing.get_args(target)[0]
        return [item(x) for x in text.split(",") if x]
    raise ValueError(f"cannot parse {annotation}")


def model_overrides(config_class, pairs: list[str]) -> dict:
    fields = {f.name: f.type for f in dataclasses.fields(config_class)}
    overrides = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in fields:
            raise ValueError(f"--set {pair!r}: expected key=value with key in {', '.join(fields)}")
        try:
            overrides[key] = _parse_value(value, fields[key])
        except ValueError as err:
            raise ValueError(f"--set {pair!r}: {err}") from None
    return overrides


def build_optimizers(model, cfg: TrainConfig) -> list[torch.optim.Optimizer]:
    """The paper's optimizer over dense parameters; sparse (embedding) gradients need an optimizer
    that accepts them: Adagrad does, Adam's sparse twin is SparseAdam, Adadelta has none (a trained
    embedding then takes dense gradients: a (V, d) update per step, slower but correct)."""
    if cfg.optimizer == "adadelta":
        model.embedding.sparse = False
    groups = model.param_groups(cfg.l2)
    sparse_params = {id(model.embedding.weight)} if model.embedding.sparse and model.embedding.weight.requires_grad else set()
    dense = [dict(g, params=[p for p in g["params"] if id(p) not in sparse_params]) for g in groups]
    sparse = [dict(g, params=[p for p in g["params"] if id(p) in sparse_params]) for g in groups]
    dense = [g for g in dense if g["params"]]
    sparse = [g for g in sparse if g["params"]]
    name = cfg.optimizer
    if name == "adagrad":  # Adagrad takes sparse gradients itself (without weight decay)
        return [torch.optim.Adagrad(dense + sparse, lr=cfg.lr)]
    if name == "adam":
        optimizers = [torch.optim.Adam(dense, lr=cfg.lr)]
        if sparse:
            optimizers.append(torch.optim.SparseAdam([{"params": g["params"]} for g in sparse], lr=cfg.lr))
        return optimizers
    if name == "adadelta":
        return [torch.optim.Adadelta(dense, lr=cfg.lr)]
    raise ValueError(f"unknown optimizer {name!r}; choose adagrad, adadelta or adam")


def git_commit() -> str:
    """The short commit, with "+dirty" when tracked files have uncommitted changes."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=5).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        return commit + ("+dirty" if commit and git("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.SubprocessError):
        return ""


def _resolve_vectors(cfg: TrainConfig, lang: str) -> Path | None:
    if cfg.vectors == "none":
        return None
    if cfg.vectors == "auto":
        path = PROJECT_ROOT / ".cache" / "vectors" / f"{lang}.safetensors"
        return path if path.is_file() else None
    return Path(cfg.vectors)


class Trainer:
    def __init__(self, cfg: TrainConfig):
        cls = model_class(cfg.model)
        for key, value in {"evals_per_epoch": 1, "adagrad_reset": 0, **cls.default_training}.items():
            if getattr(cfg, key, None) is None:  # the paper's recipe fills what the user left unset
                setattr(cfg, key, value)
        if cfg.evals_per_epoch < 1:
            raise ValueError(f"evals_per_epoch must be >= 1, got {cfg.evals_per_epoch}")
        self.cfg = cfg
        self.out = cfg.output_dir()
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        self.task = load_task(cfg.task, cfg.data_dir or None, phrases=cfg.phrases, fold=cfg.fold)
        if cfg.max_train:
            self.task.train = self.task.train[: cfg.max_train]
        if cfg.max_words:
            self.task.train = [dataclasses.replace(e, words=e.words[: cfg.max_words]) for e in self.task.train]
        _seed_everything(cfg.seed)

        vectors_path = _resolve_vectors(cfg, self.task.lang)
        if cfg.vectors == "auto" and cfg.task in cls.random_embeddings_for:
            log.info("%s on %s: random embeddings, as in the paper (pass --vectors to override)", cfg.model, cfg.task)
            vectors_path = None
        vectors = load_vectors(vectors_path) if vectors_path else None
        extra = vectors.words[: cfg.extra_vocab] if vectors and cfg.extra_vocab else []
        self.vocab = Vocab.build((e.words for e in self.task.train), extra=extra)

        config_fields = {"vocab_size": len(self.vocab), "num_classes": len(self.task.labels)}
        config_fields.update(getattr(cls, "presets", {}).get(cfg.task, {}))
        overrides = model_overrides(cls.config_class, cfg.set)
        defaults = {**{f.name: f.default for f in dataclasses.fields(cls.config_class)}, **config_fields, **overrides}
        if vectors is not None and defaults.get("freeze_embeddings") and "embed_dim" not in overrides:
            config_fields["embed_dim"] = vectors.dim  # a model built for fixed pretrained vectors takes their size
        if vectors is None and "freeze_embeddings" not in overrides:
            # frozen random vectors carry no information: without pretrained vectors, train them
            config_fields["freeze_embeddings"] = False
        config_fields.update(overrides)
        self.model = cls(cls.config_class(**config_fields))
        self.coverage = None
        if vectors is not None:
            source_dim = vectors.dim
            if vectors.dim > self.model.embedding.embedding_dim:
                vectors = reduce_dim(vectors, self.model.embedding.embedding_dim)
            if vectors.dim != self.model.embedding.embedding_dim:
                log.warning("vectors %s are %d-d but the model embeds in %d-d: random initialisation instead",
                            vectors_path, vectors.dim, self.model.embedding.embedding_dim)
            else:
                unit_norm = getattr(self.model.config, "unit_norm_vectors", False)
                matrix, self.coverage = embedding_matrix(self.vocab, vectors, unit_norm=unit_norm, seed=cfg.seed)
                self.model.load_pretrained_embeddings(torch.from_numpy(matrix))
                self.coverage["file"] = str(vectors_path)
                if vectors.dim != source_dim:
                    self.coverage["pca_from"] = source_dim
        self.optimizers = build_optimizers(self.model, cfg)
        self.epoch, self.best_dev, self.best_epoch, self.bad_epochs, self.eval_seconds = 0, -1.0, 0, 0, 0.0
        self.history: list[dict] = []

    # -- state for --resume ---------------------------------------------------------------------
    def state_dict(self) -> dict:
        return {
            "model": self.model.state_dict(),
            "optimizers": [o.state_dict() for o in self.optimizers],
            "epoch": self.epoch, "best_dev": self.best_dev, "best_epoch": self.best_epoch,
            "bad_epochs": self.bad_epochs, "history": self.history,
            "torch_rng": torch.get_rng_state(), "python_rng": list(random.getstate()[1]),
            "vocab": self.vocab.itos, "config": dataclasses.asdict(self.cfg),
        }

    def load_state_dict(self, state: dict) -> None:
        if state["vocab"] != self.vocab.itos:
            raise CheckpointError(f"{self.out}/state: saved for a different vocabulary; start a fresh run (no --resume)")
        self.model.load_state_dict(state["model"])
        for optimizer, saved in zip(self.optimizers, state["optimizers"]):
            optimizer.load_state_dict(saved)
        self.epoch, self.best_dev, self.best_epoch = state["epoch"], state["best_dev"], state["best_epoch"]
        self.bad_epochs, self.history = state["bad_epochs"], state["history"]
        torch.set_rng_state(state["torch_rng"])
        random.setstate((3, tuple(state["python_rng"]), None))

    def _meta(self) -> dict:
        return {"task": self.task.name, "lang": self.task.lang, "labels": self.task.labels,
                "phrases": self.cfg.phrases, "seed": self.cfg.seed, "train_config": dataclasses.asdict(self.cfg)}

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

    def train_epoch(self) -> tuple[float, list[float]]:
        """One pass over the training data with `evals_per_epoch` dev evaluations spread evenly over it
        (the last at its end): (mean training loss, the dev accuracies)."""
        cfg, model = self.cfg, self.model
        if cfg.adagrad_reset and self.epoch and self.epoch % cfg.adagrad_reset == 0:
            for optimizer in self.optimizers:
                if isinstance(optimizer, torch.optim.Adagrad):
                    for group in optimizer.param_groups:
                        for p in group["params"]:
                            if "sum" in optimizer.state.get(p, {}):
                                optimizer.state[p]["sum"].fill_(group["initial_accumulator_value"])
        model.train()
        batches = bucket_batches(self.task.train, self.vocab, cfg.batch_size, seed=cfg.seed * 1000 + self.epoch)
        eval_after = {round(len(batches) * (i + 1) / cfg.evals_per_epoch) for i in range(cfg.evals_per_epoch)}
        show = cfg.progress and sys.stderr.isatty()
        total, count, devs = 0.0, 0, []
        for step, batch in enumerate(tqdm(batches, desc=f"epoch {self.epoch + 1}", disable=not show, leave=False), 1):
            out = model(batch.ids, batch.lengths, batch.labels)
            loss = out.loss
            if not torch.isfinite(loss):
                raise FloatingPointError(
                    f"loss became {loss.item()} in epoch {self.epoch + 1}; stopped. The last good state is in {self.out / 'state'}"
                    " (try a lower --lr or a --clip)")
            if cfg.embed_l2 and model.embedding.weight.requires_grad:
                (loss + cfg.embed_l2 * model.embedding(batch.ids.unique()).pow(2).sum()).backward()
            else:
                loss.backward()
            if cfg.clip:
                torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.grad is not None and not p.grad.is_sparse], cfg.clip)
            for optimizer in self.optimizers:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            total += loss.item() * len(batch.labels)
            count += len(batch.labels)
            if step in eval_after:
                devs.append(self.evaluate_dev())
                model.train()
        return total / max(1, count), devs

    def fit(self) -> dict:
        cfg = self.cfg
        self.out.mkdir(parents=True, exist_ok=True)
        if cfg.resume and (state := load_training_state(self.out / "state")) is not None:
            self.load_state_dict(state)
            log.info("resumed %s after epoch %d (best dev %.4f)", self.out, self.epoch, self.best_dev)
        while self.epoch < cfg.epochs and self.bad_epochs < cfg.patience:
            start, best_before, self.eval_seconds = time.perf_counter(), self.best_dev, 0.0
            train_loss, devs = self.train_epoch()
            seconds = time.perf_counter() - start - self.eval_seconds  # the training pass alone
            self.epoch += 1
            dev = devs[-1]
            record = {"epoch": self.epoch, "train_loss": train_loss, "dev_accuracy": dev, "train_seconds": seconds}
            if len(devs) > 1:
                record["dev_evals"] = devs
            self.bad_epochs = 0 if self.best_dev > best_before else self.bad_epochs + 1
            self.history.append(record)
            log.info("epoch %d  loss %.4f  dev %.4f  (best %.4f @%d)  %.1fs", self.epoch, train_loss, dev,
                     self.best_dev, self.best_epoch, seconds)
            save_training_state(self.out / "state", self.state_dict())
            # the log is rewritten from the saved history, so a killed and resumed run never repeats a line
            atomic_write_text(self.out / "log.jsonl", "".join(json.dumps(r) + "\n" for r in self.history))
        return self.finish()

    def finish(self) -> dict:
        best = load_checkpoint(self.out / "best")
        metrics = {
            "model": self.cfg.model, "task": self.task.name, "seed": self.cfg.seed, "phrases": self.cfg.phrases,
            "split": self.task.split_note, "train_examples": len(self.task.train),
            "test": evaluate(best.model, self.task.test, self.vocab, self.task.labels),
            "dev_accuracy": self.best_dev, "best_epoch": self.best_epoch, "epochs_run": self.epoch,
            "epoch_seconds": [r["train_seconds"] for r in self.history],
            "extra_tests": {name: evaluate(best.model, examples, self.vocab, self.task.labels)
                            for name, examples in self.task.extra_tests.items()},
            "parameters": sum(p.numel() for p in best.model.parameters() if p.requires_grad),
            "vectors": self.coverage, "train_config": dataclasses.asdict(self.cfg),
            "model_config": dataclasses.asdict(best.model.config), "commit": git_commit(),
            "command": "python -m core.train " + " ".join(sys.argv[1:]) if sys.argv[0].endswith("train.py") else "",
            "torch_threads": torch.get_num_threads(),
        }
        atomic_write_text(self.out / "metrics.json", json.dumps(metrics, indent=2))
        atomic_write_text(self.out / "best" / "metrics.json", json.dumps(metrics, indent=2))
        log.info("test accuracy %.4f at best dev epoch %d (dev %.4f)", metrics["test"]["accuracy"], self.best_epoch, self.best_dev)
        return metrics


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:
        pass


def parse_args(argv: list[str] | None = None) -> TrainConfig:
    parser = argparse.ArgumentParser(prog="python -m core.train", description=__doc__.split("\n\n")[0])
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        if f.type is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default)
        elif f.name == "set":
            parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="model config override")
        else:
            kind = [a for a in typing.get_args(f.type) if a is not type(None)] or [f.type]
            parser.add_argument(flag, type=kind[0], default=f.default)
    return TrainConfig(**vars(parser.parse_args(argv)))


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    try:
        cfg = parse_args(argv)
        metrics = Trainer(cfg).fit()
    except (DataError, CheckpointError, ValueError, FileNotFoundError, FloatingPointError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps({"test_accuracy": metrics["test"]["accuracy"], "dev_accuracy": metrics["dev_accuracy"],
                      "best_epoch": metrics["best_epoch"], "out": str(cfg.output_dir())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
