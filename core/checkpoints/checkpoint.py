"""Checkpoints on disk: safetensors weights + JSON config + JSON vocabulary, never pickle.

A checkpoint directory holds
  model.safetensors   weights (float32, or float16 for the bundled app copies)
  config.json         {"model": key, "config": {...dataclass fields...}, "task", "lang", "labels",
                       "files": {name: sha256}, ...}
  vocab.json          the vocabulary, a JSON list (index = id)
  metrics.json        written by the trainer (optional for loading)
A model that keeps pretrained vectors fixed may instead be *linked* to the shared vectors set of its
checkpoint folder (`<root>/vectors/<lang>/`, core.data.vectors): its weights file then holds every tensor but
the embedding, plus `shared_vectors.own_rows`, the rows of its training words (and <pad>, <unk>) that the
set lacks, in vocabulary order; config.json's "shared_vectors" names the set's language and digest. At
load, the vocabulary becomes the training words followed by every other word of the set, so a word the
model never saw in training but the vectors know is read, as training would have read it.
Every file is written atomically (temp file, fsync, os.replace) and config.json, which records the
sha256 of the others, is written last: a reader sees either the old checkpoint or the new one, and
a file that does not match its recorded hash is reported by name.
"""

import dataclasses
import functools
import json
import math
import os
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from core.checkpoints.files import sha256
from core.data.vectors import SHARED_INDEX, Vectors, load_shared_vectors, unit_rows
from core.data.vocab import Vocab
from core.models import model_class

# a weights file declaring more parameters (400 MB of float32) is refused before it is read
MAX_PARAMETERS = 100_000_000
WEIGHTS, CONFIG, VOCAB, METRICS = "model.safetensors", "config.json", "vocab.json", "metrics.json"
UNSAFE_SUFFIXES = (".pt", ".pth", ".bin", ".pkl", ".pickle", ".ckpt")
SHARED_VECTORS_DIR = "vectors"  # <checkpoint root>/vectors/<lang>/: the shared vectors set of that root
OWN_ROWS = "shared_vectors.own_rows"


# a core.models.base.SentenceClassifier, typed loosely: core.models imports this module, not the other way
Model = Any


class CheckpointError(Exception):
    """A checkpoint that is missing, corrupt or inconsistent; the message names the file."""


@dataclass
class Checkpoint:
    model: Model
    vocab: Vocab
    meta: dict  # config.json without the model config: task, lang, labels, ...
    path: Path


def weights_sha256(checkpoint: Checkpoint) -> str:
    """The sha256 of the checkpoint's weights as its config.json records it (load_checkpoint verified it), else
    the file's, hashed once per version of it: read without a file's stat where it is recorded (every page load
    asks it of every checkpoint)."""
    return checkpoint.meta.get("files", {}).get(WEIGHTS) or _hashed(Path(checkpoint.path) / WEIGHTS)


