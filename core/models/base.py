"""What every sentence model shares: the interface the trainer and the predictor call, and the few
pieces of math that really are the same across models (masks, embeddings, the expected score).
No model math lives here."""

import math
import os
import typing
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Generic, Self, TypeVar

import torch
from huggingface_hub import PyTorchModelHubMixin, snapshot_download
from torch import Tensor, nn

from core.checkpoints.checkpoint import CONFIG, VOCAB, WEIGHTS, CheckpointError, load_checkpoint, save_checkpoint
from core.data.vocab import Vocab
from core.models.card import ModelCard
from core.notices import InterventionError

# Bounds on a config's sizes, (lowest, highest): a checkpoint's config.json is input, checked before any tensor
# is allocated. Far above every paper setting (the largest: a 3 M-word vocabulary is not bundled; dims <= 300).
VOCAB_SIZE = (1, 2_000_000)
NUM_CLASSES = (2, 1000)
DIM = (1, 4096)
LAYERS = (1, 64)


def _has_type(value, annotation) -> bool:
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return isinstance(value, list) and all(_has_type(v, item) for v in value)
    return isinstance(value, annotation)


def check_config(config, sizes: dict[str, tuple[int, int]]) -> None:
    """ValueError unless every field of the config dataclass has its annotated type and every field named
    in `sizes` (each entry, for a list) lies in its (lowest, highest) range. Config classes call this
    first in __post_init__, so their own checks compare numbers, and nothing is built from a wrong size."""
    for f in fields(config):
        value = getattr(config, f.name)
        if not _has_type(value, f.type):
            expected = getattr(f.type, "__name__", str(f.type)) if typing.get_origin(f.type) is None else str(f.type)
            raise ValueError(f"{f.name} must be {expected}, got {value!r}"[:200])
    for name, (lowest, highest) in sizes.items():
        value = getattr(config, name)
        for v in value if isinstance(value, list) else [value]:
            if not lowest <= v <= highest:
                raise ValueError(f"{name} must be in [{lowest}, {highest}], got {value}")


# -- interventions: a model's own parts switched off or replaced at inference (issue: causal checks) ----------


@dataclass(frozen=True)
class InterventionSpec:
    """One intervention a model offers: the paper section whose claim it tests and what its index names
    ("layer", "map", "level", "order", "word", 1-based like the model's views), or None when it takes none."""

    section: str
    index: str | None = None


@dataclass(frozen=True)
class Intervention:
    key: str
    index: int | None = None

    def __str__(self) -> str:  # the form links, the API and the CLI use: "key" or "key:index"
        return self.key if self.index is None else f"{self.key}:{self.index}"


NO_INTERVENTION = "none"
SENTENCE_INDEX = (1, 10_000)  # a word or level index: bounded by the sentence, which the caller checks


def parse_intervention(value: str | None) -> Intervention | None:
    """ "none" (or empty) -> None; "key" or "key:index" -> an Intervention (not yet checked against a model)."""
    if value is None or value.strip() in ("", NO_INTERVENTION):
        return None
    key, _, index = value.strip().partition(":")
    if not key.isidentifier() or (index and not index.strip().lstrip("-").isdigit()) or len(value) > 80:
        raise InterventionError("bad_intervention", value=value[:80])
    return Intervention(key, int(index) if index else None)


@dataclass
class ModelOutput:
    logits: Tensor  # (B, C): softmax(logits) are the class probabilities
    loss: Tensor | None = None  # mean training loss over the batch, when labels were given


def explained(tensor: Tensor | None) -> Tensor:
    """A model output's tensor that a forward pass fills only with explain > 0 (what `views` reads)."""
    if tensor is None:
        raise ValueError("this output holds no explanation tensors: run the forward pass with explain > 0")
    return tensor


OutputT = TypeVar("OutputT", bound=ModelOutput)  # a model's own ModelOutput dataclass


