"""Pretrained word vectors: read GloVe/word2vec (text or binary) and our own format; build an
embedding matrix for a vocabulary with a coverage report.

Our own format (written by `python -m tools.vectors`) is `<name>.safetensors` holding one tensor
`vectors` (N, d) plus `<name>.words.txt` (one word per line, row order) and `<name>.stats.json`.
"""

import functools
import itertools
import json
import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from core.checkpoints.files import sha256
from core.data.vocab import Vocab

log = logging.getLogger(__name__)


@dataclass
class Vectors:
    words: list[str]
    matrix: np.ndarray  # (N, d) float32

    @property
    def dim(self) -> int:
        return self.matrix.shape[1]

    def index(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.words)}


def save_vectors(vectors: Vectors, path: str | Path, stats: dict | None = None) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(
        {"vectors": np.ascontiguousarray(vectors.matrix, dtype=np.float32)}, str(path.with_suffix(".safetensors"))
    )
    path.with_suffix(".safetensors").chmod(0o644)  # safetensors writes 0600; the app may run as another user
    path.with_suffix(".words.txt").write_text("\n".join(vectors.words) + "\n", encoding="utf-8")
    if stats is not None:
        path.with_suffix(".stats.json").write_text(json.dumps(stats, indent=2, ensure_ascii=False), encoding="utf-8")


def _read_text(path: Path, limit: int | None) -> Vectors:
    words, rows = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline()
        head = first.split()
        pending = [] if len(head) == 2 and all(p.isdigit() for p in head) else [first]  # word2vec "N d" header
        for line in itertools.chain(pending, f):
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if len(parts) < 3:
                continue
            words.append(parts[0])
            rows.append(np.asarray(parts[1:], dtype=np.float32))
            if limit and len(words) >= limit:
                break
    dims = {len(r) for r in rows}
    if len(dims) != 1:
        raise ValueError(f"{path}: rows have different dimensions {sorted(dims)[:5]}")
    return Vectors(words, np.stack(rows))


def _read_word2vec_binary(path: Path, limit: int | None) -> Vectors:
    with open(path, "rb") as f:
        n, dim = (int(x) for x in f.readline().split())
        n = min(n, limit) if limit else n
        words, matrix = [], np.empty((n, dim), dtype=np.float32)
        for i in range(n):
            word = bytearray()
            while (ch := f.read(1)) != b" ":
                if ch != b"\n":
                    word += ch
            words.append(word.decode("utf-8", errors="replace"))
            matrix[i] = np.frombuffer(f.read(4 * dim), dtype=np.float32)
    return Vectors(words, matrix)


def load_vectors(path: str | Path, limit: int | None = None) -> Vectors:
    """Read vectors from our format (.safetensors), word2vec binary (.bin) or GloVe/word2vec text."""
    path = Path(path)
    st = path.with_suffix(".safetensors")
    if st.is_file() and (path.suffix == ".safetensors" or not path.is_file()):
        matrix = load_file(str(st))["vectors"]
        words = st.with_suffix(".words.txt").read_text(encoding="utf-8").split("\n")[: len(matrix)]
        return Vectors(words, matrix[:limit] if limit else matrix)
    if not path.is_file():
        raise FileNotFoundError(f"vectors file {path} not found (run `make vectors`, or pass a GloVe/word2vec file)")
    if path.suffix == ".bin":
        return _read_word2vec_binary(path, limit)
    return _read_text(path, limit)


def reduce_dim(vectors: Vectors, dim: int) -> Vectors:
    """Project vectors onto their top `dim` principal components, for a model whose paper used smaller
    pretrained vectors than ours (AdaSent's 50-d word2vec, the DCNN's 32-d TREC vectors): it keeps the
    largest directions of variation instead of throwing the pretrained information away."""
    if not 0 < dim <= vectors.dim:
        raise ValueError(f"cannot reduce {vectors.dim}-d vectors to {dim}-d")
    centred = vectors.matrix - vectors.matrix.mean(0)
    eigenvalues, eigenvectors = np.linalg.eigh(centred.T @ centred)  # ascending
    top = eigenvectors[:, ::-1][:, :dim]
    top *= np.sign(top[np.abs(top).argmax(0), np.arange(dim)])  # fix each component's sign: same file, same result
    kept = float(eigenvalues[::-1][:dim].sum() / max(eigenvalues.sum(), 1e-12))
    log.info("vectors reduced from %d-d to %d-d by PCA (%.0f%% of the variance kept)", vectors.dim, dim, 100 * kept)
    return Vectors(vectors.words, (centred @ top).astype(np.float32))


MISSING_VECTORS = ("random", "zero")


def embedding_matrix(vocab: Vocab, vectors: Vectors, unit_norm: bool = False, seed: int = 0, missing: str = "random"):
    """(len(vocab), d) float32 rows from `vectors`; words not found (and <unk>) get small random vectors scaled
    like the found ones, or with missing="zero" zero rows (Lei et al.'s code: a word without a vector adds
    nothing while the vectors stay fixed); <pad> gets zeros. Returns (matrix, coverage report)."""
    if missing not in MISSING_VECTORS:
        raise ValueError(f"missing vectors must be one of {', '.join(MISSING_VECTORS)}, got {missing!r}")
    index = vectors.index()
    source = vectors.matrix
    if unit_norm:
        source = unit_rows(source)
    shape = (len(vocab), vectors.dim)
    if missing == "zero":
        matrix = np.zeros(shape, dtype=np.float32)
    else:
        scale = float(np.abs(source).mean()) if len(source) else 0.1
        matrix = np.random.default_rng(seed).uniform(-scale, scale, shape).astype(np.float32)
    found = 0
    for i, word in enumerate(vocab.itos):
        j = index.get(word)
        if j is not None:
            matrix[i] = source[j]
            found += 1
    matrix[vocab.pad_id] = 0.0
    coverage = {"vocab": len(vocab) - 2, "found": found, "fraction": found / max(1, len(vocab) - 2)}
    log.info(
        "pretrained vectors cover %d of %d vocabulary words (%.1f%%)", found, len(vocab) - 2, 100 * coverage["fraction"]
    )
    return matrix, coverage