def _hashed(path: Path) -> str:
    return _hashed_version(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _hashed_version(path: Path, mtime_ns: int) -> str:
    return sha256(path)


def atomic_write(path: Path, write) -> None:
    """Call write(tmp_path), fsync, then rename over `path`: never a half-written `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; checkpoints are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def embedding_key(model: Model) -> str:
    """The state_dict name of the model's word embedding."""
    weight = model.embedding.weight
    return next(k for k, v in model.state_dict().items() if v.data_ptr() == weight.data_ptr())


def own_rows(vocab: Vocab, vectors: Vectors) -> list[int]:
    """Ids of the vocabulary entries the shared set has no row for (always <pad> and <unk>), in id order."""
    index = set(vectors.words)
    return [i for i, w in enumerate(vocab.itos) if i in (vocab.pad_id, vocab.unk_id) or w not in index]


def shared_rows(vectors: Vectors, unit_norm: bool) -> torch.Tensor:
    return torch.from_numpy(unit_rows(vectors.matrix) if unit_norm else vectors.matrix)


def save_checkpoint(
    directory: str | Path,
    model: Model,
    vocab: Vocab,
    meta: dict,
    half: bool = False,
    shared_vectors: tuple[str, str, Vectors] | None = None,
) -> Path:
    """`shared_vectors` = (lang, digest, vectors): save the model linked to that shared set (the module
    docstring); the caller has checked that the model's fixed embedding rows are the set's rows."""
    directory = Path(directory)
    state = dict(model.state_dict())
    if shared_vectors is not None:
        lang, digest, vectors = shared_vectors
        state[OWN_ROWS] = state.pop(embedding_key(model))[own_rows(vocab, vectors)]
        meta = {
            **meta,
            "shared_vectors": {
                "lang": lang,
                "sha256": digest,
                "unit_norm": bool(getattr(model.config, "unit_norm_vectors", False)),
            },
        }
    tensors = {k: (v.half() if half and v.is_floating_point() else v).contiguous() for k, v in state.items()}
    atomic_write(directory / WEIGHTS, lambda tmp: save_file(tensors, str(tmp)))
    atomic_write_text(directory / VOCAB, json.dumps(vocab.itos, ensure_ascii=False))
    config = {
        "model": model.key,
        "config": dataclasses.asdict(model.config),
        **{k: v for k, v in meta.items() if k not in ("model", "config", "files")},
        "files": {name: sha256(directory / name) for name in (WEIGHTS, VOCAB)},
    }
    atomic_write_text(directory / CONFIG, json.dumps(config, indent=2, ensure_ascii=False))
    return directory


def _read_json(path: Path):
    if not path.is_file():
        raise CheckpointError(f"checkpoint file {path} is missing")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"checkpoint file {path} is not valid JSON ({err})") from None


def _shared_vectors(directory: Path, config: dict, vectors_root: Path | None) -> tuple[Vectors, bool] | None:
    """The shared set a linked checkpoint reads (and whether it reads it unit-normed), or None."""
    ref = config.get("shared_vectors")
    if ref is None:
        return None
    lang = ref.get("lang") if isinstance(ref, dict) else None
    if not isinstance(lang, str) or lang not in ("en", "zh") or not isinstance(ref.get("sha256"), str):
        raise CheckpointError(
            f"{directory / CONFIG}: 'shared_vectors' must be {{lang, sha256, unit_norm}}, got {str(ref)[:100]}"
        )
    root = vectors_root if vectors_root is not None else directory.parent.parent
    try:
        return load_shared_vectors(root / SHARED_VECTORS_DIR / lang, ref["sha256"]), bool(ref.get("unit_norm"))
    except (ValueError, OSError) as err:
        raise CheckpointError(
            f"{directory / CONFIG} reads the shared vectors {root / SHARED_VECTORS_DIR / lang / SHARED_INDEX}: {err}"
        ) from None