class SentenceClassifier(
    nn.Module,
    PyTorchModelHubMixin,
    Generic[OutputT],
    pipeline_tag="text-classification",
    tags=["sentence-classification"],
):
    """Base class. A subclass sets `key` and `config_class`, builds `self.embedding` with
    `build_embedding`, and implements `forward`, `views` and (when it has one) `word_curve`.

    forward(ids (B, L) long, lengths (B,) long, labels (B,) long | None, explain: int,
            intervention: Intervention | None) -> ModelOutput
    subclass. Sentences are right-padded with id 0; a sentence's outputs never depend on its padding.
    `explain` = how many leading sentences of the batch need every tensor `views` and `word_curve` read;
    a model computes its costly ones (AdaSent's per-unit probabilities) for those only, the cheap ones
    for all; with 0 it may skip them (DCNN, AGT and the tensor CNN leave them unset). Training and
    evaluation pass 0; the predictor runs a sentence, its prefixes and its
    leave-one-word-out variants as one batch with explain=1. `intervention` (one of `interventions`, checked by
    `check_intervention`; None: the plain model) switches a part of the model off or replaces it in that pass.

    Through huggingface_hub's PyTorchModelHubMixin every model has `save_pretrained(dir)`,
    `push_to_hub(repo_id)` and `from_pretrained(dir or repo_id)`, in our checkpoint format
    (core.checkpoints.checkpoint: weights, config.json, vocab.json), so a bundled checkpoint folder loads as it is:
    `DCNN.from_pretrained("checkpoints/sst5/dcnn")`. The vocabulary and config.json's task, lang and labels
    travel with the model (`vocab`, `meta`), set by every checkpoint load; loading is always strict.
    """

    key: str = ""
    card: ModelCard  # its names, paper and views' words (core.models.card), set by every model
    config_class: type = object
    embedding: nn.Embedding  # built by the subclass (build_embedding); declared for the type checker
    # what `word_curve` gives: "native" (the model's own per-word output, which it computes and uses), "probe"
    # (a part of the model applied where the model itself never applies it), or None: no curve of its own,
    # and the predictor runs prefixes
    word_curve_kind: str | None = None
    # what `forward` can switch off or replace, given an `intervention`: key -> InterventionSpec
    interventions: dict[str, InterventionSpec] = {}

    def __init__(self, config) -> None:
        super().__init__()
        self.config = config
        self.vocab: Vocab | None = None  # the word ids the weights were trained on
        self.meta: dict = {}  # config.json's task, lang, labels, ...

    @property
    def labels(self) -> list[str] | None:
        return self.meta.get("labels")

    # -- the Hub (PyTorchModelHubMixin's hooks) ---------------------------------------------------
    def _save_pretrained(self, save_directory: Path) -> None:
        if self.vocab is None or not self.labels:
            raise ValueError(
                "save_pretrained needs the model's vocabulary and labels: set `model.vocab` and "
                "`model.meta` (task, lang, labels), or load the model from a checkpoint"
            )
        save_checkpoint(save_directory, self, self.vocab, self.meta)

    @classmethod
    def from_pretrained(
        cls,
        pretrained_model_name_or_path: str | Path,
        *,
        force_download: bool = False,
        token: str | bool | None = None,
        cache_dir: str | Path | None = None,
        local_files_only: bool = False,
        revision: str | None = None,
        strict: bool = True,
        **model_kwargs: Any,
    ) -> Self:
        """A checkpoint folder or a Hub model repo (one `<task>/<model>/` folder's files at its root). The
        mixin's own from_pretrained would first build this class's config dataclass from config.json, so
        another model's folder would fail there with a bare config error; load_checkpoint names it."""
        if not strict:
            raise ValueError("loading is always strict: a checkpoint must hold exactly the model's tensors")
        if model_kwargs:  # the mixin's signature takes any keyword; a model's config comes from config.json only
            raise TypeError(f"from_pretrained got unexpected keyword arguments {sorted(model_kwargs)}")
        # load_checkpoint validates config.json, checks the files' sha256 and loads the weights strictly
        folder = (
            pretrained_model_name_or_path
            if os.path.isdir(pretrained_model_name_or_path)
            else snapshot_download(
                str(pretrained_model_name_or_path),
                revision=revision,
                cache_dir=cache_dir,
                force_download=force_download,
                local_files_only=local_files_only,
                token=token,
                allow_patterns=[WEIGHTS, CONFIG, VOCAB],
            )
        )
        model = load_checkpoint(folder).model
        if not isinstance(model, cls):
            raise CheckpointError(f"{Path(folder) / CONFIG} holds a {model.key} model, not {cls.__name__}")
        return model

    # -- embeddings -----------------------------------------------------------------------------
    @staticmethod
    def build_embedding(vocab_size: int, dim: int, freeze: bool, init_std: float = 0.0) -> nn.Embedding:
        """Random word vectors (rows pretrained vectors replace later): U(±0.25), or Normal(0, init_std)."""
        # Trained embeddings get sparse gradients: a dense (V, d) update per step dominates a CPU epoch.
        # Each optimizer takes them its own way (core.training.train.build_optimizers; Adadelta densifies them).
        embedding = WordEmbedding(vocab_size, dim, padding_idx=0, sparse=not freeze)
        if init_std:
            nn.init.normal_(embedding.weight, 0.0, init_std)
        else:
            nn.init.uniform_(embedding.weight, -0.25, 0.25)  # Kim (2014)'s range for random word vectors
        with torch.no_grad():
            embedding.weight[0].zero_()
        embedding.weight.requires_grad_(not freeze)
        return embedding

    def load_pretrained_embeddings(self, matrix: Tensor) -> None:
        """Copy pretrained rows (V, d) into `self.embedding` (core.training.config.build_run, as part of building)."""
        weight = self.embedding.weight
        if tuple(matrix.shape) != tuple(weight.shape):
            raise ValueError(f"pretrained matrix {tuple(matrix.shape)} does not match embedding {tuple(weight.shape)}")
        with torch.no_grad():
            weight.copy_(matrix)

    # -- optimisation ---------------------------------------------------------------------------
    def param_groups(self, weight_decay: float) -> list[dict]:
        """Optimizer parameter groups. Default: L2 on every trained dense parameter; sparse
        (embedding) parameters in their own group without weight decay, which sparse updates
        cannot apply. A paper with per-layer L2 (DCNN) or a penalty on some matrices (AdaSent)
        overrides this."""
        dense = [p for p in self.parameters() if p.requires_grad and p is not self.embedding.weight]
        groups = [{"params": dense, "weight_decay": weight_decay}]
        if self.embedding.weight.requires_grad:
            groups.append({"params": [self.embedding.weight], "weight_decay": 0.0})
        return groups

    def predict_labels(self, output: OutputT) -> Tensor:
        """(B,) predicted class ids; argmax unless a head decodes differently (mRNN's ordinal rule)."""
        return output.logits.argmax(-1)

    # -- interventions --------------------------------------------------------------------------
    def intervention_range(self, key: str) -> tuple[int, int]:
        """The (lowest, highest) index intervention `key` takes on this model's config (1-based)."""
        raise NotImplementedError(f"{self.key} has no indexed intervention {key!r}")

    def view_option_values(self, key: str) -> range:
        """The values keyword option `key` of `views` takes (the DCNN's top_map: its maps), which a front end may
        offer and a link may name; empty for an option the model does not have."""
        return range(0)

    def intervention_start(self, key: str, ids: Tensor, lengths: Tensor) -> int:
        """The index to offer first for intervention `key` on one sentence (a batch of one): the lowest, unless
        the model knows the part that matters most to this sentence (the DCNN's map), which takes a pass."""
        return self.intervention_range(key)[0]

    def check_intervention(self, intervention: Intervention) -> None:
        """InterventionError unless this model offers `intervention` with an index it has."""
        spec = self.interventions.get(intervention.key)
        if spec is None:
            raise InterventionError(
                "unknown_intervention",
                intervention=intervention.key[:60],
                model=self.key,
                available=[NO_INTERVENTION, *self.interventions],
            )
        if spec.index is None:
            if intervention.index is not None:
                raise InterventionError("no_index", intervention=intervention.key, model=self.key)
            return
        lowest, highest = self.intervention_range(intervention.key)
        if intervention.index is None or not lowest <= intervention.index <= highest:
            raise InterventionError(
                "index_out_of_range",
                intervention=intervention.key,
                what=spec.index,
                lowest=lowest,
                highest=highest,
                value=intervention.index,
            )

    # -- explanation ----------------------------------------------------------------------------
    def word_curve(self, output: OutputT, index: int) -> Tensor | None:
        """Per-position class probabilities for sentence `index`, as a tensor (n_words, C), when the
        model has them (`word_curve_kind`: native for the tensor CNN and the mRNN, a probe for AdaSent's
        level 1); else None and the predictor falls back to prefix predictions."""
        return None

    def views(self, output: OutputT, index: int, words: list[str], class_names: list[str] | None = None) -> list:
        """Model-specific explanation views (core.views dataclasses) for sentence `index`; `class_names`
        (the task's labels) name the class a 2-class score is the probability of."""
        return []


