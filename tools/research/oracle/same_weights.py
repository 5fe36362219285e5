"""Same weights: our tensor CNN's weights inside the authors' graph, class probabilities side by side.

    python -m tools.research.oracle.same_weights [--checkpoint checkpoints/sst5/tensor_cnn] [--floatx float64]

The authors' `ConvModel.ready` builds their graph around our embedding table; their P, Q, R, O, b and softmax
W are set from ours; their own reader and length batching read their SST-5 dev file (data/stsa.fine.dev),
and their eval graph's softmax is compared with our model's on the same sentences (right-padded batches).
"""

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.data import PROJECT_ROOT
from core.data.batching import pad_batch
from tools.research.oracle.files import default_dir, write_inputs
from tools.research.oracle.shim import load_authors, oracle_dir

UNK_WORD = "## UNK ##"  # the authors' unknown word: the last row of their embedding table


def shown(path: Path) -> str:
    return str(path.relative_to(PROJECT_ROOT) if path.is_relative_to(PROJECT_ROOT) else path)


def authors_args(config, batch: int = 15) -> argparse.Namespace:
    """Their command-line settings for our model's configuration (no dropout graph: evaluation only)."""
    return argparse.Namespace(
        depth=config.num_layers,
        order=config.ngram_order,
        decay=config.decay,
        hidden_dim=config.hidden,
        dropout_rate=0.0,
        l2_reg=0.0,
        act="relu",
        batch=batch,
    )


def load_into_authors(authors, model, vocab, labels: list[str], floatx: str):
    """Their ConvModel holding our weights; its vocabx is our vocabulary plus their UNK row (= our <unk>)."""
    cfg, h = model.config, model.config.hidden
    table = model.embedding.weight.detach().double().numpy()
    emb = np.concatenate([table, table[vocab.unk_id : vocab.unk_id + 1]]).astype(floatx)
    vocabx = {**vocab.stoi, UNK_WORD: len(table)}
    vocaby = {str(i): i for i in range(len(labels))}  # their labels are the file's "0".."4": ours, in order
    conv = authors.ConvModel(vocabx, vocaby, authors_args(cfg))
    conv.ready(emb)
    for ours, theirs in zip(model.layers, conv.layers[:-1]):
        pqr = ours.pqr.weight.detach().double().numpy()  # (3h, d_in): rows P, Q, R; theirs are (d_in, h)
        for k, shared in enumerate([theirs.P, theirs.Q, theirs.R][: cfg.ngram_order]):
            shared.set_value(pqr[k * h : (k + 1) * h].T.astype(floatx))
        theirs.O.set_value(ours.o.weight.detach().double().numpy().T.astype(floatx))  # z = total @ O
        theirs.b.set_value(ours.o.bias.detach().double().numpy().astype(floatx))
    conv.layers[-1].W.set_value(model.classifier.weight.detach().double().numpy().T.astype(floatx))
    return conv


def compare(checkpoint: Path, folder: Path, inputs: Path, floatx: str = "float64", ours_dtype=torch.float64) -> dict:
    """Max |Δp| between the authors' graph and ours on SST-5 dev (`inputs`/stsa.fine.dev), same weights."""
    authors = load_authors(folder, floatx=floatx)
    import pytensor

    loaded = load_checkpoint(checkpoint)
    model, vocab, labels = loaded.model.to(ours_dtype).eval(), loaded.vocab, loaded.meta["labels"]
    conv = load_into_authors(authors, model, vocab, labels, floatx)
    dev_file = inputs / "stsa.fine.dev"  # our dev sentences (tools.research.oracle.files), read by their reader
    xs, ys = authors.Pipe.read_corpus(str(dev_file), None, conv.vocabx, conv.vocaby)
    probabilities = pytensor.function([conv.x], conv.layers[-1].p_y_given_x, allow_input_downcast=True)
    batches_x, batches_y = conv.create_batches(list(range(len(xs))), xs, ys)  # their length buckets, their order
    theirs = np.concatenate([probabilities(bx) for bx in batches_x])  # (N, C) in batch order
    order = [tuple(column) for bx in batches_x for column in bx.T]  # each sentence's ids, in the same order
    ids = [[i if i < len(vocab) else vocab.unk_id for i in sentence] for sentence in order]
    with torch.no_grad():
        ours = torch.cat(
            [
                model(batch.ids, batch.lengths).logits.softmax(-1)
                for batch in (pad_batch(ids[i : i + 64]) for i in range(0, len(ids), 64))
            ]
        ).double()
    delta = np.abs(theirs - ours.numpy())
    gold = np.concatenate(batches_y)
    return {
        "checkpoint": shown(checkpoint),
        "dev_file": "stsa.fine.dev of tools.research.oracle.files",
        "sentences": len(order),
        "floatx_authors": floatx,
        "dtype_ours": str(ours_dtype).replace("torch.", ""),
        "max_abs_dp": float(delta.max()),
        "mean_abs_dp": float(delta.mean()),
        "argmax_agree": int((theirs.argmax(1) == ours.numpy().argmax(1)).sum()),
        "dev_accuracy_authors": float(np.mean(theirs.argmax(1) == gold)),
        "dev_accuracy_ours": float(np.mean(ours.numpy().argmax(1) == gold)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint",
        default=str(PROJECT_ROOT / "checkpoints" / "sst5" / "tensor_cnn"),
        help="our tensor CNN checkpoint whose weights go into the authors' graph",
    )
    parser.add_argument("--oracle-dir", default=None, help="the authors' repository (default: LAB_ORACLE_DIR)")
    parser.add_argument("--floatx", default="float64", choices=["float32", "float64"], help="Theano's float type")
    parser.add_argument("--inputs", default=str(default_dir()), help="tools.research.oracle.files's folder")
    args = parser.parse_args(argv)
    inputs = Path(args.inputs)
    if not (inputs / "stsa.fine.dev").is_file():
        write_inputs(inputs)
    result = compare(Path(args.checkpoint), oracle_dir(args.oracle_dir), inputs, args.floatx)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
