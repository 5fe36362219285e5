"""Behavioural probes: CheckList-style test suites (Ribeiro et al. 2020) run against every model of a task.

    python -m core.analysis.probes en            # the pass-rate table of probes/en.toml on the loaded checkpoints
    python -m core.analysis.probes zh --json

A suite is data (probes/<suite>.toml): lexicons, capabilities (each worded in English and Chinese) and tests (each
named in English, and in Chinese by its `zh`) of three types. A minimum-functionality test ("mft") expects a label
or a polarity ("positive" is {positive, very positive} on SST-5); an invariance test ("inv") expects the same label
for a sentence and its variant (another name, a neutral filler, other punctuation); a directional test ("dir")
expects the expected sentiment (core.views.sentiment_scores: sum_s s p(s) on 5 classes, P(positive) on 2) to move
"up" or "down" from the sentence to its variant by more than a small margin. Templates hold {slots} named after
lexicons (a trailing digit draws again from the same lexicon: {pos} {pos2}); expansion is the cartesian product of
the slots' values, capped per test by a seeded sample, in a stable order.

The runner encodes every distinct sentence once, then runs each model's forward pass over padded batches
of all of them (no explanations), and scores the cases. It returns plain data; the front end words it.
"""

import argparse
import csv
import functools
import io
import json
import random
import re
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from core.analysis.batched import predict_batched
from core.data import PROJECT_ROOT
from core.notices import NoticeError
from core.predict import MAX_WORDS, Lab
from core.text import detect_language, tokenize
from core.views import sentiment_scores
from core.wire import plain

SUITE_DIR = PROJECT_ROOT / "probes"
TEST_TYPES = ("mft", "inv", "dir")
DIRECTIONS = {"up": 1, "down": -1}
BATCH_SIZE = 512
SLOT = re.compile(r"\{([a-z_]+?)(\d*)\}")