# The rows a WordEmbedding reads instead of its weight, in this thread only (see `embedding_rows`). A context,
# not an argument of `forward` as an intervention is: a leaf module reads it, for the gradient attributions alone,
# where each model looks words up its own way (mRNN and AGT once per distinct word, mRNN twice per pass)
_ROWS: ContextVar[Tensor | None] = ContextVar("embedding_rows", default=None)


class WordEmbedding(nn.Embedding):
    """nn.Embedding (same weight, same checkpoints) that can read its rows from a given table instead:
    the hook gradient attributions (core.analysis.attribution) need to differentiate a model with respect to
    the word vectors it reads, whichever way the model reads them (mRNN and AGT look up each distinct
    word once), without touching the shared weight or another thread's forward."""

    def forward(self, ids: Tensor) -> Tensor:
        rows = _ROWS.get()
        return super().forward(ids) if rows is None else nn.functional.embedding(ids, rows)  # dense gradients


@contextmanager
def embedding_rows(rows: Tensor):
    """Within the block, in this thread, every WordEmbedding looks ids up in `rows` (n, d) instead of its
    weight: a model run on ids 1..n of such a table reads one vector per position, which may require grad."""
    token = _ROWS.set(rows)
    try:
        yield
    finally:
        _ROWS.reset(token)


