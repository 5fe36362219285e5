"""`make export-results TASK=sst5 SPLIT=test`: the shipped checkpoints' predictions on a split and their behavioural
probe results, as datasets that `datasets.load_dataset("json", ...)` reads, with a dataset card
-> exports/results/<task>-<split>/ (predictions.jsonl, probe_cells.jsonl, probe_failures.jsonl, README.md).

    python -m tools.export_results --task sst5 --split test [--suite en] [--out DIR]

Every sentence of the split (no cap: a split is at most a few thousand sentences, one batched pass per model);
the probe suite is the task's own (probes/<lang>.toml) unless --suite names another.
"""

import argparse
import json
import sys
from pathlib import Path

from core.analysis.batched import predict_batched
from core.analysis.export import ExportError
from core.analysis.probes import SuiteError, run_suite, suite_names
from core.analysis.treebank import join_words
from core.data import PROJECT_ROOT, DataError, load_task
from core.predict import Lab
from core.wire import plain

SPLITS = ("train", "dev", "test")
PREDICTIONS, CELLS, FAILURES, CARD = "predictions.jsonl", "probe_cells.jsonl", "probe_failures.jsonl", "README.md"


def prediction_records(lab: Lab, task: str, split: str, data: str | None = None) -> list[dict]:
    """One flat record per (sentence, model): the text, its gold label, the prediction, every class's probability."""
    if split not in SPLITS:
        raise ExportError("no_split", task=task, split=split, available=list(SPLITS))
    loaded = load_task(task, data)
    sentences = [e for e in getattr(loaded, split) if not e.is_phrase]
    records = []
    for model in lab.models(task):
        ckpt = lab.checkpoints[(task, model)]
        probs, labels = predict_batched(ckpt.model, [ckpt.vocab.encode(list(e.words)) for e in sentences], 256)
        names = ckpt.meta["labels"]
        records += [
            {
                "id": i,
                "task": task,
                "split": split,
                "model": model,
                "text": join_words(e.words, loaded.lang),
                "gold": loaded.labels[e.label],
                "label": names[label],
                "correct": names[label] == loaded.labels[e.label],
                "confidence": p[label],
                "probs": p,
            }
            for i, (e, p, label) in enumerate(zip(sentences, probs, labels))
        ]
    return records


def probe_records(lab: Lab, suite: str, task: str) -> tuple[list[dict], list[dict]]:
    """(one record per test and model: passed, total, rate; one record per failed case and model)."""
    report = run_suite(lab, suite, task).to_dict(failures=True)
    tests = {t["name"]: t for t in report["tests"]}
    cells, failures = [], []
    for test, row in report["test_cells"].items():
        for model, cell in row.items():
            cells.append(
                {
                    "suite": suite,
                    "task": report["task"],
                    "test": test,
                    "capability": tests[test]["capability"],
                    "type": tests[test]["type"],
                    "model": model,
                    "passed": cell["passed"],
                    "total": cell["total"],
                    "rate": cell["rate"],
                    "dir_threshold": report["dir_threshold"],
                }
            )
            failures += [
                {
                    "suite": suite,
                    "task": report["task"],
                    "model": model,
                    **plain(f["case"]),
                    **{k: v for k, v in f.items() if k != "case"},
                }
                for f in cell["failures"]
            ]
    return cells, failures


def card(task: str, split: str, suite: str, predictions: list[dict], cells: list[dict], failures: list[dict]) -> str:
    models = sorted({r["model"] for r in predictions})
    accuracy = {
        m: sum(r["correct"] for r in predictions if r["model"] == m) / max(1, sum(r["model"] == m for r in predictions))
        for m in models
    }
    return "\n".join(
        [
            "---",
            f"pretty_name: {json.dumps(f'Sentence-model lab: {task} {split} predictions and {suite} probe results')}",
            "task_categories:\n- text-classification",
            "tags:\n- evaluation\n- behavioral-testing",
            "configs:",
            f"- config_name: predictions\n  data_files: {PREDICTIONS}\n  default: true",
            f"- config_name: probe_cells\n  data_files: {CELLS}",
            f"- config_name: probe_failures\n  data_files: {FAILURES}",
            "---",
            "",
            f"# {task} {split}: predictions and probe results of the shipped checkpoints",
            "",
            f"{len(predictions)} (sentence, model) predictions of {', '.join(models)} on the {split} split of {task} "
            "(accuracy: " + ", ".join(f"{m} {a:.3f}" for m, a in accuracy.items()) + f"), and the `{suite}` probe "
            f"suite's results: {len(cells)} (test, model) cells, {len(failures)} failed cases.",
            "",
            "```python",
            "from datasets import load_dataset",
            f'predictions = load_dataset("json", data_files="{PREDICTIONS}", split="train")',
            "```",
            "",
            f"- `{PREDICTIONS}`: `id` (the sentence's position in the split), `task`, `split`, `model`, `text`, "
            "`gold`, `label` (the prediction), `correct`, `confidence` (its probability), `probs` (every class's, "
            "in the task's label order).",
            f"- `{CELLS}`: `suite`, `task`, `test`, `capability`, `type` (mft: the expected label; inv: the label "
            "stays; dir: the expected sentiment moves the expected way by more than `dir_threshold`), `model`, "
            "`passed`, `total`, `rate`.",
            f"- `{FAILURES}`: the case (`test`, `capability`, `type`, `text`, `variant`, `expect`) and what the model "
            "did (`label`, `score`, `variant_label`, `variant_score`).",
            "",
        ]
    )


def write_jsonl(path: Path, records: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.export_results", description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="sst5", help="the task whose split is predicted")
    parser.add_argument("--split", default="test", help="train, dev or test")
    parser.add_argument(
        "--suite", default=None, help=f"a probe suite ({', '.join(suite_names())}); default: the task's"
    )
    parser.add_argument("--checkpoints", default=str(PROJECT_ROOT / "checkpoints"), help="the checkpoints folder")
    parser.add_argument("--data-dir", default=None, help="where the datasets are (default: the project's data folder)")
    parser.add_argument("--out", default=None, help="default: exports/results/<task>-<split>")
    args = parser.parse_args(argv)
    try:
        lab = Lab.load(args.checkpoints)
        if args.task not in lab.tasks():
            raise ExportError("no_task", task=args.task, available=lab.tasks())
        predictions = prediction_records(lab, args.task, args.split, args.data_dir)
        suite = args.suite or next(
            s for s in suite_names() if s == lab.checkpoints[(args.task, lab.models(args.task)[0])].meta.get("lang")
        )
        cells, failures = probe_records(lab, suite, args.task)
    except (ExportError, SuiteError, DataError, StopIteration) as err:
        print(f"error: {err or 'no probe suite for this task; name one with --suite'}", file=sys.stderr)
        return 2
    out = Path(args.out or PROJECT_ROOT / "exports" / "results" / f"{args.task}-{args.split}")
    out.mkdir(parents=True, exist_ok=True)
    for name, records in ((PREDICTIONS, predictions), (CELLS, cells), (FAILURES, failures)):
        write_jsonl(out / name, records)
    (out / CARD).write_text(card(args.task, args.split, suite, predictions, cells, failures), encoding="utf-8")
    print(f"{len(predictions)} predictions, {len(cells)} probe cells, {len(failures)} failures -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
