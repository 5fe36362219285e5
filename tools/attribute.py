"""`make attribute TASK=sst5 SPLIT=test [LIMIT=200]`: every method's word attributions of the shipped checkpoints
on a task's split, as a dataset -> exports/attributions/<task>-<split>/ (attributions.jsonl, words.csv and the
dataset card README.md; core/analysis/export.py says what each field is).

    python -m tools.attribute --task sst5 --split test [--models dcnn agt] [--limit 200] [--out DIR]

The first --limit sentences of the split, in order (those outside 2..60 words are left out, and said so);
--limit above the cap fails with one line. Measured: 40 SST-5 test sentences, 5 models, 156 s on 2 busy cores
(0.3 s per sentence for most models, 2.3 s for DCNN, whose integrated gradients takes up to 2,048 steps).
"""

import argparse
import sys
import time
from pathlib import Path

import torch

from core.analysis.export import (
    DEFAULT_LIMIT,
    MAX_WORDS,
    MIN_WORDS,
    SENTENCES_CAP,
    ExportError,
    Sentence,
    attribution_records,
    card,
    check_limit,
    write_export,
)
from core.analysis.treebank import join_words
from core.data import PROJECT_ROOT, DataError, load_task
from core.predict import Lab

SPLITS = ("train", "dev", "test")


def split_sentences(task: str, split: str, limit: int, data: str | None) -> tuple[list[Sentence], str]:
    """The split's first `limit` sentences with their gold labels, and the task's language."""
    if split not in SPLITS:
        raise ExportError("no_split", task=task, split=split, available=list(SPLITS))
    loaded = load_task(task, data)
    examples = [e for e in getattr(loaded, split) if not e.is_phrase][:limit]
    return [
        Sentence(i, list(e.words), join_words(e.words, loaded.lang), loaded.labels[e.label])
        for i, e in enumerate(examples)
    ], loaded.lang


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.attribute", description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="sst5", help="the task whose split is attributed")
    parser.add_argument("--split", default="test", help="train, dev or test")
    parser.add_argument("--models", nargs="+", default=None, help="default: every shipped model of the task")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help=f"sentences, at most {SENTENCES_CAP}")
    parser.add_argument("--checkpoints", default=str(PROJECT_ROOT / "checkpoints"), help="the checkpoints folder")
    parser.add_argument("--data-dir", default=None, help="where the datasets are (default: the project's data folder)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--out", default=None, help="default: exports/attributions/<task>-<split>")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        check_limit(args.limit)
        lab = Lab.load(args.checkpoints, prefer="bundled")
        if not lab.models(args.task):
            raise ExportError("no_task", task=args.task, available=lab.tasks())
        models = args.models or lab.models(args.task)
        for model in models:
            if (args.task, model) not in lab.checkpoints:
                raise ExportError("unknown_model", model=model, task=args.task, available=lab.models(args.task))
        sentences, lang = split_sentences(args.task, args.split, args.limit, args.data_dir)
    except (ExportError, DataError) as err:
        print(f"make attribute: {err}", file=sys.stderr)
        return 2
    records = []
    for model in models:
        started = time.perf_counter()
        records += attribution_records(lab.checkpoints[(args.task, model)], sentences)
        print(f"{args.task} {model}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if not records:
        print(f"make attribute: {ExportError('nothing_explained', min=MIN_WORDS, max=MAX_WORDS)}", file=sys.stderr)
        return 2
    explained = len({r["id"] for r in records})
    out = Path(args.out or PROJECT_ROOT / "exports" / "attributions" / f"{args.task}-{args.split}")
    source = f"{args.task}'s {args.split} split (its first {len(sentences)})"
    paths = write_export(
        records,
        out,
        card(f"Word attributions: {args.task} {args.split}", lang, source, records, len(sentences) - explained),
    )
    print(f"wrote {', '.join(map(str, paths))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
