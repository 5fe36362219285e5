"""Each checkpoint against its task's test set, computed once (`make evaluate-all`) and stored beside the
weights as `evaluation.json`, so that the Treebank tab never runs a test set while a user waits.

What one file holds (compact JSON): the sentence-level report (accuracy, confusion matrix, per-class
precision/recall/F1); for SST the same over every labelled test phrase (Socher et al. 2013's "all"); the
accuracy by length (SST: every labelled phrase by n-gram length, their Fig. 4; Chinese: sentences by
length); accuracy on slices (negation, contrast, sentences with words the checkpoint does not know);
the test sentences on which the task's models disagree most; and the sha256 of the weights it was
computed from, so that a file left behind by a re-bundle is detected (`read_evaluation`).
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from core.analysis.metrics import classification_report, predict_examples
from core.analysis.treebank import SST_TASKS, TreebankError, join_words, phenomena
from core.checkpoints.checkpoint import Checkpoint, atomic_write_text, weights_sha256
from core.checkpoints.manifest import EVALUATION
from core.data import Example, TaskData
from core.data.sst import Tree, node_examples

FORMAT = 1
COMMAND = "make evaluate-all"  # what builds the files (python -m tools.evaluate_all)
DISAGREEMENT_TOP = 20
SLICES = ("all", "negation", "contrast", "unknown_words")
# length buckets (inclusive bounds; None: no upper bound): single lengths where most phrases are, then wider
LENGTH_BUCKETS = [(n, n) for n in range(1, 11)] + [(11, 15), (16, 20), (21, 30), (31, 40), (41, None)]


def predictions(ckpt: Checkpoint, examples: list[Example]) -> list[int]:
    """The checkpoint's predicted class per example, in the examples' order."""
    return predict_examples(ckpt.model, examples, ckpt.vocab)[1]


def _counts_by_length(examples: list[Example], predicted: list[int]) -> list[list[int]]:
    """[[length, n, correct], ...] for every length that occurs, ascending."""
    counts: dict[int, list[int]] = {}
    for e, p in zip(examples, predicted):
        row = counts.setdefault(len(e.words), [0, 0])
        row[0] += 1
        row[1] += e.label == p
    return [[length, n, correct] for length, (n, correct) in sorted(counts.items())]


def length_buckets(by_length: list[list[int]]) -> list[dict]:
    """The per-length counts in LENGTH_BUCKETS: {"bucket": "11-15", "n", "correct", "accuracy"}; empty
    buckets are left out."""
    rows = []
    for low, high in LENGTH_BUCKETS:
        inside = [(n, c) for length, n, c in by_length if length >= low and (high is None or length <= high)]
        n = sum(n for n, _ in inside)
        if n:
            name = str(low) if low == high else f"{low}+" if high is None else f"{low}-{high}"
            correct = sum(c for _, c in inside)
            rows.append({"bucket": name, "n": n, "correct": correct, "accuracy": correct / n})
    return rows


def _slices(test: list[Example], predicted: list[int], ckpt: Checkpoint, lang: str) -> dict[str, dict]:
    members: dict[str, list] = {name: [] for name in SLICES}
    for e, p in zip(test, predicted):
        found = phenomena(e.words, lang) | {"all"}
        if any(w not in ckpt.vocab.stoi for w in e.words):
            found.add("unknown_words")
        for name in found:
            members[name].append(e.label == p)
    return {
        name: {"n": len(hits), "correct": sum(hits), "accuracy": sum(hits) / len(hits) if hits else None}
        for name, hits in members.items()
    }


def _phrase_predictions(ckpt: Checkpoint, phrases: list[Example]) -> list[int]:
    """Predictions on every phrase occurrence, each distinct phrase run once (45,900 of the 82,600 SST test nodes)."""
    distinct = list(dict.fromkeys(e.words for e in phrases))
    predicted = dict(zip(distinct, predictions(ckpt, [Example(words, 0) for words in distinct])))
    return [predicted[e.words] for e in phrases]


def evaluate_checkpoint(ckpt: Checkpoint, task: TaskData, trees: list[Tree] | None = None) -> tuple[dict, list[int]]:
    """(the evaluation of one checkpoint, without the disagreement part; its test-sentence predictions).
    `trees`: the SST test trees, for the phrase-level numbers (SST tasks only)."""
    predicted = predictions(ckpt, task.test)
    evaluation = {
        "format": FORMAT,
        "command": COMMAND,
        "task": task.name,
        "model": ckpt.meta.get("model"),
        "lang": task.lang,
        "labels": task.labels,
        "split": "test",
        "weights_sha256": weights_sha256(ckpt),
        "sentences": classification_report([e.label for e in task.test], predicted, task.labels),
        "slices": _slices(task.test, predicted, ckpt, task.lang),
    }
    if task.name in SST_TASKS and trees is not None:
        phrases = node_examples(trees, SST_TASKS[task.name])
        phrase_predicted = _phrase_predictions(ckpt, phrases)
        evaluation["phrases"] = classification_report([e.label for e in phrases], phrase_predicted, task.labels)
        evaluation["length_unit"], evaluation["by_length"] = "phrase", _counts_by_length(phrases, phrase_predicted)
    else:
        evaluation["phrases"] = None
        evaluation["length_unit"], evaluation["by_length"] = "sentence", _counts_by_length(task.test, predicted)
    return evaluation, predicted


def disagreement(
    test: list[Example], predicted: dict[str, list[int]], lang: str, top: int = DISAGREEMENT_TOP
) -> list[dict]:
    """The test sentences on which the models disagree most: most distinct labels first, then the widest
    spread of the (ordered) labels, then the most models wrong; ties in test order."""
    models = list(predicted)
    scored = []
    for i, e in enumerate(test):
        labels = [predicted[m][i] for m in models]
        key = (-len(set(labels)), -(max(labels) - min(labels)), -sum(label != e.label for label in labels), i)
        scored.append((key, i))
    rows = []
    for key, i in sorted(scored)[:top]:
        rows.append(
            {
                "index": i,
                "text": join_words(test[i].words, lang),
                "gold": test[i].label,
                "predictions": {m: predicted[m][i] for m in models},
                "distinct": -key[0],
            }
        )
    return rows


def evaluate_task(
    checkpoints: dict[str, Checkpoint], task: TaskData, trees: list[Tree] | None = None
) -> dict[str, dict]:
    """{model: evaluation} for every checkpoint of one task, each with the task's disagreement list and
    the weights it was computed from (the list depends on every model)."""
    evaluations, predicted = {}, {}
    for model, ckpt in checkpoints.items():
        evaluations[model], predicted[model] = evaluate_checkpoint(ckpt, task, trees)
    shared = {
        "models": {m: e["weights_sha256"] for m, e in evaluations.items()},
        "sentences": disagreement(task.test, predicted, task.lang),
    }
    for evaluation in evaluations.values():
        evaluation["disagreement"] = shared
    return evaluations


def write_evaluation(folder: Path, evaluation: dict) -> Path:
    path = Path(folder) / EVALUATION
    atomic_write_text(path, json.dumps(evaluation, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path


@dataclass
class DatasetView:
    """One checkpoint's stored evaluation as the dataset view shows it, or why there is none.

    status: "ok"; "missing" (no evaluation.json: run COMMAND); "stale" (computed from other weights);
    "invalid" (unreadable or another format). `disagreement_stale`: another model of the task changed
    since the disagreement list was computed."""

    task: str
    model: str
    status: str
    command: str = COMMAND
    evaluation: dict = field(default_factory=dict)
    buckets: list[dict] = field(default_factory=list)
    disagreement_stale: bool = False

    def to_dict(self) -> dict:
        return {
            "task": self.task,
            "model": self.model,
            "status": self.status,
            "command": self.command,
            "disagreement_stale": self.disagreement_stale,
            "length_buckets": self.buckets,
            **self.evaluation,
        }


def read_evaluation(checkpoints: dict[tuple[str, str], Checkpoint], task: str, model: str) -> DatasetView:
    """The stored evaluation of checkpoints[(task, model)], checked against the weights loaded now;
    TreebankError when that checkpoint is not loaded."""
    if (task, model) not in checkpoints:
        tasks = sorted({t for t, _ in checkpoints})
        if task not in tasks:
            raise TreebankError("no_models", task=task, available=tasks)
        raise TreebankError(
            "unknown_model", model=model, task=task, available=sorted(m for t, m in checkpoints if t == task)
        )
    ckpt = checkpoints[(task, model)]
    path = Path(ckpt.path) / EVALUATION
    if not path.is_file():
        return DatasetView(task, model, "missing")
    try:
        evaluation = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(evaluation, dict) or evaluation.get("format") != FORMAT:
            return DatasetView(task, model, "invalid")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return DatasetView(task, model, "invalid")
    if evaluation.get("weights_sha256") != weights_sha256(ckpt):
        return DatasetView(task, model, "stale")
    try:
        buckets = length_buckets(evaluation["by_length"])
        others = evaluation["disagreement"]["models"]
        stale = any(
            (task, m) not in checkpoints or weights_sha256(checkpoints[(task, m)]) != digest
            for m, digest in others.items()
        )
    except (KeyError, TypeError, ValueError):
        return DatasetView(task, model, "invalid")
    return DatasetView(task, model, "ok", evaluation=evaluation, buckets=buckets, disagreement_stale=stale)