# a checkpoint may load inside a prediction's inference mode (a model evicted from memory comes back there): weights
# made in it could never take a gradient (the gradient attribution methods)
@torch.inference_mode(False)
def load_checkpoint(directory: str | Path, verify: bool = True, vectors_root: str | Path | None = None) -> Checkpoint:
    """Load a checkpoint directory; raises CheckpointError naming the offending file. A linked checkpoint
    reads its shared vectors from `vectors_root`/vectors/<lang>/ (default: the folder two levels up, the
    checkpoint root of `<root>/<task>/<model>/`)."""
    directory = Path(directory)
    if directory.suffix in UNSAFE_SUFFIXES or (directory.is_file() and directory.suffix != ".safetensors"):
        raise CheckpointError(f"{directory}: refusing a pickle-style checkpoint; only safetensors directories load")
    if not directory.is_dir():
        raise CheckpointError(f"checkpoint directory {directory} does not exist")
    config = _read_json(directory / CONFIG)
    if not isinstance(config, dict) or not isinstance(config.get("config"), dict):
        raise CheckpointError(f"{directory / CONFIG}: expected an object with 'model' and 'config'")
    try:
        cls = model_class(config.get("model", ""))
        model_config = cls.config_class(**config["config"])
    except (ValueError, TypeError) as err:
        raise CheckpointError(f"{directory / CONFIG}: invalid model configuration ({err})") from None
    labels = config.get("labels")
    if (
        not isinstance(labels, list)
        or len(labels) != model_config.num_classes
        or not all(isinstance(label, str) for label in labels)
    ):
        raise CheckpointError(
            f"{directory / CONFIG}: 'labels' must list one name per class "
            f"(num_classes={model_config.num_classes}), got {str(labels)[:100]}"
        )
    files = config.get("files", {})
    if not isinstance(files, dict) or not set(files) <= {WEIGHTS, VOCAB}:
        raise CheckpointError(f"{directory / CONFIG}: 'files' may only list {WEIGHTS} and {VOCAB}")
    for name, digest in files.items():
        path = directory / name
        if not path.is_file():
            raise CheckpointError(f"checkpoint file {path} is missing")
        if verify and sha256(path) != digest:
            raise CheckpointError(
                f"checkpoint file {path} does not match the sha256 recorded in {CONFIG} (corrupt or tampered)"
            )
    try:
        vocab = Vocab(_read_json(directory / VOCAB))
    except (ValueError, TypeError) as err:
        raise CheckpointError(f"{directory / VOCAB}: invalid vocabulary ({err})") from None
    if len(vocab) != getattr(model_config, "vocab_size", len(vocab)):
        raise CheckpointError(
            f"{directory / VOCAB}: {len(vocab)} words but the config says vocab_size={model_config.vocab_size}"
        )
    shared = _shared_vectors(directory, config, Path(vectors_root) if vectors_root is not None else None)
    weights_path = directory / WEIGHTS
    if not weights_path.is_file():
        raise CheckpointError(f"checkpoint file {weights_path} is missing")
    try:
        with safe_open(str(weights_path), framework="pt") as header:  # reads the header only
            shapes = {name: tuple(header.get_slice(name).get_shape()) for name in header.keys()}
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(f"checkpoint file {weights_path} is not a valid safetensors file ({err})") from None
    # the header's sizes before the tensors are read; the model built from the config is bounded by its
    # per-field limits (a skeleton on the meta device would cost 2.4 s of torch._dynamo import at start)
    parameters = sum(math.prod(shape) for shape in shapes.values())
    if parameters > MAX_PARAMETERS:
        raise CheckpointError(
            f"{weights_path} holds {parameters:,} parameters, more than the {MAX_PARAMETERS:,} a checkpoint may hold"
        )
    model = cls(model_config)
    expected = dict(model.state_dict())
    if shared is not None:
        vectors, unit_norm = shared
        if vectors.dim != model.embedding.embedding_dim or model.embedding.weight.requires_grad:
            raise CheckpointError(
                f"{directory / CONFIG}: only a model with fixed {vectors.dim}-d embeddings reads the shared vectors"
            )
        own = own_rows(vocab, vectors)
        expected[OWN_ROWS] = torch.empty(len(own), vectors.dim)
        del expected[embedding_key(model)]
    if set(shapes) != set(expected):
        missing, extra = sorted(set(expected) - set(shapes)), sorted(set(shapes) - set(expected))
        raise CheckpointError(
            f"{weights_path} does not match its config (missing {missing[:3]}, unexpected {extra[:3]})"
        )
    for name, shape in shapes.items():
        if shape != tuple(expected[name].shape):
            raise CheckpointError(
                f"{weights_path}: {name} has shape {shape}, config implies {tuple(expected[name].shape)}"
            )
    try:
        weights = load_file(str(weights_path))
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(f"checkpoint file {weights_path} is not a valid safetensors file ({err})") from None
    for name, tensor in weights.items():
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            raise CheckpointError(f"{weights_path}: {name} holds NaN or infinite values")
    weights = {k: v.to(expected[k].dtype) for k, v in weights.items()}
    if shared is not None:
        model, vocab = _read_shared(model, vocab, weights, vectors, unit_norm, own)
    model.load_state_dict(weights, strict=True)
    model.eval()
    meta = {k: v for k, v in config.items() if k not in ("config",)}
    model.vocab, model.meta = vocab, {k: v for k, v in meta.items() if k not in ("model", "files")}
    return Checkpoint(model, vocab, meta, directory)


