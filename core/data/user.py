"""A user's own labelled file as a task: CSV, TSV or JSONL with a text column and a label column.

    rows = read_rows("reviews.csv", text_column="review", label_column="stars")   # checked, not tokenized
    task = load_user_task("reviews.csv", "user_reviews_1a2b3c4d5e6f7a8b", "review", "stars")

`read_rows` makes every check and is fast (no tokenizer), so the app runs it while the user waits and the
worker process tokenizes later (`load_user_task`). The columns are auto-detected when the names say so
(text/review/sentence..., label/stars/class...) or when there are exactly two; the language is English or
Chinese, decided per file by the texts' characters (core.text.detect_language); a `split` column with
train/dev/test values is used as it is, else a seeded 80/10/10 split is made. A bad file raises
UserDataError with a code and its parameters (the row, the column), worded in English here and by demo/i18n.py
in Chinese; nothing is written.
"""

import csv
import hashlib
import io
import json
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path

from core.data.base import DataError, Example, TaskData
from core.notices import NoticeError
from core.text import detect_language, tokenize

FORMATS = {".csv": ",", ".tsv": "\t", ".txt": "\t", ".jsonl": None}
TEXT_NAMES = (
    "text",
    "sentence",
    "review",
    "content",
    "comment",
    "body",
    "title",
    "document",
    "文本",
    "内容",
    "评论",
    "句子",
)
LABEL_NAMES = (
    "label",
    "labels",
    "class",
    "category",
    "stars",
    "rating",
    "sentiment",
    "target",
    "y",
    "标签",
    "类别",
    "情感",
)
SPLIT_NAMES = {"train": "train", "dev": "dev", "valid": "dev", "validation": "dev", "test": "test"}
SPLIT_SEED = 13  # the split must not change between a run and its resumption
MAX_TEXT_CHARS = 1000  # a longer text is cut (Chinese reviews run to thousands of characters)
MIN_ROWS = 10  # fewer leave nothing to evaluate on
MAX_LABELS = 100  # more distinct labels than this is almost surely the wrong column
# caps checked while reading, before a value is parsed or kept: a hostile file costs no more than a good one
MAX_CELL_CHARS = 131_072  # one CSV cell or JSONL line (the csv module's own field limit); texts are cut to 1000
MAX_NAME_CHARS = 100  # a label or column name; every job.json, status and prediction repeats them
MAX_COLUMNS = 100

# English wording of the codes; demo/i18n.py words the same codes in Chinese
USER_DATA_TEXT = {
    "unknown_format": "'{name}' is not a CSV, TSV or JSONL file (the name must end in .csv, .tsv or .jsonl)",
    "file_gone": "the uploaded file is no longer here (uploads are kept for a while only); upload it again",
    "too_large": "the file is {size_mb:.1f} MB; the limit is {max_mb:.1f} MB",
    "bad_encoding": "row {row} is not UTF-8 text; save the file as UTF-8 and upload it again",
    "empty_file": "the file holds no rows",
    "bad_json": "row {row} is not a JSON object ({error})",
    "missing_column": "there is no column '{column}'; the columns are: {columns}",
    "choose_columns": (
        "cannot tell which column is the text and which the label; choose them (the columns are: {columns})"
    ),
    "same_column": "the text and the label must be different columns (both are '{column}')",
    "empty_text": "row {row} has an empty text",
    "empty_label": "row {row} has no label",
    "bad_split": "row {row}: split '{value}' is not train, dev or test",
    "missing_split": "the split column has no '{split}' rows",
    "one_label": "every row has the label '{label}': a classifier needs at least two labels",
    "too_many_labels": "column '{column}' has {count} different labels (at most {max_labels}); is it the label column?",
    "too_few_rows": "the file has {rows} rows; at least {min_rows} are needed",
    "too_many_rows": "the file has more than {max_rows} rows, the limit here",
    "long_cell": "row {row} holds more than {max_chars} characters in one cell (or one JSONL line)",
    "bad_csv": "row {row} cannot be read as {format} ({error})",
    "too_deep": "row {row} is a JSON object nested too deep; each line must be a flat object of texts and labels",
    "long_name": "a column name is {length} characters long; at most {max_chars}",
    "too_many_columns": "the file has {count} columns; at most {max_columns}",
    "long_label": "row {row}: the label is {length} characters long (at most {max_chars}); is it the label column?",
}


class UserDataError(NoticeError, DataError):
    """A user file we cannot train on: `code` (a key of USER_DATA_TEXT) and its `params`."""

    TEXT = USER_DATA_TEXT


@dataclass
class Table:
    """A user file as read: its column names and its rows, (row number in the file, {column: value})."""

    columns: list[str]
    rows: list[tuple[int, dict]]


@dataclass
class UserRows:
    """A user file, checked: one text, label and split (or "") per row, in file order."""

    text_column: str
    label_column: str
    texts: list[str]
    labels: list[str]
    splits: list[str]  # "train" / "dev" / "test" from the file's split column, or all ""
    label_names: list[str]  # sorted: numerically when every label is a number (stars 1..5)
    lang: str  # 'en' or 'zh'


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise UserDataError("bad_encoding", row=raw[: err.start].count(b"\n") + 1) from None


