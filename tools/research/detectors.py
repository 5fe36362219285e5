"""Top n-grams of a DCNN first-layer feature detector (Kalchbrenner et al. 2014, §5.5 and Fig. 4).

A first-layer feature detector is one (map, row) pair of the first wide convolution, before folding:
the binary model has 6 maps x 48 rows = 288 of them. Position p of a detector's output reads the
words p-m+1..p (Eq. 1, clipped to the sentence), so every position scores one n-gram of at most m
words. Like the paper, we rank the n-grams of the validation and test sentences and keep the top
distinct ones.

    python -m tools.research.detectors --checkpoint DIR --task sst2 --map 0 --row 5 --top 5 [--out table.md]
"""

import argparse
from pathlib import Path

import torch

from core.checkpoints.checkpoint import CheckpointError, load_checkpoint
from core.data import DataError, load_task
from core.data.batching import pad_batch


def top_ngrams(
    model, vocab, sentences: list[list[str]], fmap: int, row: int, top: int = 5, batch_size: int = 64
) -> list[tuple[str, float]]:
    """The `top` distinct n-grams of `sentences` with the highest activation of detector (fmap, row),
    as (n-gram, activation), best first."""
    maps, rows = model.config.maps[0], model.config.embed_dim
    if not (0 <= fmap < maps and 0 <= row < rows):
        raise ValueError(f"detector (map {fmap}, row {row}) does not exist: maps 0..{maps - 1}, rows 0..{rows - 1}")
    width = model.config.widths[0]
    sentences = [s for s in sentences if s]
    best: dict[str, float] = {}
    model.eval()
    for start in range(0, len(sentences), batch_size):
        chunk = sentences[start : start + batch_size]
        batch = pad_batch([vocab.encode(words) for words in chunk])
        with torch.no_grad():
            scores = model(batch.ids, batch.lengths, explain=len(chunk)).conv1[:, row, fmap, :]  # (B, T + m - 1)
        for words, row_scores in zip(chunk, scores.tolist()):
            for p, score in enumerate(row_scores[: len(words) + width - 1]):
                gram = " ".join(words[max(0, p - width + 1) : p + 1])
                best[gram] = max(score, best.get(gram, float("-inf")))
    return sorted(best.items(), key=lambda item: -item[1])[:top]


def markdown_table(rows: list[tuple[str, float]], title: str) -> str:
    lines = [f"### {title}", "", "| rank | activation | n-gram |", "|---:|---:|---|"]
    for rank, (gram, score) in enumerate(rows, 1):
        cell = gram.replace("|", "\\|")  # a literal pipe would end the cell
        lines.append(f"| {rank} | {score:.4f} | {cell} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Top n-grams of one DCNN first-layer feature detector (paper Fig. 4).")
    parser.add_argument("--checkpoint", required=True, help="a DCNN checkpoint directory")
    parser.add_argument("--task", help="task whose sentences are ranked, e.g. sst2 (default: the checkpoint's)")
    parser.add_argument("--map", type=int, required=True, help="first-layer feature map, from 0")
    parser.add_argument("--row", type=int, required=True, help="embedding row, from 0")
    parser.add_argument("--top", type=int, default=5, help="how many n-grams to list")
    parser.add_argument(
        "--splits",
        nargs="+",
        default=["dev", "test"],
        choices=["train", "dev", "test"],
        help="splits to rank (the paper: validation and test)",
    )
    parser.add_argument("--data-dir", help="data directory (default: $DATA_DIR, then ../shared/data)")
    parser.add_argument("--out", help="write the markdown table here instead of printing it")
    args = parser.parse_args(argv)

    try:
        checkpoint = load_checkpoint(args.checkpoint)
        if checkpoint.model.key != "dcnn":
            raise ValueError(f"{args.checkpoint} holds a {checkpoint.model.key!r} model; feature detectors are DCNN's")
        args.task = args.task or checkpoint.meta.get("task")
        if not args.task:
            raise ValueError("the checkpoint names no task: pass --task")
        task = load_task(args.task, args.data_dir)
        sentences = [list(e.words) for split in args.splits for e in getattr(task, split)]
        rows = top_ngrams(checkpoint.model, checkpoint.vocab, sentences, args.map, args.row, args.top)
    except (CheckpointError, DataError, ValueError) as error:
        parser.error(str(error))
    splits = "+".join(args.splits)
    title = f"DCNN layer-1 detector map {args.map}, row {args.row}: top {args.top} n-grams of {args.task} {splits}"
    table = markdown_table(rows, title)
    if args.out:
        Path(args.out).write_text(table, encoding="utf-8")
    else:
        print(table, end="")


if __name__ == "__main__":
    main()