def _read_shared(model: Model, vocab: Vocab, weights: dict, vectors: Vectors, unit_norm: bool, own: list[int]):
    """The model over its training words followed by the set's other words: rows from the set, the
    checkpoint's own rows where the set has none. Fills `weights` in place; returns (model, vocab)."""
    index = vectors.index()
    extra = [w for w in vectors.words if w not in vocab.stoi]
    union = Vocab(vocab.itos + extra)
    rows = shared_rows(vectors, unit_norm)
    matrix = torch.empty(len(union), vectors.dim)
    own_set = set(own)
    found = [i for i in range(len(vocab)) if i not in own_set]
    matrix[own] = weights.pop(OWN_ROWS)
    matrix[found] = rows[[index[vocab.itos[i]] for i in found]]
    matrix[len(vocab) :] = rows[[index[w] for w in extra]]
    linked = type(model)(dataclasses.replace(model.config, vocab_size=len(union)))
    weights[embedding_key(linked)] = matrix
    return linked, union


# -- training state for --resume: everything needed to continue a run exactly ------------------------

STATE_JSON = "state.json"
STATE_TENSORS = "state.safetensors"  # where a state saved before 2026-11-29 keeps its tensors (its JSON names none)


def _flatten(obj, prefix: str, tensors: dict):
    """Replace tensors in a nested dict/list with {"__tensor__": key}, collecting them in `tensors`."""
    if isinstance(obj, torch.Tensor):
        key = prefix.strip(".")
        tensors[key] = obj.detach().cpu().contiguous()
        return {"__tensor__": key}
    if isinstance(obj, dict):
        return {
            "__dict__": [
                [_flatten(k, f"{prefix}.k{i}", tensors), _flatten(v, f"{prefix}.{i}", tensors)]
                for i, (k, v) in enumerate(obj.items())
            ]
        }
    if isinstance(obj, (list, tuple)):
        return [_flatten(v, f"{prefix}.{i}", tensors) for i, v in enumerate(obj)]
    return obj


def _unflatten(obj, tensors: dict):
    if isinstance(obj, dict) and "__tensor__" in obj:
        return tensors[obj["__tensor__"]]
    if isinstance(obj, dict) and "__dict__" in obj:
        return {_unflatten(k, tensors): _unflatten(v, tensors) for k, v in obj["__dict__"]}
    if isinstance(obj, list):
        return [_unflatten(v, tensors) for v in obj]
    return obj


def save_training_state(directory: str | Path, state: dict) -> None:
    """Save a nested dict of tensors and JSON values (model, optimizer, RNG, counters): the tensors to a
    safetensors file of a new name, then the JSON that names it and records its sha256 (atomically), then the
    older tensor files removed. A kill at any moment leaves a JSON whose tensors are on disk: the state before
    this save or this one."""
    directory = Path(directory)
    tensors: dict = {}
    skeleton = _flatten(state, "s", tensors)
    name = f"state-{uuid.uuid4().hex[:12]}.safetensors"
    atomic_write(directory / name, lambda tmp: save_file(tensors, str(tmp)))
    payload = {"state": skeleton, "tensors": name, "sha256": sha256(directory / name)}
    atomic_write_text(directory / STATE_JSON, json.dumps(payload))
    for old in [directory / STATE_TENSORS, *directory.glob("state-*.safetensors")]:
        if old.name != name:
            old.unlink(missing_ok=True)


def load_training_state(directory: str | Path) -> dict | None:
    """The saved state, or None when there is none; CheckpointError when it is corrupt."""
    directory = Path(directory)
    if not (directory / STATE_JSON).is_file():
        return None
    payload = _read_json(directory / STATE_JSON)
    path = directory / Path(str(payload.get("tensors", STATE_TENSORS))).name
    if not path.is_file() or sha256(path) != payload.get("sha256"):
        raise CheckpointError(f"training state {path} is missing or does not match {directory / STATE_JSON}")
    return _unflatten(payload["state"], load_file(str(path)))