def _check_columns(columns: list[str]) -> None:
    if len(columns) > MAX_COLUMNS:
        raise UserDataError("too_many_columns", count=len(columns), max_columns=MAX_COLUMNS)
    longest = max(map(len, columns), default=0)
    if longest > MAX_NAME_CHARS:
        raise UserDataError("long_name", length=longest, max_chars=MAX_NAME_CHARS)


def _records(path: Path, text: str, max_rows: int) -> Table:
    """The file's columns and rows, counted while they are read: the row past `max_rows` (0: no limit)
    stops the reading."""
    delimiter = FORMATS[path.suffix.lower()]
    rows: list[tuple[int, dict]] = []
    columns: dict[str, None] = {}  # an ordered set: the columns in order of first appearance

    def add(number: int, record: dict) -> None:
        rows.append((number, record))
        if max_rows and len(rows) > max_rows:
            raise UserDataError("too_many_rows", max_rows=max_rows)

    if delimiter is None:  # JSONL: one object per line
        for number, line in enumerate(io.StringIO(text, newline="\n"), 1):
            if not line.strip():
                continue
            if len(line) > MAX_CELL_CHARS:
                raise UserDataError("long_cell", row=number, max_chars=MAX_CELL_CHARS)
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise UserDataError("bad_json", row=number, error=err.msg) from None
            except RecursionError:  # nested past the parser's depth limit (within a line already capped)
                raise UserDataError("too_deep", row=number) from None
            if not isinstance(record, dict):
                raise UserDataError("bad_json", row=number, error=type(record).__name__)
            if record.keys() - columns.keys():
                columns.update(dict.fromkeys(record))
                _check_columns(list(columns))
            add(number, {k: "" if v is None else str(v) for k, v in record.items()})
        return Table(list(columns), rows)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:  # the csv module refuses a cell over its field limit (MAX_CELL_CHARS) before it builds it
        header = next(reader, None)
        if header is None:
            return Table([], [])
        header = [name.strip() for name in header]
        _check_columns(header)
        for values in reader:
            if any(v.strip() for v in values):
                add(reader.line_num, dict(zip(header, values)))
    except csv.Error as err:
        if "field limit" in str(err):
            raise UserDataError("long_cell", row=reader.line_num, max_chars=MAX_CELL_CHARS) from None
        raise UserDataError("bad_csv", row=reader.line_num, format=path.suffix[1:].upper(), error=str(err)) from None
    return Table(header, rows)


