"""What a training run is made of, built from its configuration alone (and the files it names).

    run = build_run(TrainConfig(model="dcnn", task="sst2", phrases=True))

`build_run` is the whole setup, in order: fill the unset training settings from the model's recipe
(configs/recipes/<model>.toml, `resolve_recipe`), load the task, seed, choose the pretrained vectors
(`vectors_file`), build the vocabulary, decide the model configuration (`model_config`: the one place where
its four sources meet), build the model and copy the (PCA-reduced) vectors into it. Every decision about the
model is made before it is built; nothing changes it afterwards. core.training.train trains the returned `Run`.
"""

import dataclasses
import logging
import random
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from core.data import PROJECT_ROOT, TaskData, load_task
from core.data.user import load_user_task
from core.data.vectors import Vectors, embedding_matrix, load_vectors, reduce_dim
from core.data.vocab import Vocab
from core.models import model_class
from core.models.base import SentenceClassifier
from core.training.recipes import load_recipe

log = logging.getLogger("core.training.config")


@dataclass
class TrainConfig:
    model: str = "nbow"
    task: str = "sst5"
    phrases: bool = False  # SST: train on every labelled phrase too (evaluation stays on sentences)
    seed: int = 1
    epochs: int | None = None  # None: the model's recipe (configs/recipes/<model>.toml)
    batch_size: int | None = None
    # a small file's batches shrink (down to MIN_BATCH rows) until an epoch makes this many updates; 0 = off.
    # A 200-row file in the recipes' 32-row batches made 5 updates an epoch: too few for any model to learn
    # (docs/training.md, "Train your own": the defaults learn)
    min_updates: int = 0
    optimizer: str | None = None  # adagrad | adadelta | adam
    lr: float | None = None
    l2: float | None = None
    clip: float | None = None  # max norm of the dense gradients, 0 = off (sparse embedding gradients are not clipped)
    # L2 on the trained embedding rows each batch looks up (sparse gradients take no weight decay): penalty
    # embed_l2 * sum of their squared entries, added once per step a row appears
    embed_l2: float = 0.0
    patience: int = 5  # stop after this many epochs without a better dev accuracy
    # dev evaluations per epoch, the best one kept: the authors select their model this way (Godin's DCNN
    # evaluates every 10 batches, Lei's --eval_period) and dev peaks early; None: the model's recipe, else 1
    evals_per_epoch: int | None = None
    rho: float = 0.9  # Adadelta's decay: PyTorch's default; Zeiler (2012) and TensorFlow 1 use 0.95
    # reset AdaGrad's accumulator every N epochs (the DCNN authors' Matlab trick, via Godin); None/0: never
    adagrad_reset: int | None = None
    # AdaGrad's ε under the root, lr·g/√(acc + ε) (Lei's code 1e-8, Godin's 1e-6); 0: torch's lr·g/(√acc + 1e-10)
    adagrad_root_eps: float = 0.0
    vectors: str = "auto"  # a vectors file, "auto" (.cache/vectors/<lang> when present) or "none"
    extra_vocab: int = 0  # add this many frequent words from the vectors beyond the training vocabulary
    missing_vectors: str = "random"  # the row of a word the vectors lack: random, or zero (Lei et al.'s code)
    out: str = ""  # default runs/<task>[-phrases]/<model>-s<seed>[-f<fold>]
    resume: bool = False
    data_dir: str = ""
    # a user's own CSV/TSV/JSONL file (core.data.user) instead of a registered task; `task` names it
    data: str = ""
    text_column: str = ""  # the file's text column; "" = auto-detected
    label_column: str = ""  # the file's label column; "" = auto-detected
    max_minutes: float = 0.0  # stop at the batch that passes this many minutes of training; 0 = no limit
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


@dataclass
class Run:
    config: TrainConfig  # resolved: every training setting is set (resolve_recipe)
    task: TaskData  # after max_train / max_words
    vocab: Vocab
    model: SentenceClassifier  # built, pretrained vectors loaded; never changed by anything but training
    coverage: dict | None  # how many words the pretrained vectors cover, their file and PCA source size; None: random


@dataclass(frozen=True)
class Schedule:
    """A resolved TrainConfig's training settings, every one set: what the trainer reads."""

    epochs: int
    batch_size: int
    optimizer: str
    lr: float
    l2: float
    clip: float
    evals_per_epoch: int
    adagrad_reset: int


def schedule(cfg: TrainConfig) -> Schedule:
    """`cfg`'s training settings; ValueError naming those still unset (a config not through resolve_recipe)."""
    values = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(Schedule)}
    unset = sorted(name for name, value in values.items() if value is None)
    if unset:
        raise ValueError(f"{cfg.model}'s recipe leaves {', '.join(unset)} unset")
    return Schedule(**values)


def resolve_recipe(cfg: TrainConfig) -> TrainConfig:
    """A copy of `cfg` with every unset (None) training setting taken from the model's recipe ([training]);
    without a recipe entry, one dev evaluation per epoch and no AdaGrad reset."""
    recipe = {"evals_per_epoch": 1, "adagrad_reset": 0, **load_recipe(cfg.model).training}
    resolved = dataclasses.replace(cfg, **{k: v for k, v in recipe.items() if getattr(cfg, k) is None})
    evals_per_epoch = schedule(resolved).evals_per_epoch
    if evals_per_epoch < 1:
        raise ValueError(f"evals_per_epoch must be >= 1, got {evals_per_epoch}")
    return resolved


