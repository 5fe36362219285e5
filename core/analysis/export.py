"""Word attributions in bulk, as files a dataset loader reads: for each sentence and model, the prediction, every
method's per-word scores and the sentence's AOPC under each method (core.analysis.attribution).

    records = attribution_records(lab.checkpoints[("sst5", "dcnn")], examples)
    write_export(records, "exports/sst5-test", card)    # attributions.jsonl, words.csv, README.md

`attributions.jsonl` holds flat records (one a line, the same keys in each; lists of numbers or words, no
nesting), which `datasets.load_dataset("json", data_files=...)` reads; `words.csv` is the same in long form,
one row per word; README.md is the dataset card (YAML front matter naming both as configs).
"""

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import torch

from core.analysis.attribution import METHODS, every_method, sentence_aopc
from core.checkpoints.checkpoint import Checkpoint
from core.notices import InputError, NoticeError
from core.predict import ALL, AUTO, Lab
from core.predict import (
    OCCLUSION_MAX_WORDS as MAX_WORDS,  # the lab's attribution cap: longer sentences are left out
)

MIN_WORDS = 2  # occlusion and the deletion test need a word to leave out and one to keep
SENTENCES_CAP = 2000  # make attribute: about an hour of the five SST-5 models on 2 cores (reports/attribution.md)
DEFAULT_LIMIT = 200
UPLOAD_MAX_LINES = 200  # the Lab's upload: sentences per file
UPLOAD_MAX_CHARS = 20_000
# an upload's work budget, in words read (words times models): a 57-line file of 20-word sentences asks all five
# models for about 5,700; beyond the budget its last lines are left out, and said to be
EXPORT_MAX_WORDS = 3000
CHUNK_WORDS = 40  # the work goes in chunks of about this many words, one model: about a long request's size
JSONL, CSV, CARD = "attributions.jsonl", "words.csv", "README.md"
# a spreadsheet runs a cell that starts with one of these as a formula (=HYPERLINK(...) from a label or a word):
# words.csv prefixes such a text cell with a single quote, the OWASP rule; attributions.jsonl keeps it as it is
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
AOPC_FIELDS = [f"aopc_{m}" for m in METHODS]
WORD_FIELDS = ["id", "model", "position", "word", "label", "gold", *METHODS, *AOPC_FIELDS]  # words.csv's columns

EXPORT_NOTICE_TEXT = {
    "over_cap": "--limit {limit} is over the cap of {cap} sentences; export at most {cap} at a time.",
    "bad_limit": "--limit must be at least 1, not {limit}.",
    "no_split": "task '{task}' has no split '{split}'; choose one of: {available}",
    "no_task": "no checkpoint is shipped for task '{task}'; choose one of: {available}",
    "unknown_model": "model '{model}' is not shipped for task '{task}'; choose among: {available}",
    "too_many_lines": "The file has {lines} sentences; the upload takes at most {cap}, one per line.",
    "too_many_chars": "The file has {chars} characters; the upload takes at most {cap}.",
    "empty_file": "The file holds no sentence: one sentence per line, UTF-8 text.",
    "not_text": "The file is not UTF-8 text: one sentence per line.",
    "nothing_explained": "No sentence has {min} to {max} words, the lengths attributions are computed for.",
}


class ExportError(NoticeError):
    """An export core refuses: over its size cap, or input it cannot read."""

    TEXT = EXPORT_NOTICE_TEXT


@dataclass
class Sentence:
    id: int  # position in its split or file
    words: list[str]
    text: str
    gold: str | None = None  # the gold label's name, where the data has one


def check_limit(limit: int, cap: int = SENTENCES_CAP) -> int:
    if limit < 1:
        raise ExportError("bad_limit", limit=limit)
    if limit > cap:
        raise ExportError("over_cap", limit=limit, cap=cap)
    return limit