# -- the shared vectors set of a checkpoint folder: checkpoints/vectors/<lang>/ ------------------------
# A model that keeps its pretrained vectors fixed reads any word of them at prediction time, not only its
# training words: its checkpoint stores the weights besides the embedding, the rows of its training words
# that the set lacks, and the set's digest; the set is stored once per language, float16, in shards small
# enough for the Hub's 10 MB limit on files outside LFS, and loaded once per process.
SHARED_INDEX, SHARED_WORDS = "vectors.json", "words.txt"
SHARED_FILES = re.compile(r"vectors\.json|words\.txt|vectors-\d{3}\.safetensors")
SAFETENSORS_HEADER = 4096  # bytes reserved for one shard's JSON header (it names one tensor)


def save_shared_vectors(vectors: Vectors, folder: str | Path, max_shard_bytes: int, source: dict | None = None) -> str:
    """Write `vectors` as float16 shards of at most max_shard_bytes, words.txt and vectors.json (written last,
    recording every other file's sha256); returns the set's digest, vectors.json's sha256."""
    folder = Path(folder)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if any("\n" in w for w in vectors.words):
        raise ValueError("a vectors word contains a newline")
    rows_per_shard = (max_shard_bytes - SAFETENSORS_HEADER) // (2 * vectors.dim)
    if rows_per_shard < 1:
        raise ValueError(f"max_shard_bytes = {max_shard_bytes} holds no {vectors.dim}-d float16 row")
    matrix = vectors.matrix.astype(np.float16)
    if not np.isfinite(matrix).all():
        raise ValueError("vectors overflow float16")
    shards = []
    for n, start in enumerate(range(0, len(matrix), rows_per_shard)):
        path = folder / f"vectors-{n:03d}.safetensors"
        save_file({"vectors": np.ascontiguousarray(matrix[start : start + rows_per_shard])}, str(path))
        path.chmod(0o644)
        shards.append(
            {"file": path.name, "rows": int(min(rows_per_shard, len(matrix) - start)), "sha256": sha256(path)}
        )
    (folder / SHARED_WORDS).write_text("\n".join(vectors.words) + "\n", encoding="utf-8")
    index = {
        "format": 1,
        "rows": len(matrix),
        "dim": vectors.dim,
        "dtype": "float16",
        "shards": shards,
        "words": {"file": SHARED_WORDS, "sha256": sha256(folder / SHARED_WORDS)},
        "source": source or {},
    }
    (folder / SHARED_INDEX).write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return sha256(folder / SHARED_INDEX)


def load_shared_vectors(folder: str | Path, digest: str | None = None) -> Vectors:
    """The shared set in `folder` (float32 rows of the float16 file), checked against `digest` (vectors.json's
    sha256) and every file against vectors.json; ValueError naming the file otherwise. Loaded once per
    process per (folder, digest): every checkpoint that reads the set shares one copy."""
    folder = Path(folder).resolve()
    index_path = folder / SHARED_INDEX
    if not index_path.is_file():
        raise ValueError(f"shared vectors {index_path} are missing")
    actual = sha256(index_path)
    if digest is not None and actual != digest:
        raise ValueError(
            f"shared vectors {index_path} are not the ones the checkpoint was built with (sha256 {actual[:12]}, "
            f"expected {digest[:12]})"
        )
    return _load_shared(str(folder), actual)


@functools.lru_cache(maxsize=4)
def _load_shared(folder: str, digest: str) -> Vectors:
    folder_path = Path(folder)
    try:
        index = json.loads((folder_path / SHARED_INDEX).read_text(encoding="utf-8"))
        entries = [*index["shards"], index["words"]]
        names = [e["file"] for e in entries]
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{folder_path / SHARED_INDEX} is not a valid vectors index ({err})") from None
    for entry in entries:
        path = folder_path / str(entry["file"])
        if not SHARED_FILES.fullmatch(str(entry["file"])) or not path.is_file():
            raise ValueError(f"shared vectors file {path} is missing or not a vectors file")
        if sha256(path) != entry["sha256"]:
            raise ValueError(
                f"shared vectors file {path} does not match its sha256 in {SHARED_INDEX} (corrupt or tampered)"
            )
    matrix = np.concatenate([load_file(str(folder_path / name))["vectors"] for name in names[:-1]]).astype(np.float32)
    words = (folder_path / SHARED_WORDS).read_text(encoding="utf-8").split("\n")[: len(matrix)]
    if matrix.shape != (index["rows"], index["dim"]) or len(words) != len(matrix) or not np.isfinite(matrix).all():
        raise ValueError(
            f"shared vectors in {folder_path}: {matrix.shape} rows, {len(words)} words, "
            f"vectors.json says {index['rows']} x {index['dim']}"
        )
    log.info("shared vectors %s: %d x %d (loaded once per process)", folder_path, *matrix.shape)
    return Vectors(words, matrix)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (Lei et al. 2015 §6), as `embedding_matrix(unit_norm=True)` uses them."""
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-8)
