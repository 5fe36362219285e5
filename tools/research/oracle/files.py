"""Same inputs: the files both trainers read, written from our treebank data in the authors' format.

    python -m tools.research.oracle.files [--out .cache/oracle/inputs]

stsa.{fine,binary}.{train,phrases.train,dev,test}: one example a line, `label word word ...`, the examples
our trainer trains and evaluates on (core.data.sst: sentences, and every distinct labelled phrase once),
in its order. vectors.txt.gz (theirs) and vectors.safetensors (ours, --vectors): the lab's shared English
vectors (checkpoints/vectors/en), only the words these files hold (the authors pruned GloVe to SST's
words the same way), each row scaled to unit L2 norm (Lei et al. §6; their code does not normalise, ours
does again, which changes nothing). vectors_zero_oov.safetensors adds a zero row for every other word of
the files (their handling of words without vectors, for ours).
"""

import argparse
import gzip
import json
from pathlib import Path

import numpy as np

from core.data import PROJECT_ROOT, load_task
from core.data.vectors import Vectors, load_shared_vectors, save_vectors, unit_rows

TASK_FILES = {"sst5": "fine", "sst2": "binary"}


def default_dir() -> Path:
    return PROJECT_ROOT / ".cache" / "oracle" / "inputs"


def write_inputs(out: Path, vectors_folder: Path | None = None) -> dict:
    """Write every file above into `out`; returns line counts and the vectors' coverage."""
    out.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    words: set[str] = set()
    for task, name in TASK_FILES.items():
        for phrases in (False, True):
            data = load_task(task, phrases=phrases)
            splits = {"phrases.train" if phrases else "train": data.train}
            if not phrases:
                splits |= {"dev": data.dev, "test": data.test}
            for split, examples in splits.items():
                lines = [f"{e.label} {' '.join(e.words)}\n" for e in examples]
                (out / f"stsa.{name}.{split}").write_text("".join(lines), encoding="utf-8")
                counts[f"stsa.{name}.{split}"] = len(lines)
                words.update(w for e in examples for w in e.words)
    shared = load_shared_vectors(vectors_folder or PROJECT_ROOT / "checkpoints" / "vectors" / "en")
    keep = [i for i, w in enumerate(shared.words) if w in words]
    vectors = Vectors([shared.words[i] for i in keep], unit_rows(shared.matrix[keep]).astype(np.float32))
    save_vectors(vectors, out / "vectors.safetensors")
    with gzip.open(out / "vectors.txt.gz", "wt", encoding="utf-8") as f:
        for word, row in zip(vectors.words, vectors.matrix):
            f.write(word + " " + " ".join(f"{v:.9g}" for v in row) + "\n")  # 9 digits: float32 exactly
    # the authors' input handling for our trainer (a bisection step): every other word of the files gets a zero
    # row, as their single zero UNK; with --extra-vocab covering the file, no token of dev or test is <unk>
    missing = sorted(words - set(vectors.words))
    zero = np.zeros((len(missing), vectors.dim), dtype=np.float32)
    save_vectors(Vectors(vectors.words + missing, np.concatenate([vectors.matrix, zero])), out / "vectors_zero_oov")
    summary = {"files": counts, "vectors": len(vectors.words), "data_words": len(words), "zero_rows": len(missing)}
    (out / "inputs.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(default_dir()), help="the folder the input files are written to")
    args = parser.parse_args(argv)
    print(json.dumps(write_inputs(Path(args.out)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