def read_lines(data: bytes) -> list[str]:
    """An uploaded file's sentences (one per non-blank line), within UPLOAD_MAX_LINES and UPLOAD_MAX_CHARS."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ExportError("not_text") from None
    if len(text) > UPLOAD_MAX_CHARS:
        raise ExportError("too_many_chars", chars=len(text), cap=UPLOAD_MAX_CHARS)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise ExportError("empty_file")
    if len(lines) > UPLOAD_MAX_LINES:
        raise ExportError("too_many_lines", lines=len(lines), cap=UPLOAD_MAX_LINES)
    return lines


@torch.inference_mode()
def _prediction(net, ids: list[int]) -> tuple[int, list[float]]:
    output = net(torch.tensor([ids]), torch.tensor([len(ids)]))
    return int(net.predict_labels(output)[0]), output.logits.softmax(-1)[0].tolist()


def attribution_records(ckpt: Checkpoint, sentences: list[Sentence], seed: int = 0) -> list[dict]:
    """One flat record per sentence of MIN_WORDS..MAX_WORDS words (the others are left out): its words, the
    model's prediction and probabilities, each method's scores for the predicted class and its AOPC."""
    labels, records = ckpt.meta["labels"], []
    for sentence in sentences:
        if not MIN_WORDS <= len(sentence.words) <= MAX_WORDS:
            continue
        ids = ckpt.vocab.encode(sentence.words)
        label, probs = _prediction(ckpt.model, ids)
        found = every_method(ckpt.model, ids, label, seed=seed + sentence.id)
        aopc = sentence_aopc(ckpt.model, ids, label, found)
        records.append(
            {
                "id": sentence.id,
                "task": ckpt.meta["task"],
                "model": ckpt.model.key,
                "text": sentence.text,
                "words": list(sentence.words),
                "gold": sentence.gold,
                "label": labels[label],
                "confidence": probs[label],
                "probs": probs,
            }
            | {m: found[m].scores for m in METHODS}
            | {f"aopc_{m}": aopc[m] for m in METHODS}
        )
    return records


class BudgetSpent(Exception):
    """What an export's runner raises before a chunk once the export's time budget is spent: it stops there."""


@dataclass
class Export:
    """What text_records explained of a file: the records, and what it left out and why."""

    records: list[dict]
    skipped: int  # lines left out: the Lab refuses them, or they are outside MIN_WORDS..MAX_WORDS words
    pairs: int  # the (sentence, model) pairs the other lines ask for
    left: int  # of those, the pairs not explained: past the word budget, or the time budget was spent
    stopped: str = ""  # "words" or "time": the budget that left pairs out


def chunks(sentences: list[Sentence], words: int = CHUNK_WORDS) -> list[list[Sentence]]:
    """Consecutive sentences, about `words` words in each group (a longer sentence alone)."""
    found: list[list[Sentence]] = []
    for sentence in sentences:
        if found and sum(len(s.words) for s in found[-1]) + len(sentence.words) <= words:
            found[-1].append(sentence)
        else:
            found.append([sentence])
    return found


def text_records(
    lab: Lab,
    lines: list[str],
    task: str | None,
    lang: str | None,
    model: str,
    progress=None,
    run=None,
    max_words: int = EXPORT_MAX_WORDS,
) -> Export:
    """A user's sentences (read_lines) explained by `model` (ALL: every model of each line's task), read the way
    the Lab reads them (check_text; the task may be "auto": each line's own); a line the Lab refuses or one outside
    MIN_WORDS..MAX_WORDS words is left out, ExportError when none is left (InputError: a task or model `lab`
    lacks). The work goes in chunks (a few sentences, one model) in sentence order, every model of a chunk before
    the next, up to `max_words` words read in all (words times models); `run((task, model), sentences)` explains
    a chunk (by default here; the app's runs in its worker, and raises BudgetSpent once its time is spent).
    `progress(done, total)` follows the chunks."""
    chosen = None if task in (None, "", AUTO) else task
    if chosen is not None and chosen not in lab.tasks():  # said once, not as "no sentence" for every line
        raise InputError("unknown_task", task=chosen, available=lab.tasks())
    if chosen is not None and model != ALL and (chosen, model) not in lab.checkpoints:
        raise InputError("unknown_model", model=model, task=chosen, available=lab.models(chosen))
    by_task: dict[str, list[Sentence]] = {}
    for i, line in enumerate(lines):
        try:
            checked = lab.check_text(line, task, lang)
        except NoticeError:
            continue
        if MIN_WORDS <= len(checked.tokens) <= MAX_WORDS:
            by_task.setdefault(checked.task, []).append(Sentence(i, [t.text for t in checked.tokens], checked.text))
    kept = sum(map(len, by_task.values()))
    work = [
        ((t, name), chunk)
        for t, sentences in by_task.items()
        for chunk in chunks(sentences)
        for name in (lab.models(t) if model == ALL else [model])
        if (t, name) in lab.checkpoints
    ]
    pairs = sum(len(chunk) for _, chunk in work)
    budget, stopped = max_words, ""
    for n, (_, chunk) in enumerate(work):
        budget -= sum(len(s.words) for s in chunk)
        if budget < 0:
            work, stopped = work[:n], "words"
            break
    run = run or (lambda key, sentences: attribution_records(lab.checkpoints[key], sentences))
    records: list[dict] = []
    for done, (key, chunk) in enumerate(work, 1):
        try:
            records += run(key, chunk)
        except BudgetSpent:
            stopped = "time"
            break
        if progress:
            progress(done, len(work))
    if not records:
        raise ExportError("nothing_explained", min=MIN_WORDS, max=MAX_WORDS)
    return Export(records, len(lines) - kept, pairs, pairs - len(records), stopped)


def word_rows(records: list[dict]) -> list[dict]:
    """The records in long form: one row per word with every method's score beside it (and the sentence's AOPC)."""
    return [
        {"id": r["id"], "model": r["model"], "position": j, "word": word, "label": r["label"], "gold": r["gold"]}
        | {m: r[m][j] for m in METHODS}
        | {a: r[a] for a in AOPC_FIELDS}
        for r in records
        for j, word in enumerate(r["words"])
    ]


def card(title: str, lang: str, source: str, records: list[dict], skipped: int) -> str:
    """The dataset card: YAML front matter (both files as configs) and what each field means."""
    models = sorted({r["model"] for r in records})
    methods = ", ".join(f"`{m}`" for m in METHODS)
    return "\n".join(
        [
            "---",
            f"pretty_name: {json.dumps(title)}",
            f"language:\n- {lang}",
            "task_categories:\n- text-classification",
            "tags:\n- explainability\n- attributions",
            "configs:",
            f"- config_name: sentences\n  data_files: {JSONL}\n  default: true",
            f"- config_name: words\n  data_files: {CSV}",
            "---",
            "",
            f"# {title}",
            "",
            f"Word attributions of {len(records)} (sentence, model) pairs: {len({r['id'] for r in records})} sentences "
            f"of {source}, explained by {', '.join(models)}; {skipped} sentences outside {MIN_WORDS}..{MAX_WORDS} "
            "words left out. Each model explains its own predicted class.",
            "",
            "```python",
            "from datasets import load_dataset",
            f'sentences = load_dataset("json", data_files="{JSONL}", split="train")',
            "```",
            "",
            f"## `{JSONL}` (one record per sentence and model)",
            "",
            "- `id`: the sentence's position in its split or file; `task`, `model`: the checkpoint; `text`, `words`",
            "- `gold`: the gold label (null without one); `label`: the prediction; `confidence`: its probability; "
            "`probs`: every class's, in the task's label order",
            f"- {methods}: one score per word (positive: supports `label`); occlusion in probability, the gradient "
            "methods in the label's logit",
            "- `aopc_<method>`: the sentence's area over the probability-drop curve when its words are deleted in the "
            "method's order (higher: more faithful)",
            "",
            f"## `{CSV}` (one row per word)",
            "",
            f"`id`, `model`, `position`, `word`, `label`, `gold`, {methods} (the word's scores) and the sentence's "
            "`aopc_<method>`. A word or label that starts with `=`, `+`, `-`, `@`, a tab or a carriage return has a "
            f"single quote in front here (a spreadsheet would run it as a formula); `{JSONL}` has it as it is.",
            "",
        ]
    )


def neutralised(row: dict) -> dict:
    """A CSV row whose text cells cannot start a formula (FORMULA_START); numbers stay numbers."""
    return {k: f"'{v}" if isinstance(v, str) and v.startswith(FORMULA_START) else v for k, v in row.items()}


def write_export(records: list[dict], out: str | Path, card_text: str) -> list[Path]:
    """attributions.jsonl, words.csv and README.md in `out`; their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / JSONL, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    rows = word_rows(records)
    with open(out / CSV, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, WORD_FIELDS)
        writer.writeheader()
        writer.writerows(map(neutralised, rows))
    (out / CARD).write_text(card_text, encoding="utf-8")
    return [out / JSONL, out / CSV, out / CARD]