def _parse_value(text: str, annotation):
    """Convert `text` to the type of a dataclass field (int, float, bool, str, list, or X | None)."""
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
    """`--set key=value` pairs as {field: value}, each value parsed to its config field's type."""
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


def vectors_file(cfg: TrainConfig, lang: str) -> Path | None:
    """The pretrained vectors this run starts from, or None for random embeddings: with "auto", the recipe's
    set for the task ([vectors] by_task, when built), else the language's word2vec .cache/vectors/<lang>."""
    if cfg.vectors == "none":
        return None
    if cfg.vectors != "auto":
        return Path(cfg.vectors)
    recipe = load_recipe(cfg.model)
    if cfg.task in recipe.random_embeddings_for:
        log.info("%s on %s: random embeddings, as in the paper (pass --vectors to override)", cfg.model, cfg.task)
        return None
    folder = PROJECT_ROOT / ".cache" / "vectors"
    path = folder / f"{lang}.safetensors"
    if cfg.task in recipe.task_vectors:
        best = folder / f"{recipe.task_vectors[cfg.task]}.safetensors"
        if best.is_file():
            return best
        log.warning(
            "%s: its best vectors .cache/vectors/%s are not built (docs/vectors.md); using %s instead",
            cfg.task,
            best.name,
            path.name,
        )
    return path if path.is_file() else None


def model_config(cfg: TrainConfig, task: TaskData, vocab: Vocab, vectors: Vectors | None):
    """The model's configuration, from four sources, each overriding the ones before it:
      1. the config dataclass's defaults: the paper's main setting;
      2. the recipe's task preset ([presets.<task>]): the paper's setting for this task;
      3. what the pretrained vectors imply: a model that keeps its vectors fixed takes their size
         (embed_dim), and without pretrained vectors the random ones are trained (freeze_embeddings=False),
         since fixed random vectors carry no information;
      4. the `--set` overrides.
    vocab_size and num_classes are facts of the data, not settings: nothing overrides them."""
    cls = model_class(cfg.model)
    defaults = {f.name: f.default for f in dataclasses.fields(cls.config_class) if f.default is not dataclasses.MISSING}
    preset = load_recipe(cfg.model).preset(cfg.task)
    overrides = model_overrides(cls.config_class, cfg.set)
    implied: dict[str, bool | int]
    if vectors is None:
        implied = {"freeze_embeddings": False}
    elif {**defaults, **preset, **overrides}.get("freeze_embeddings"):
        implied = {"embed_dim": vectors.dim}
    else:
        implied = {}  # trained vectors: the model keeps its own size and gets them PCA-reduced (build_run)
    fields = {**preset, **implied, **overrides, "vocab_size": len(vocab), "num_classes": len(task.labels)}
    return cls.config_class(**fields)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


MIN_BATCH = 4  # the DCNN authors' batch size (Godin)


def small_file_batch(batch_size: int, rows: int, min_updates: int) -> int:
    """The recipe's batch size, or a smaller one (not under MIN_BATCH) that gives `rows` `min_updates` updates."""
    return max(MIN_BATCH, min(batch_size, rows // min_updates))


def build_run(cfg: TrainConfig) -> Run:
    """The task, vocabulary and model `cfg` describes, ready to train (see the module docstring).
    `cfg` itself is left as it is; the run holds its resolved copy."""
    cfg = resolve_recipe(cfg)
    if cfg.data:
        task = load_user_task(cfg.data, cfg.task, cfg.text_column, cfg.label_column)
    else:
        task = load_task(cfg.task, cfg.data_dir or None, phrases=cfg.phrases, fold=cfg.fold)
    train = task.train[: cfg.max_train] if cfg.max_train else task.train
    if cfg.max_words:
        train = [dataclasses.replace(e, words=e.words[: cfg.max_words]) for e in train]
    task = dataclasses.replace(task, train=train)
    if cfg.min_updates:
        batch_size = small_file_batch(schedule(cfg).batch_size, len(train), cfg.min_updates)
        cfg = dataclasses.replace(cfg, batch_size=batch_size)
    seed_everything(cfg.seed)  # before the model's random initialisation and the vectors' random rows

    path = vectors_file(cfg, task.lang)
    vectors = load_vectors(path) if path else None
    extra = vectors.words[: cfg.extra_vocab] if vectors and cfg.extra_vocab else []
    vocab = Vocab.build((e.words for e in task.train), extra=extra)
    model = model_class(cfg.model)(model_config(cfg, task, vocab, vectors))

    coverage = None
    if vectors is not None:
        dim, source_dim = model.embedding.embedding_dim, vectors.dim
        if vectors.dim > dim:
            vectors = reduce_dim(vectors, dim)
        if vectors.dim != dim:
            log.warning(
                "vectors %s are %d-d but the model embeds in %d-d: random initialisation instead",
                path,
                vectors.dim,
                dim,
            )
        else:
            unit_norm = getattr(model.config, "unit_norm_vectors", False)
            matrix, coverage = embedding_matrix(
                vocab, vectors, unit_norm=unit_norm, seed=cfg.seed, missing=cfg.missing_vectors
            )
            model.load_pretrained_embeddings(torch.from_numpy(matrix))
            coverage["file"] = str(path)
            if vectors.dim != source_dim:
                coverage["pca_from"] = source_dim
    return Run(cfg, task, vocab, model, coverage)
