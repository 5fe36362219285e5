"""Evaluate a saved checkpoint on a task's test set (and its extra test sets); for SST also on every
labelled phrase of the split's trees (`<split>_all_phrases`, Socher et al. 2013's "all" accuracy), and an SST-5
checkpoint read as SST-2 on SST-2's sentences of the split (`<split>_as_sst2`: metrics.binary_from_fine).

    python -m core.analysis.evaluate --checkpoint runs/sst5-phrases/tensor_cnn-s1/best --task sst5 [--split dev]
"""

import argparse
import json
import sys

from core.analysis.metrics import evaluate, evaluate_as_binary
from core.checkpoints.checkpoint import CheckpointError, load_checkpoint
from core.data import DataError, Example, data_dir, load_task
from core.data.sst import load_sst_trees, node_examples


def sst_phrases(task: str, split: str, data: str | None = None) -> list[Example]:
    """Every labelled node of the split's SST trees, repeats included (empty for a task that is not SST)."""
    if task not in ("sst5", "sst2"):
        return []
    return node_examples(load_sst_trees(data_dir(data), split), binary=task == "sst2")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.analysis.evaluate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="the checkpoint folder to evaluate")
    parser.add_argument("--task", default=None, help="default: the task the checkpoint was trained on")
    parser.add_argument("--split", default="test", choices=["dev", "test"], help="the split to evaluate on")
    parser.add_argument("--data-dir", default=None, help="where the datasets are (default: the project's data folder)")
    parser.add_argument("--fold", type=int, default=0, help="MR/CR/SUBJ/MPQA cross-validation fold")
    args = parser.parse_args(argv)
    try:
        ckpt = load_checkpoint(args.checkpoint)
        task = load_task(args.task or ckpt.meta.get("task", ""), args.data_dir, fold=args.fold)
        if task.labels != ckpt.meta.get("labels"):
            raise DataError(
                f"task {task.name} has labels {task.labels}, the checkpoint predicts {ckpt.meta.get('labels')}"
            )
        report = {args.split: evaluate(ckpt.model, getattr(task, args.split), ckpt.vocab, task.labels)}
        if phrases := sst_phrases(task.name, args.split, args.data_dir):
            report[f"{args.split}_all_phrases"] = evaluate(ckpt.model, phrases, ckpt.vocab, task.labels)
        if task.name == "sst5":
            binary = getattr(load_task("sst2", args.data_dir), args.split)
            report[f"{args.split}_as_sst2"] = evaluate_as_binary(ckpt.model, binary, ckpt.vocab)
        if args.split == "test":
            report.update(
                {name: evaluate(ckpt.model, ex, ckpt.vocab, task.labels) for name, ex in task.extra_tests.items()}
            )
    except (CheckpointError, DataError, ValueError, KeyError, OSError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps({"checkpoint": args.checkpoint, "task": task.name, **report}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
