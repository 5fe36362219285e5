"""Godin's DCNN (FredericGodin/DynamicCNN, Theano + Lasagne, Python 2) as the oracle for our DCNN.

    python -m tools.research.oracle.dcnn [--sentences N] [--floatx float64] [--k-from width] \
        [--json reports/oracle_dcnn.json]

Same weights: our shipped SST-5 DCNN's weights loaded into his Lasagne graph (`networks.buildDCNNPaper`), one
SST-5 dev sentence a batch, class probabilities compared with ours. The project never holds his code or
Lasagne: LAB_DCNN_ORACLE_DIR names a checkout of DynamicCNN (commit 694cf6c) and LAB_LASAGNE_DIR one of
Lasagne (commit 5d3c63c); his files are converted with 2to3 into .cache/oracle/dcnn-<hash>/ with the patches
below, and `theano` is pytensor (tools.research.oracle.shim) plus what Lasagne imports (`lasagne_modules`).

Two layouts differ and are mapped, not approximated: his folding sums rows f and f + r/2 where ours sums 2p
and 2p + 1 (the same network up to an order of the embedding dimensions: every operation is row-wise, so
`godin_rows` permutes them), and his Theano conv2d is a true convolution (kernel flipped against torch's).
His bias is added before folding, ours after (a constant per row: k-max pooling keeps the same columns).
docs/oracle.md ("The DCNN") has the measurements and his training protocol against ours.
"""

import argparse
import hashlib
import io
import json
import os
import shutil
import sys
import time
import types
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.checkpoints.hub import display_path
from core.data import PROJECT_ROOT, TaskData, load_task
from service.settings import Settings
from tools.bench.machine import machine_info
from tools.research.oracle.shim import _softmax, cache_dir, theano_modules

REPOSITORY, COMMIT = "FredericGodin/DynamicCNN", "694cf6c"
LASAGNE, LASAGNE_COMMIT = "Lasagne/Lasagne", "5d3c63c"
# Python 2 semantics his code relies on, restored after 2to3 (file -> old -> new, each found exactly once)
PATCHES = {
    # int / int floored in Python 2: the folded rows and the batch counts are integers
    "DCNN/folding.py": {
        "input_shape[1],input_shape[2]/2, input_shape[3])": "input_shape[1],input_shape[2]//2, input_shape[3])",
        "self.input_shape[1],self.input_shape[2]/2, -1))": "self.input_shape[1],self.input_shape[2]//2, -1))",
    },
    "trainDCNN.py": {
        "len(train_lengths) / hyperparas": "len(train_lengths) // hyperparas",
        "n_dev_batches = dev_x_indexes_extended.shape[0] / hyperparas": (
            "n_dev_batches = dev_x_indexes_extended.shape[0] // hyperparas"
        ),
        "n_test_batches = test_x_indexes_extended.shape[0] / hyperparas": (
            "n_test_batches = test_x_indexes_extended.shape[0] // hyperparas"
        ),
        # his reader's pad id defaults to the authors' vocabulary size (15,448); ours pads with --vocab_size, the
        # zero row his embedding layer appends (without this every sentence is read as the files' full width)
        **{
            f'kalchbrenner_path+"{split}_lbl.txt")': f'kalchbrenner_path+"{split}_lbl.txt", hyperparas["vocab_size"])'
            for split in ("train", "valid", "test")
        },
    },
    # Python 2 iterated this dict of small int keys (sentence lengths) in ascending order; Python 3 in insertion
    # order, which breaks his batches' width (the length of a batch's last, assumed longest, sentence)
    "dataUtils.py": {"in list(sorted_dict.items()):": "in sorted(sorted_dict.items()):"},
}