def dropout(x: Tensor, p: float, training: bool, sqrt_scale: bool = False) -> Tensor:
    """Zero each entry with probability p and divide the rest by 1-p (by √(1-p) with `sqrt_scale`, the
    tensor CNN authors' choice); the identity at eval. Masks come from rand_like: nn.Dropout's CPU
    bernoulli_ takes 3x as long, a few seconds of an SST phrase epoch."""
    if not training or p == 0:
        return x
    keep = torch.rand_like(x) >= p  # Bernoulli(1-p)
    return x * keep / ((1 - p) ** 0.5 if sqrt_scale else 1 - p)


class Dropout(nn.Module):
    """nn.Dropout's contract (inverted dropout, identity in eval mode) on `dropout` above."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


def length_mask(lengths: Tensor, max_len: int) -> Tensor:
    """(B, L) bool, True on real tokens."""
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


def masked_mean(x: Tensor, mask: Tensor) -> Tensor:
    """Mean over dim 1 of x (B, L, d) counting only mask (B, L) positions."""
    m = mask.unsqueeze(-1).to(x.dtype)
    return (x * m).sum(1) / m.sum(1).clamp_min(1.0)


def classification_loss(logits: Tensor, labels: Tensor | None) -> Tensor | None:
    return None if labels is None else nn.functional.cross_entropy(logits, labels)