# user-case problems as codes (demo/i18n.py words them in Chinese), like core.predict's notices
PROBE_NOTICE_TEXT = {
    "no_cases": "No cases: write one per line, `sentence,expectation` or `sentence,variant,up|down|same`.",
    "bad_columns": (
        "Line {line}: expected 2 or 3 columns separated by commas or tabs, found {found}; "
        'put a sentence that holds commas in double quotes: "Slow, but moving",positive.'
    ),
    "bad_expectation": "Line {line}: '{value}' is not an expectation for task {task}; use one of: {allowed}.",
    "bad_direction": "Line {line}: '{value}' is not a direction; use up, down or same.",
    "too_many_cases": "At most {max_cases} cases at once; {found} were given.",
    "no_sentiment": "Task {task} has no positive/negative classes ({labels}): probes need a sentiment task.",
    "unknown_task": "No model is loaded for task {task}; available: {available}.",
    "unknown_model": "Model {model} is not loaded for task {task}; available: {available}.",
    "unknown_expectation": "Test {test}: '{value}' is not an expectation for task {task}; use one of: {allowed}.",
    "long_sentence": "Line {line}: a sentence of {chars} characters; at most {max_chars}.",
    "long_case": "{test}: a sentence of {words} words; at most {max_words}, as in the Lab.",
    "too_many_words": "The cases hold more than {max_words} words in all, the limit for one run.",
    "file_too_large": "The file is {size_kb} KB; at most {max_kb} KB of cases.",
    "long_cell": "Line {line}: a cell of more than {max_chars} characters.",
    "bad_file": "Line {line} cannot be read as CSV ({error}).",
    "file_gone": "The uploaded file is no longer here (uploads are kept for a while only); upload it again.",
}
# the work budget of "Run my cases": every model reads every sentence, so the cases are few and short
MAX_USER_CASES = 500
MAX_CASE_CHARS = 1000  # per sentence, checked before tokenizing; then at most core.predict.MAX_WORDS words each
MAX_CASE_WORDS = 6000  # in all (a bundled suite holds about 10,000 short ones): 5 models read them in about 3 s
MAX_CASES_FILE_BYTES = 2 * MAX_USER_CASES * MAX_CASE_CHARS
CSV_CELL_LIMIT = 131_072  # the csv module's own field limit: it refuses a longer cell before building it


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names the file and the key."""


class ProbeInputError(NoticeError):
    """User cases (or a task) the probes cannot run."""

    TEXT = PROBE_NOTICE_TEXT


@dataclass(frozen=True)
class Case:
    test: str  # the test's name
    capability: str
    type: str  # "mft", "inv" or "dir"
    text: str
    variant: str = ""  # inv and dir: the changed sentence
    expect: str = ""  # mft: a label, a polarity group or "not_<polarity>"; dir: "up" or "down"; inv: ""


@dataclass
class Suite:
    name: str
    lang: str
    task: str  # the task the suite is written for
    capabilities: dict[str, dict[str, str]]  # key -> {"en": ..., "zh": ...}
    tests: list[dict]
    lexicon: dict[str, list[str]]
    seed: int
    max_cases_per_test: int
    dir_margin: float  # fraction of the score's range a directional change must exceed
    path: str = ""

    def expand(self) -> list[Case]:
        return [
            case for test in self.tests for case in expand_test(test, self.lexicon, self.seed, self.max_cases_per_test)
        ]


@dataclass
class CaseResult:
    """One case for one model: the predicted labels and expected sentiments of its sentence(s)."""

    case: Case
    passed: bool
    label: str
    score: float
    variant_label: str = ""
    variant_score: float = 0.0


@dataclass
class Cell:
    """One capability (or test) for one model."""

    passed: int
    total: int
    failures: list[CaseResult] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


@dataclass
class ProbeReport:
    suite: str
    task: str
    lang: str
    labels: list[str]
    score_label: str
    models: list[str]
    capabilities: dict[str, dict[str, str]]  # in the suite's order; key -> wording
    tests: list[dict]  # {"name", "capability", "type"} in the suite's order
    cells: dict[str, dict[str, Cell]]  # capability -> model -> cell
    test_cells: dict[str, dict[str, Cell]]  # test name -> model -> cell
    cases: int
    sentences: int
    seconds: float
    margin: float = 0.0  # the change of the score a directional case must exceed (dir_margin of its range)
    cases_lang: str = ""  # the language the cases are written in: other than `lang`, the models read unknown words

    def to_dict(self, failures: bool = True) -> dict:
        """JSON-ready; `pass_rates[capability][model]` is the table."""

        def cell(c: Cell) -> dict:
            data: dict[str, object] = {"passed": c.passed, "total": c.total, "rate": round(c.rate, 4)}
            if failures:
                data["failures"] = [plain(f) for f in c.failures]
            return data

        return {
            "suite": self.suite,
            "task": self.task,
            "lang": self.lang,
            "labels": self.labels,
            "score_label": self.score_label,
            "models": self.models,
            "capabilities": self.capabilities,
            "tests": self.tests,
            "cases": self.cases,
            "sentences": self.sentences,
            "seconds": round(self.seconds, 3),
            "dir_threshold": round(self.margin, 6),
            "pass_rates": {cap: {m: round(c.rate, 4) for m, c in row.items()} for cap, row in self.cells.items()},
            "cells": {cap: {m: cell(c) for m, c in row.items()} for cap, row in self.cells.items()},
            "test_cells": {t: {m: cell(c) for m, c in row.items()} for t, row in self.test_cells.items()},
        }


# -- suites ----------------------------------------------------------------------------------------------


@functools.cache  # the suites ship with the code: listed once, not on every page load (a link names one)
def suite_names(directory: Path = SUITE_DIR) -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in directory.glob("*.toml")))


def _require(condition: bool, path, key: str, problem: str) -> None:
    if not condition:
        raise SuiteError(f"{path}: {key}: {problem}")


def load_suite(name: str, directory: Path = SUITE_DIR) -> Suite:
    """A shipped suite by name (probes/<name>.toml); only names, so a caller of the API cannot point at a path."""
    if (
        not isinstance(name, str)
        or not re.fullmatch(r"[a-z0-9_]{1,40}", name)
        or not (directory / f"{name}.toml").is_file()
    ):
        raise SuiteError(f"unknown suite {str(name)[:60]!r}; available: {', '.join(suite_names(directory))}")
    return read_suite(directory / f"{name}.toml")


def read_suite(path: str | Path) -> Suite:
    """A suite file, validated: SuiteError names the file and the key."""
    path = Path(path)
    if not path.is_file():
        raise SuiteError(f"{path}: no such suite file")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise SuiteError(f"{path}: not valid TOML ({err})") from None
    for key, kind in (
        ("lang", str),
        ("task", str),
        ("seed", int),
        ("max_cases_per_test", int),
        ("dir_margin", float),
        ("lexicon", dict),
        ("capabilities", dict),
        ("tests", list),
    ):
        _require(isinstance(data.get(key), kind), path, key, f"missing or not a {kind.__name__}")
    lexicon = data["lexicon"]
    for key, words in lexicon.items():
        _require(
            isinstance(words, list) and bool(words) and all(isinstance(w, str) and w for w in words),
            path,
            f"lexicon.{key}",
            "must be a non-empty list of strings",
        )
        _require(len(set(words)) == len(words), path, f"lexicon.{key}", "has duplicates")
    for key, wording in data["capabilities"].items():
        _require(
            isinstance(wording, dict) and all(isinstance(wording.get(l), str) for l in ("en", "zh")),
            path,
            f"capabilities.{key}",
            "needs an 'en' and a 'zh' wording",
        )
    names = set()
    for i, test in enumerate(data["tests"]):
        where = f"tests[{i}]"
        _require(isinstance(test, dict), path, where, "must be a table")
        _require(
            isinstance(test.get("name"), str) and test["name"] not in names,
            path,
            f"{where}.name",
            "missing or not unique",
        )
        names.add(test["name"])
        where = f"tests[{i}] ({test['name']})"
        _require(
            test.get("capability") in data["capabilities"],
            path,
            f"{where}.capability",
            f"'{test.get('capability')}' is not one of capabilities: {', '.join(data['capabilities'])}",
        )
        _require(test.get("type") in TEST_TYPES, path, f"{where}.type", f"must be one of {', '.join(TEST_TYPES)}")
        _require(isinstance(test.get("zh", ""), str), path, f"{where}.zh", "must be a string (the name in Chinese)")
        templates = ["template"] if test["type"] == "mft" else ["base", "variant"]
        for key in templates:
            _require(isinstance(test.get(key), str) and test[key].strip(), path, f"{where}.{key}", "missing template")
            for lexicon_name, _ in SLOT.findall(test[key]):
                _require(lexicon_name in lexicon, path, f"{where}.{key}", f"slot {{{lexicon_name}}} has no lexicon")
        if test["type"] == "mft":
            _require(isinstance(test.get("expect"), str), path, f"{where}.expect", "missing expectation")
        if test["type"] == "dir":
            _require(test.get("direction") in DIRECTIONS, path, f"{where}.direction", "must be 'up' or 'down'")
    return Suite(
        path.stem,
        data["lang"],
        data["task"],
        data["capabilities"],
        data["tests"],
        lexicon,
        data["seed"],
        data["max_cases_per_test"],
        data["dir_margin"],
        str(path),
    )


def expand_test(test: dict, lexicon: dict[str, list[str]], seed: int, max_cases: int) -> list[Case]:
    """Every filling of the test's slots (a seeded sample of `max_cases` when there are more), in product order.
    A slot filled twice in one sentence ({pos} ... {pos}) takes the same word; {pos2} draws again."""
    templates = [test["template"]] if test["type"] == "mft" else [test["base"], test["variant"]]
    found = list(dict.fromkeys(match for t in templates for match in SLOT.findall(t)))  # (lexicon key, digit)
    slots = [name + digit for name, digit in found]
    values = [lexicon[name] for name, _ in found]
    total = 1
    for v in values:
        total *= len(v)
    if total > max_cases:  # random.Random(str) is seeded from the string's bytes: the same sample everywhere
        indices: list[int] | range = sorted(random.Random(f"{seed}:{test['name']}").sample(range(total), max_cases))
    else:
        indices = range(total)
    cases = []
    for index in indices:
        filling = {}
        for slot, words in zip(reversed(slots), reversed(values)):  # mixed radix: the last slot varies fastest
            index, digit = divmod(index, len(words))
            filling[slot] = words[digit]
        texts = [SLOT.sub(lambda m: filling[m.group(1) + m.group(2)], t) for t in templates]  # noqa: B023
        texts = [t[0].upper() + t[1:] for t in texts]  # templates may start with a lower-case slot
        expect = test.get("expect", "") if test["type"] == "mft" else test.get("direction", "")
        cases.append(
            Case(test["name"], test["capability"], test["type"], texts[0], texts[1] if len(texts) > 1 else "", expect)
        )
    return list(dict.fromkeys(cases))  # two fillings can read the same (e.g. a word in two lexicons)


# -- expectations ------------------------------------------------------------------------------------------


def polarity_groups(labels: list[str], task: str = "") -> dict[str, set[str]]:
    """What an expectation may name on a task: each label, 'positive' and 'negative' (every label that
    says so: SST-5's 'very positive' too), 'neutral' where there is one, and 'not_<x>' for the others."""
    positive = {l for l in labels if "positive" in l}
    negative = {l for l in labels if "negative" in l}
    if not positive or not negative:
        raise ProbeInputError("no_sentiment", task=task, labels=labels)
    groups = {l: {l} for l in labels}
    groups.update(positive=positive, negative=negative)
    neutral = set(labels) - positive - negative
    if neutral:
        groups["neutral"] = neutral
    groups.update(
        {
            f"not_{name}": set(labels) - members
            for name, members in list(groups.items())
            if name in ("positive", "negative", "neutral")
        }
    )
    return groups


def _expectation(value: str, groups: dict[str, set[str]]) -> str | None:
    """An expectation as typed ("positive", "Not positive", "very positive") as its key in `groups`, or None."""
    value = value.lower()
    return value if value in groups else value.replace(" ", "_") if value.replace(" ", "_") in groups else None


def case_columns(line: str, groups: dict[str, set[str]], number: int = 1) -> list[str]:
    """A typed case line's columns: split at its tabs when it has any (a TSV line, a line from an uploaded file),
    else read as a CSV line, where a field in double quotes may hold commas. A line with no quotes whose last field
    is an expectation is a sentence (commas and all) and that expectation, so "Slow, but moving,positive" needs
    no quotes; a directional case with commas in its sentences does. `number` is the line's, for the error."""
    if "\t" in line:
        return [c.strip() for c in line.split("\t")]
    if '"' not in line:
        sentence, comma, last = line.rpartition(",")
        if comma and _expectation(last.strip(), groups) is not None:
            return [sentence.strip(), last.strip()]
    try:
        return [c.strip() for c in next(csv.reader([line], skipinitialspace=True))]
    except csv.Error as err:
        raise ProbeInputError("bad_file", line=number, error=str(err)) from None


def parse_user_cases(text: str, labels: list[str], task: str) -> list[Case]:
    """Lines `sentence,expectation` (a minimum-functionality case) or `sentence,variant,up|down|same`
    (directional, or invariant for 'same'), separated by commas (CSV quoting) or tabs (case_columns); blank lines
    and lines starting with # are skipped. A CSV upload arrives here as tab-separated text."""
    groups = polarity_groups(labels, task)
    cases = []
    lines = [
        (n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.lstrip().startswith("#")
    ]
    if len(lines) > MAX_USER_CASES:
        raise ProbeInputError("too_many_cases", max_cases=MAX_USER_CASES, found=len(lines))
    for number, line in lines:
        if len(line) > 3 * MAX_CASE_CHARS:  # before reading its columns: no column of it can be short enough
            raise ProbeInputError("long_sentence", line=number, chars=len(line), max_chars=MAX_CASE_CHARS)
        columns = case_columns(line, groups, number)
        if len(columns) not in (2, 3) or not all(columns):
            raise ProbeInputError("bad_columns", line=number, found=len([c for c in columns if c]))
        if (chars := max(len(columns[0]), len(columns[1]) if len(columns) == 3 else 0)) > MAX_CASE_CHARS:
            raise ProbeInputError("long_sentence", line=number, chars=chars, max_chars=MAX_CASE_CHARS)
        if len(columns) == 2:
            if (expect := _expectation(columns[1], groups)) is None:
                raise ProbeInputError(
                    "bad_expectation", line=number, value=columns[1][:40], task=task, allowed=sorted(groups)
                )
            cases.append(Case(f"user {number}", "user", "mft", columns[0], expect=expect))
        else:
            direction = columns[2].lower()
            if direction not in (*DIRECTIONS, "same"):
                raise ProbeInputError("bad_direction", line=number, value=columns[2][:40])
            kind = "inv" if direction == "same" else "dir"
            cases.append(
                Case(f"user {number}", "user", kind, columns[0], columns[1], "" if kind == "inv" else direction)
            )
    if not cases:
        raise ProbeInputError("no_cases")
    return cases


def read_cases_file(path: str | Path) -> str:
    """An uploaded CSV or TSV of cases as tab-separated lines (what parse_user_cases reads), its size checked
    before it is read."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:  # Gradio's upload cache is cleaned (demo/ui.py)
        raise ProbeInputError("file_gone") from None
    if size > MAX_CASES_FILE_BYTES:
        raise ProbeInputError("file_too_large", size_kb=size // 1024, max_kb=MAX_CASES_FILE_BYTES // 1024)
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    if path.suffix.lower() != ".csv":
        return text
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        return "\n".join("\t".join(row) for row in reader)
    except csv.Error as err:
        if "field limit" in str(err):
            raise ProbeInputError("long_cell", line=reader.line_num, max_chars=CSV_CELL_LIMIT) from None
        raise ProbeInputError("bad_file", line=reader.line_num, error=str(err)) from None


# -- running -----------------------------------------------------------------------------------------------


def class_probabilities(
    checkpoint, words: list[list[str]], batch_size: int = BATCH_SIZE
) -> tuple[list[list[float]], list[int]]:
    """One model over many tokenized sentences: (class probabilities, predicted label ids), in input order."""
    return predict_batched(checkpoint.model, [checkpoint.vocab.encode(w) for w in words], batch_size)


def score_cases(
    cases: list[Case],
    outputs: dict[str, dict[str, tuple[str, float]]],
    labels: list[str],
    task: str,
    score_range: tuple[float, float],
    dir_margin: float,
) -> dict[str, list[CaseResult]]:
    """Each model's verdict on each case. `outputs[model][sentence]` is (predicted label, expected sentiment)."""
    groups = polarity_groups(labels, task)
    margin = dir_margin * (score_range[1] - score_range[0])
    results = {}
    for model, by_text in outputs.items():
        rows = []
        for case in cases:
            label, score = by_text[case.text]
            variant_label, variant_score = by_text[case.variant] if case.variant else ("", 0.0)
            if case.type == "mft":
                passed = label in groups[case.expect]
            elif case.type == "inv":
                passed = label == variant_label
            else:
                passed = DIRECTIONS[case.expect] * (variant_score - score) > margin
            rows.append(CaseResult(case, passed, label, score, variant_label, variant_score))
        results[model] = rows
    return results


def _cells(results: dict[str, list[CaseResult]], key) -> dict[str, dict[str, Cell]]:
    cells: dict[str, dict[str, Cell]] = {}
    for model, rows in results.items():
        for row in rows:
            cell = cells.setdefault(key(row.case), {}).setdefault(model, Cell(0, 0))
            cell.total += 1
            cell.passed += row.passed
            if not row.passed:
                cell.failures.append(row)
    return cells


def run_cases(
    lab: Lab,
    cases: list[Case],
    task: str,
    models: list[str] | None = None,
    dir_margin: float = 0.02,
    suite: str = "user",
    capabilities: dict[str, dict[str, str]] | None = None,
    max_total_words: int = 0,
) -> ProbeReport:
    """`cases` against `models` (every model of `task` by default), batched: each distinct sentence is
    tokenized once and each model reads all of them in a few forward passes. A sentence may hold
    core.predict.MAX_WORDS words, all of them together `max_total_words` (0: no limit)."""
    started = time.perf_counter()
    if not lab.models(task):
        raise ProbeInputError("unknown_task", task=task, available=lab.tasks())
    models = lab.models(task) if models is None else models
    for model in models:
        if (task, model) not in lab.checkpoints:
            raise ProbeInputError("unknown_model", model=model, task=task, available=lab.models(task))
    checkpoints = {m: lab.checkpoints[(task, m)] for m in models}
    first = next(iter(checkpoints.values()))
    labels, lang = first.meta["labels"], first.meta.get("lang", "en")
    groups = polarity_groups(labels, task)  # fails early on a task without sentiment classes
    for case in cases:
        if case.type == "mft" and case.expect not in groups:
            raise ProbeInputError(
                "unknown_expectation", test=case.test, value=case.expect, task=task, allowed=sorted(groups)
            )
    first_case: dict[str, Case] = {}
    for case in cases:
        for text in (case.text, case.variant):
            if text:
                first_case.setdefault(text, case)
    sentences, words = list(first_case), []
    for sentence in sentences:  # checked as they are tokenized: a file over the budget costs no more than the budget
        tokens = [t.text for t in tokenize(sentence, lang)] or ["."]  # a probe sentence is never empty
        if len(tokens) > MAX_WORDS:  # /predict's budget per sentence; every model reads every one
            raise ProbeInputError("long_case", test=first_case[sentence].test, words=len(tokens), max_words=MAX_WORDS)
        words.append(tokens)
        if max_total_words and sum(map(len, words)) > max_total_words:
            raise ProbeInputError("too_many_words", max_words=max_total_words)
    outputs, score_label, score_range = {}, "", (0.0, 1.0)
    for model, checkpoint in checkpoints.items():
        probs, label_ids = class_probabilities(checkpoint, words)
        scores, score_label, score_range = sentiment_scores(probs, labels)
        outputs[model] = {s: (labels[l], x) for s, l, x in zip(sentences, label_ids, scores)}
    results = score_cases(cases, outputs, labels, task, score_range, dir_margin)
    if capabilities is None:
        capabilities = {c.capability: {"en": c.capability, "zh": c.capability} for c in cases}
    tests = list({c.test: {"name": c.test, "capability": c.capability, "type": c.type} for c in cases}.values())
    return ProbeReport(
        suite,
        task,
        lang,
        labels,
        score_label,
        models,
        capabilities,
        tests,
        _cells(results, lambda c: c.capability),
        _cells(results, lambda c: c.test),
        len(cases),
        len(sentences),
        time.perf_counter() - started,
        dir_margin * (score_range[1] - score_range[0]),
        detect_language(" ".join(sentences)),
    )


def run_text_cases(
    lab: Lab, text: str, task: str, capabilities: dict[str, dict[str, str]] | None = None
) -> ProbeReport:
    """A user's own cases (`sentence<TAB>expectation` lines, see parse_user_cases) on `task` against every
    model loaded for it."""
    if not lab.models(task):
        raise ProbeInputError("unknown_task", task=task, available=lab.tasks())
    labels = lab.checkpoints[(task, lab.models(task)[0])].meta["labels"]
    return run_cases(
        lab, parse_user_cases(text, labels, task), task, capabilities=capabilities, max_total_words=MAX_CASE_WORDS
    )


def run_suite(lab: Lab, suite: Suite | str, task: str | None = None, models: list[str] | None = None) -> ProbeReport:
    """A suite (or its name) on `task` (default: the suite's own task)."""
    suite = suite if isinstance(suite, Suite) else load_suite(suite)  # a name: read_suite(path) for a file
    return run_cases(lab, suite.expand(), task or suite.task, models, suite.dir_margin, suite.name, suite.capabilities)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.analysis.probes", description="Run a probe suite on the loaded checkpoints."
    )
    parser.add_argument("suite", help=f"a suite name ({', '.join(suite_names())}) or a .toml path")
    parser.add_argument("--task", default=None, help="default: the suite's task")
    parser.add_argument("--checkpoints", default=None, help="a checkpoint directory (default: Hub, else bundled)")
    parser.add_argument("--json", action="store_true", help="print the report (with failures) as JSON")
    args = parser.parse_args(argv)
    try:
        suite = read_suite(args.suite) if args.suite.endswith(".toml") else load_suite(args.suite)
        report = run_suite(Lab.load(args.checkpoints), suite, args.task)
    except (SuiteError, ProbeInputError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
        return 0
    print(
        f"{report.suite} on {report.task}: {report.cases} cases, {report.sentences} sentences, {report.seconds:.2f} s"
    )
    print(f"{'capability':<24}" + "".join(f"{m:>12}" for m in report.models))
    for capability, row in report.cells.items():
        print(f"{capability:<24}" + "".join(f"{row[m].rate:>12.1%}" for m in report.models))
    return 0


if __name__ == "__main__":
    sys.exit(main())
