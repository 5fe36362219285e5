"""Pretrained word vectors: read GloVe/word2vec (text or binary) and our own format; build an
embedding matrix for a vocabulary with a coverage report.

Our own format (written by `python -m tools.vectors`) is `<name>.safetensors` holding one tensor
`vectors` (N, d) plus `<name>.words.txt` (one word per line, row order) and `<name>.stats.json`.
"""

import itertools
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from core.vocab import Vocab

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
    save_file({"vectors": np.ascontiguousarray(vectors.matrix, dtype=np.float32)}, str(path.with_suffix(".safetensors")))
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


def embedding_matrix(vocab: Vocab, vectors: Vectors, unit_norm: bool = False, seed: int = 0):
    """(len(vocab), d) float32 rows from `vectors`; words not found get small random vectors
    (scaled like the found ones), <pad> gets zeros. Returns (matrix, coverage report)."""
    index = vectors.index()
    source = vectors.matrix
    if unit_norm:  # Lei et al. 2015 §6: vectors normalised to unit L2 norm
        source = source / np.maximum(np.linalg.norm(source, axis=1, keepdims=True), 1e-8)
    rng = np.random.default_rng(seed)
    scale = float(np.abs(source).mean()) if len(source) else 0.1
    matrix = rng.uniform(-scale, scale, (len(vocab), vectors.dim)).astype(np.float32)
    found = 0
    for i, word in enumerate(vocab.itos):
        j = index.get(word)
        if j is not None:
            matrix[i] = source[j]
            found += 1
    matrix[vocab.pad_id] = 0.0
    coverage = {"vocab": len(vocab) - 2, "found": found, "fraction": found / max(1, len(vocab) - 2)}
    log.info("pretrained vectors cover %d of %d vocabulary words (%.1f%%)", found, len(vocab) - 2, 100 * coverage["fraction"])
    return matrix, coverage