def read_table(path: str | Path, max_bytes: int = 0, max_rows: int = 0) -> Table:
    """The file's column names (the header, or every key of a JSONL file) and rows, with the checks of the
    file as a whole (format, size, encoding, cell and name lengths, rows). `max_bytes` / `max_rows`: 0 = no limit."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise UserDataError("unknown_format", name=path.name)
    try:
        size = path.stat().st_size
    except FileNotFoundError:  # Gradio's upload cache is cleaned (demo/ui.py)
        raise UserDataError("file_gone") from None
    if max_bytes and size > max_bytes:
        raise UserDataError("too_large", size_mb=size / 2**20, max_mb=max_bytes / 2**20)
    table = _records(path, _decode(path.read_bytes()), max_rows)
    if not table.rows:
        raise UserDataError("empty_file")
    return table


def _find(columns: list[str], names: tuple[str, ...]) -> str | None:
    by_name = {c.lower(): c for c in columns}
    return next((by_name[n] for n in names if n in by_name), None)


def choose_columns(columns: list[str], rows, text_column: str, label_column: str) -> tuple[str, str]:
    for column in (text_column, label_column):
        if column and column not in columns:
            raise UserDataError("missing_column", column=column[:MAX_NAME_CHARS], columns=", ".join(columns))
    candidates = [c for c in columns if c.lower() != "split"]
    text_column = text_column or _find(candidates, TEXT_NAMES) or ""
    label_column = label_column or _find([c for c in candidates if c != text_column], LABEL_NAMES) or ""
    rest = [c for c in candidates if c not in (text_column, label_column)]
    if len(rest) == 1 and bool(text_column) != bool(label_column):  # one named, the other the only one left
        text_column, label_column = text_column or rest[0], label_column or rest[0]
    elif len(rest) == 2 and not text_column and not label_column:  # two columns: the text is the longer one
        mean = {c: sum(len(r.get(c, "")) for _, r in rows) for c in rest}
        text_column, label_column = sorted(rest, key=lambda c: mean[c], reverse=True)
    if not text_column or not label_column:
        raise UserDataError("choose_columns", columns=", ".join(columns))
    if text_column == label_column:
        raise UserDataError("same_column", column=text_column)
    return text_column, label_column


def _label_order(labels: set[str]) -> list[str]:
    """Numerically when every label is a finite number (stars 1..5), else as text. A total order, the same in
    every process: equal numbers ("1", "01") go by their text, where a tie would follow the set's order, which
    follows string hashing (per process), and a resumed worker would swap the labels its model learnt."""
    try:
        numbers = {label: float(label) for label in labels}
    except ValueError:
        return sorted(labels)
    if not all(math.isfinite(n) for n in numbers.values()):  # nan compares false with everything
        return sorted(labels)
    return sorted(labels, key=lambda label: (numbers[label], label))


def read_rows(
    path: str | Path, text_column: str = "", label_column: str = "", max_bytes: int = 0, max_rows: int = 0
) -> UserRows:
    """Every check of a user file (format, size, encoding, columns, empty cells, labels, split, rows);
    UserDataError at the first problem. `max_bytes` / `max_rows`: 0 = no limit."""
    return check_rows(read_table(path, max_bytes, max_rows), text_column, label_column)


def check_rows(table: Table, text_column: str = "", label_column: str = "") -> UserRows:
    """The checks of a file already read (read_table) on its chosen or detected text and label columns."""
    columns, rows = table.columns, table.rows
    text_column, label_column = choose_columns(columns, rows, text_column, label_column)
    split_column = _find(columns, ("split",))
    texts, labels, splits = [], [], []
    for number, row in rows:
        text, label = (row.get(text_column) or "").strip(), (row.get(label_column) or "").strip()
        if not text:
            raise UserDataError("empty_text", row=number)
        if not label:
            raise UserDataError("empty_label", row=number)
        if len(label) > MAX_NAME_CHARS:
            raise UserDataError("long_label", row=number, length=len(label), max_chars=MAX_NAME_CHARS)
        split = (row.get(split_column) or "").strip().lower() if split_column else ""
        if split_column and split not in SPLIT_NAMES:
            raise UserDataError("bad_split", row=number, value=split[:40])
        texts.append(text[:MAX_TEXT_CHARS])
        labels.append(label)
        splits.append(SPLIT_NAMES.get(split, ""))
    if len(rows) < MIN_ROWS:
        raise UserDataError("too_few_rows", rows=len(rows), min_rows=MIN_ROWS)
    names = set(labels)
    if len(names) == 1:
        raise UserDataError("one_label", label=labels[0])
    if len(names) > MAX_LABELS:
        raise UserDataError("too_many_labels", column=label_column, count=len(names), max_labels=MAX_LABELS)
    if split_column:
        for split in ("train", "dev", "test"):
            if split not in splits:
                raise UserDataError("missing_split", split=split)
    chinese = sum(detect_language(t) == "zh" for t in texts)
    return UserRows(
        text_column,
        label_column,
        texts,
        labels,
        splits,
        _label_order(names),
        "zh" if chinese * 2 > len(texts) else "en",
    )


def _seeded_splits(n: int) -> list[str]:
    """80/10/10, seeded; dev and test get at least one row each."""
    order = list(range(n))
    random.Random(SPLIT_SEED).shuffle(order)
    held = max(1, n // 10)
    splits = ["train"] * n
    for i in order[:held]:
        splits[i] = "test"
    for i in order[held : 2 * held]:
        splits[i] = "dev"
    return splits


def load_user_task(path: str | Path, name: str, text_column: str = "", label_column: str = "") -> TaskData:
    """The file as a TaskData named `name`: checked (read_rows), tokenized in its language, split."""
    rows = read_rows(path, text_column, label_column)
    splits = rows.splits if rows.splits[0] else _seeded_splits(len(rows.texts))
    index = {label: i for i, label in enumerate(rows.label_names)}
    parts: dict[str, list[Example]] = {"train": [], "dev": [], "test": []}
    for text, label, split in zip(rows.texts, rows.labels, splits):
        words = tuple(t.text for t in tokenize(text, rows.lang))
        if words:  # punctuation or emoji alone: nothing a model can read
            parts[split].append(Example(words, index[label]))
    note = f"{Path(path).name}: text '{rows.text_column}', label '{rows.label_column}', " + (
        "the file's own split" if rows.splits[0] else f"seeded 80/10/10 split (seed {SPLIT_SEED})"
    )
    return TaskData(name, rows.lang, rows.label_names, parts["train"], parts["dev"], parts["test"], split_note=note)


def user_task_name(path: str | Path, text_column: str = "", label_column: str = "", owner: str = "") -> str:
    """`user_<file stem>_<16 hex>`: the same file and columns (as read_rows chose them) of the same owner
    give the same task, so a second model trained on it joins the first; another owner's run of
    the same file is another task. 64 bits of digest: nobody can grind a file into another owner's task name."""
    path = Path(path)
    stem = re.sub(r"[^a-z0-9]+", "_", path.stem.lower()).strip("_")[:30] or "data"
    mark = f"\0{text_column}\0{label_column}" + (f"\0{owner}" if owner else "")  # a public task keeps its name
    digest = hashlib.sha256(path.read_bytes() + mark.encode()).hexdigest()[:16]
    return f"user_{stem}_{digest}"