def folders(dcnn: str | os.PathLike | None = None, lasagne: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """His repository and Lasagne's: the arguments, else LAB_DCNN_ORACLE_DIR and LAB_LASAGNE_DIR."""
    repo = Path(dcnn or Settings.load().dcnn_oracle_dir or "")
    lib = Path(lasagne or Settings.load().lasagne_dir or "")
    if not str(repo) or not (repo / "networks.py").is_file():
        raise ValueError(f"set LAB_DCNN_ORACLE_DIR to a checkout of {REPOSITORY} at {COMMIT}, got {str(repo)!r}")
    if not str(lib) or not (lib / "lasagne" / "__init__.py").is_file():
        raise ValueError(f"set LAB_LASAGNE_DIR to a checkout of {LASAGNE} at {LASAGNE_COMMIT}, got {str(lib)!r}")
    return repo, lib


def conv2d_rows(input, filters, image_shape=None, filter_shape=None, border_mode="valid", **_):
    """Theano's T.nnet.conv.conv2d as his Conv1DLayerSplitted calls it: (B, C, 1, N) inputs, (F, C, 1, w)
    filters, a true (flipped-kernel) convolution along N summed over C; pytensor 3 has no conv2d. Written as one
    matrix product over the input's w-wide windows (C code, a small graph for his 48 rows per layer): pytensor's
    batched convolve1d loops over sentences and filters in Python, which made his trainer crawl (oracle.md §6.4)."""
    import pytensor.tensor as pt

    width = (filter_shape or filters.type.shape)[3]
    x, kernel = input[:, :, 0, :], filters[:, :, 0, ::-1]  # (B, C, N), (F, C, w) flipped
    if border_mode == "full":  # his wide convolution: w - 1 zeros on each side
        pad = pt.zeros((x.shape[0], x.shape[1], width - 1), dtype=x.dtype)
        x = pt.concatenate([pad, x, pad], axis=2)
    elif border_mode != "valid":
        raise NotImplementedError(f"border_mode {border_mode!r}")
    windows = pt.arange(x.shape[2] - width + 1)[:, None] + pt.arange(width)[None, :]  # (N', w)
    out = pt.tensordot(x[:, :, windows], kernel, axes=[[1, 3], [1, 2]])  # (B, N', F)
    return out.dimshuffle(0, 2, "x", 1)  # (B, F, 1, N')


def unavailable(name: str):
    """A function Lasagne names at import (a default argument) that pytensor 3 lacks; his DCNN never calls it."""

    def call(*_, **__):
        raise NotImplementedError(f"{name} is not part of the pytensor shim")

    return call


class MRGRandomStreams:
    """theano.sandbox.rng_mrg.MRG_RandomStreams as Lasagne's dropout calls it (binomial with a dtype)."""

    def __init__(self, seed: int):
        from pytensor.tensor.random.utils import RandomStream

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            self.stream = RandomStream(int(seed))

    def binomial(self, size, n=1, p=0.5, dtype="int64", **_):
        import pytensor.tensor as pt

        return pt.cast(self.stream.binomial(n, p, size=size), dtype)


def lasagne_modules() -> dict[str, types.ModuleType]:
    """tools.research.oracle.shim's `theano` with what Lasagne 0.2 and his layers import put back on pytensor. Lasagne's
    own convolution and pooling layers (which he does not use) find no implementation and fail if called."""
    import pytensor
    import pytensor.tensor as pt
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Variable
    from pytensor.graph.replace import clone_replace
    from pytensor.graph.traversal import graph_inputs

    modules = theano_modules()
    # module objects filled attribute by attribute, as the Theano API Lasagne imports (untyped on purpose)
    theano: Any = modules["theano"]
    tensor: Any = modules["theano.tensor"]

    def shared(value, name=None, strict=False, broadcastable=None, **kwargs):
        if broadcastable is not None:  # Theano's broadcastable flags are pytensor's static shape 1
            kwargs["shape"] = tuple(1 if b else None for b in broadcastable)
        return pytensor.shared(value, name=name, strict=strict, **kwargs)

    def categorical_crossentropy(p, y):
        return -pt.log(p[pt.arange(y.shape[0]), y]) if y.ndim < p.ndim else -(y * pt.log(p)).sum(axis=-1)

    theano.shared, theano.Variable, theano.TensorType = shared, Variable, pt.TensorType
    theano.grad, theano.clone, theano.gradient = pytensor.grad, clone_replace, pytensor.gradient
    theano.gof = types.SimpleNamespace(Variable=Variable, graph=types.SimpleNamespace(inputs=graph_inputs))
    theano.compile = types.SimpleNamespace(SharedVariable=SharedVariable)
    conv: Any = types.ModuleType("theano.tensor.nnet.conv")
    conv.conv2d = conv2d_rows
    nnet: Any = types.ModuleType("theano.tensor.nnet")
    nnet.softmax, nnet.sigmoid, nnet.softplus, nnet.conv = _softmax, pt.sigmoid, pt.softplus, conv
    nnet.relu = lambda x, alpha=0: pt.switch(x > 0, x, alpha * x)
    nnet.categorical_crossentropy = categorical_crossentropy
    nnet.conv2d = unavailable("T.nnet.conv2d (Lasagne's Conv2DLayer; his layers call T.nnet.conv.conv2d)")
    nnet.abstract_conv = types.SimpleNamespace()
    signal: Any = types.ModuleType("theano.tensor.signal")
    pool: Any = types.ModuleType("theano.tensor.signal.pool")
    signal.pool = pool
    sandbox: Any = types.ModuleType("theano.sandbox")
    rng_mrg: Any = types.ModuleType("theano.sandbox.rng_mrg")
    rng_mrg.MRG_RandomStreams, sandbox.rng_mrg = MRGRandomStreams, rng_mrg
    tensor.nnet, tensor.signal, theano.sandbox = nnet, signal, sandbox
    return modules | {
        "theano.tensor.nnet": nnet,
        "theano.tensor.nnet.conv": conv,
        "theano.tensor.signal": signal,
        "theano.tensor.signal.pool": pool,
        "theano.sandbox": sandbox,
        "theano.sandbox.rng_mrg": rng_mrg,
    }


def converted(repo: Path) -> Path:
    """His .py files after 2to3 (without its relative-import fixer: his modules import each other as top-level
    modules) and PATCHES, in a cache folder keyed by their content."""
    from lib2to3.main import main as lib2to3_main

    sources = sorted(p.relative_to(repo) for p in repo.rglob("*.py"))
    content = b"".join((repo / p).read_bytes() for p in sources) + repr(PATCHES).encode()
    key = hashlib.sha256(content).hexdigest()[:16]
    out = cache_dir() / f"dcnn-{key}"
    if out.is_dir():
        return out
    work = cache_dir() / f"dcnn-{key}.tmp{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    for p in sources:
        (work / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(repo / p, work / p)
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore", DeprecationWarning)
        code = lib2to3_main("lib2to3.fixes", ["-w", "-n", "-x", "import", str(work)])
    if code != 0:
        raise RuntimeError(f"2to3 failed on {repo} (exit {code})")
    for name, patches in PATCHES.items():
        text = (work / name).read_text(encoding="utf-8")
        for old, new in patches.items():
            if text.count(old) != 1:
                raise RuntimeError(f"{repo / name} is not the file this shim knows ({COMMIT}): {old!r}")
            text = text.replace(old, new)
        (work / name).write_text(text, encoding="utf-8")
    work.replace(out)
    return out


def load_networks(repo: Path, lasagne_dir: Path, floatx: str = "float64"):
    """His `networks` module (which imports his DCNN layers and Lasagne) on pytensor's C back end."""
    import pytensor

    pytensor.config.floatX = floatx
    pytensor.config.linker = Settings.load().oracle_linker  # see tools/research/oracle/shim.py
    sys.modules.update(lasagne_modules())
    for folder in (str(lasagne_dir), str(converted(repo))):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # Lasagne 0.2's `is 'auto'`
        import networks

    return networks


def write_godin_files(out: Path, data: TaskData) -> dict:
    """A task's examples in his format (Kalchbrenner's Matlab files) under out/data/binarySentiment/, where his
    trainer reads them: a line of word ids padded to the longest example with the vocabulary size (his zero
    row), a label line `class + 1,length`. The vocabulary is every word of the three splits, as his fixed one
    (row 2 of docs/oracle.md §6.3). Written once; returns the sizes his trainer needs."""
    folder = out / "data" / "binarySentiment"
    if (folder / "vocab.json").is_file():
        return json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    splits = {"train": data.train, "valid": data.dev, "test": data.test}
    vocab: dict[str, int] = {}
    for example in data.train + data.dev + data.test:
        for word in example.words:
            vocab.setdefault(word, len(vocab))
    width = max(len(e.words) for e in data.train + data.dev + data.test)
    work = out / f"tmp{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    for name, examples in splits.items():
        pad = [str(len(vocab))] * width
        lines = [",".join(([str(vocab[w]) for w in e.words] + pad)[:width]) + "\n" for e in examples]
        (work / f"{name}.txt").write_text("".join(lines), encoding="utf-8")
        labels = [f"{e.label + 1},{len(e.words)}\n" for e in examples]
        (work / f"{name}_lbl.txt").write_text("".join(labels), encoding="utf-8")
    sizes = {"vocab_size": len(vocab), "classes": len(data.labels), "width": width}
    sizes |= {name: len(examples) for name, examples in splits.items()}
    (work / "vocab.json").write_text(json.dumps(sizes), encoding="utf-8")
    folder.parent.mkdir(parents=True, exist_ok=True)
    work.replace(folder)
    return sizes


def train_godin(inputs: Path, seed: int, epochs: int, floatx: str = "float32") -> None:
    """His trainDCNN.py with his README's settings on `inputs` (write_godin_files), printing his log. His script
    never seeds; Lasagne's initialisers and his batch order draw from numpy's global generator."""
    import runpy

    sizes = json.loads((inputs / "data" / "binarySentiment" / "vocab.json").read_text(encoding="utf-8"))
    repo, lasagne_dir = folders()
    load_networks(repo, lasagne_dir, floatx)
    np.random.seed(seed)
    argv, cwd = sys.argv, os.getcwd()
    sys.argv = ["trainDCNN.py", "--vocab_size", str(sizes["vocab_size"]), "--output_classes", str(sizes["classes"])]
    sys.argv += ["--n_epochs", str(epochs)]
    try:
        os.chdir(inputs)  # he reads ./data/binarySentiment/
        runpy.run_path(str(converted(repo) / "trainDCNN.py"), run_name="__main__")
    finally:
        sys.argv = argv
        os.chdir(cwd)


def godin_rows(rows: int, folds: int) -> list[int]:
    """Our row o of a layer with `rows` rows and `folds` foldings from here to the top -> his row. We fold rows
    2p and 2p + 1 into p, he folds f and f + rows/2 into f; both then fold the folded rows again."""
    if folds == 0:
        return list(range(rows))
    above = godin_rows(rows // 2, folds - 1)
    return [above[o // 2] + rows // 2 * (o % 2) for o in range(rows)]


def load_into_godin(model, networks, floatx: str):
    """His graph (batch of one sentence) holding our DCNN's weights; returns his output layer."""
    import lasagne

    c = model.config
    vocab, d = model.embedding.weight.shape
    out = networks.buildDCNNPaper(
        batch_size=1,
        vocab_size=vocab,
        embeddings_size=d,
        filter_sizes=c.widths,
        nr_of_filters=c.maps,
        activations=["tanh"] * len(c.widths),
        ktop=c.k_top,
        dropout=c.dropout,
        output_classes=c.num_classes,
        padding="last",
    )
    if len(c.widths) != 2:
        raise ValueError(f"his network has two convolutional layers; this model has {len(c.widths)}")
    layers = lasagne.layers.get_all_layers(out)
    named = {name: [l for l in layers if type(l).__name__ == name] for name in ("Conv1DLayerSplitted", "DenseLayer")}
    embedding = next(l for l in layers if type(l).__name__ == "SentenceEmbeddingLayer")
    folds = len(c.widths)
    perms = [godin_rows(d // 2**l, folds - l) for l in range(folds + 1)]  # the last: the top rows, in order
    table = np.zeros((vocab, d))
    table[:, perms[0]] = model.embedding.weight.detach().double().numpy()
    embedding.W.set_value(table.astype(floatx))
    for theirs, ours, perm, folded in zip(named["Conv1DLayerSplitted"], model.layers, perms, perms[1:]):
        n, r = theirs.num_filters, theirs.num_of_rows
        w = ours.conv.weight.detach().double().numpy()  # (r * n, n_in, m): row o's n filters, cross-correlation
        weights = np.zeros(theirs.W.get_value().shape)  # (n, n_in, r, m): true convolution
        for o in range(r):
            weights[:, :, perm[o], :] = w[o * n : (o + 1) * n, :, ::-1]
        theirs.W.set_value(weights.astype(floatx))
        bias = np.zeros((n, r))  # his, before folding: folded row f gets bias[f] + bias[f + r/2]; ours is all on f
        bias[:, folded] = ours.bias.detach().double().numpy().T
        theirs.b.set_value(bias.astype(floatx))
    (dense,) = named["DenseLayer"]
    rows, maps = d // 2**folds, c.maps[-1]
    # ours flattens the top layer as (row, map, k), his as (map, row, k); his W is (inputs, classes)
    w = model.out.weight.detach().double().numpy().reshape(-1, rows, maps, c.k_top)
    dense.W.set_value(w.transpose(2, 1, 3, 0).reshape(maps * rows * c.k_top, -1).astype(floatx))
    dense.b.set_value(model.out.bias.detach().double().numpy().astype(floatx))
    return out


def compare(
    checkpoint: Path, repo: Path, lasagne_dir: Path, floatx: str = "float64", k_from: str = "width", sentences: int = 0
) -> dict:
    """Max |Δp| between his graph and ours (float64) with the same weights on SST-5 dev, one sentence a batch."""
    import pytensor
    import pytensor.tensor as pt

    start = time.perf_counter()
    ckpt = load_checkpoint(checkpoint)
    model = ckpt.model.double().eval()
    model.config.k_from = k_from  # his k comes from the convolution's width; the shipped model's from the sentence
    networks = load_networks(repo, lasagne_dir, floatx)
    import lasagne  # on the path load_networks set

    out = load_into_godin(model, networks, floatx)
    ids = pt.imatrix("x")
    probabilities = pytensor.function([ids], lasagne.layers.get_output(out, ids, deterministic=True))
    compiled = time.perf_counter() - start
    dev = load_task(ckpt.meta["task"], phrases=False).dev
    dev = dev[:sentences] if sentences else dev
    deltas, agree, right = [], 0, [0, 0]
    for example in dev:
        seq = ckpt.vocab.encode(example.words)
        theirs = probabilities(np.array([seq], dtype=np.int32))[0]
        with torch.no_grad():
            ours = torch.softmax(model(torch.tensor([seq]), torch.tensor([len(seq)])).logits, -1)[0].numpy()
        deltas.append(float(np.abs(theirs - ours).max()))
        agree += int(theirs.argmax() == ours.argmax())
        right[0] += int(theirs.argmax() == example.label)
        right[1] += int(ours.argmax() == example.label)
    return {
        "checkpoint": display_path(checkpoint),
        "sentences": len(deltas),
        "floatx": floatx,
        "k_from": k_from,
        "max_abs_dp": max(deltas),
        "mean_abs_dp": float(np.mean(deltas)),
        "argmax_agree": agree,
        "dev_theirs": 100 * right[0] / len(deltas),
        "dev_ours": 100 * right[1] / len(deltas),
        "compile_seconds": round(compiled, 1),
        "seconds": round(time.perf_counter() - start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint",
        default=str(PROJECT_ROOT / "checkpoints" / "sst5" / "dcnn"),
        help="our DCNN checkpoint whose weights go into Godin's graph",
    )
    parser.add_argument("--sentences", type=int, default=0, help="the first N dev sentences (0: all)")
    parser.add_argument("--floatx", default="float64", choices=("float64", "float32"), help="Theano's float type")
    parser.add_argument("--k-from", default="width", choices=("width", "sentence"), help="our k rule (Eq. 4's s)")
    parser.add_argument("--json", default="", help="append the result to this JSON list")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    repo, lasagne_dir = folders()
    result = compare(Path(args.checkpoint), repo, lasagne_dir, args.floatx, args.k_from, args.sentences)
    result |= {"generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine_info()}
    print(json.dumps(result))
    if args.json:
        path = Path(args.json)
        rows = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
        path.write_text(json.dumps(rows + [result], indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
