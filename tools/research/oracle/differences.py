"""What differs between the Theano the authors' code was written for and the shim on pytensor, measured.

    python -m tools.research.oracle.differences [--out reports/oracle_identity.json]

With our shipped SST-5 tensor CNN inside their graph (tools.research.oracle.same_weights) on SST-5 dev:
- identity: max |Δp| of their graph and ours, float64 and with their graph in float32;
- softmax: pytensor's special.softmax with its default axis (every entry of the batch) against Theano's
  row-wise T.nnet.softmax;
- loss: their -log(softmax(s)[arange(n), y]) as pytensor compiles it against the log-softmax form Theano's
  fused cross-entropy computed: loss and gradient on dev, and the logit gap at which the first gives NaN;
- dropout: the shim's RandomStreams mask, keep rate and whether each call draws a new one;
- embedding updates: whether their sparse AdaGrad branch for the embedding rows can run at all.
"""

import argparse
import json
import platform
from pathlib import Path
from typing import Any

import numpy as np
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.data import PROJECT_ROOT
from tools.research.oracle.files import default_dir, write_inputs
from tools.research.oracle.same_weights import compare, load_into_authors, shown
from tools.research.oracle.shim import COMMIT, REPOSITORY, RandomStreams, load_authors, oracle_dir


def loss_forms(authors, conv, batches_x, batches_y) -> dict:
    """Their naive loss (as pytensor leaves it) and the stable form, with gradients w.r.t. the softmax W."""
    import pytensor
    import pytensor.tensor as pt
    from pytensor.tensor.special import log_softmax

    s, y = conv.layers[-1].s_y_given_x, conv.y
    rows = pt.arange(y.shape[0])
    naive = -pt.mean(pt.log(authors.T.nnet.softmax(s)[rows, y]))
    stable = -pt.mean(log_softmax(s, axis=1)[rows, y])
    w = conv.layers[-1].W
    outputs: list = [naive, stable, pytensor.grad(naive, w), pytensor.grad(stable, w)]  # grad of one: one Variable
    f = pytensor.function([conv.x, y], outputs)
    worst_loss = worst_grad = 0.0
    for bx, by in zip(batches_x, batches_y):
        a, b, ga, gb = f(bx, by.astype("int32"))
        worst_loss, worst_grad = max(worst_loss, abs(a - b)), max(worst_grad, float(np.abs(ga - gb).max()))
    # a single example whose gold class is `gap` below another: where the naive gradient turns NaN
    x = pt.matrix("logits")
    g = pytensor.grad(-pt.mean(pt.log(authors.T.nnet.softmax(x)[rows, y])), x)
    probe = pytensor.function([x, y], g)
    first_nan = next(
        (gap for gap in range(10, 2001, 10) if np.isnan(probe(np.array([[0.0, gap]]), np.array([0], "int32"))).any()),
        None,
    )
    return {"max_abs_loss_diff": float(worst_loss), "max_abs_grad_diff": float(worst_grad), "nan_at_gap": first_nan}


def measure(checkpoint: Path, folder: Path, inputs: Path) -> dict:
    import pytensor
    from pytensor.tensor.special import softmax

    result: dict[str, Any] = {"oracle": f"{REPOSITORY}@{COMMIT}", "identity": {}}
    for floatx in ("float64", "float32"):
        result["identity"][floatx] = compare(checkpoint, folder, inputs, floatx)
    authors = load_authors(folder, floatx="float64")
    loaded = load_checkpoint(checkpoint)
    model = loaded.model.to(torch.float64).eval()
    conv = load_into_authors(authors, model, loaded.vocab, loaded.meta["labels"], "float64")
    xs, ys = authors.Pipe.read_corpus(str(inputs / "stsa.fine.dev"), None, conv.vocabx, conv.vocaby)
    batches_x, batches_y = conv.create_batches(list(range(len(xs))), xs, ys)
    # softmax over the whole batch (pytensor's default axis) against row-wise (Theano's T.nnet.softmax)
    s = conv.layers[-1].s_y_given_x
    both = pytensor.function([conv.x], [softmax(s), authors.T.nnet.softmax(s)])
    gaps = [np.abs(a - b).max() for a, b in (both(bx) for bx in batches_x)]
    batch_sizes = [bx.shape[1] for bx in batches_x]
    result["softmax_default_axis"] = {
        "max_abs_dp": float(max(gaps)),
        "batches": len(batches_x),
        "batches_of_one": int(sum(b == 1 for b in batch_sizes)),
    }
    result["loss"] = {"float64": loss_forms(authors, conv, batches_x, batches_y)}
    with pytensor.config.change_flags(floatX="float32"):
        x, y = authors.T.matrix("logits"), authors.T.ivector("y")
        g = pytensor.grad(-authors.T.mean(authors.T.log(authors.T.nnet.softmax(x)[authors.T.arange(1), y])), x)
        probe = pytensor.function([x, y], g)
        result["loss"]["float32_nan_at_gap"] = next(
            (
                gap
                for gap in range(10, 2001, 10)
                if np.isnan(probe(np.array([[0, gap]], "float32"), np.array([0], "int32"))).any()
            ),
            None,
        )
    # the dropout shim: 200 draws of a (15, 300) mask at keep probability 0.7
    import pytensor.tensor as pt

    m = pt.matrix("m")
    draw = pytensor.function([m], RandomStreams(1).binomial(n=1, p=0.7, size=m.shape, dtype="float64"))
    masks = [draw(np.zeros((15, 300))) for _ in range(200)]
    result["dropout"] = {
        "keep_rate": float(np.mean(masks)),
        "expected": 0.7,
        "distinct_masks_of_200": len({mk.tobytes() for mk in masks}),
    }
    # their adagrad_update has a branch for `param == self.slices` (sparse rows of EMB); EMB is never a param
    result["embedding_updates"] = {
        "params": [p.name for p in conv.params],
        "embedding_in_params": any(p is conv.EMB or p is conv.slices for p in conv.params),
    }
    result["machine"] = f"{platform.machine()}, pytensor {pytensor.__version__}, linker {pytensor.config.linker}"
    result["checkpoint"] = shown(checkpoint)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint",
        default=str(PROJECT_ROOT / "checkpoints" / "sst5" / "tensor_cnn"),
        help="our tensor CNN checkpoint whose weights go into the authors' graph",
    )
    parser.add_argument("--oracle-dir", default=None, help="the authors' checkout (default: LAB_ORACLE_DIR)")
    parser.add_argument(
        "--inputs",
        default=str(default_dir()),
        help="the folder of the files both sides read (tools.research.oracle.files)",
    )
    parser.add_argument(
        "--out", default=str(PROJECT_ROOT / "reports" / "oracle_identity.json"), help="the JSON file to write"
    )
    args = parser.parse_args(argv)
    inputs = Path(args.inputs)
    if not (inputs / "stsa.fine.dev").is_file():
        write_inputs(inputs)
    result = measure(Path(args.checkpoint), oracle_dir(args.oracle_dir), inputs)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
