"""What every dataset reader shares: the project and data directories, the example and task types,
and the one-line DataError. The readers import these from here, not from the `core.data` package,
which imports the readers (through its task registry) to re-export `TASKS` and `load_task`."""

import os
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


class DataError(Exception):
    """A dataset that is missing or malformed; the message is one line a user can act on."""


@dataclass(frozen=True)
class Example:
    words: tuple[str, ...]
    label: int
    is_phrase: bool = False  # a labelled sub-phrase of a training tree (SST), not a whole sentence


@dataclass
class TaskData:
    name: str
    lang: str  # 'en' or 'zh'
    labels: list[str]  # class names, index = label id
    train: list[Example]
    dev: list[Example]
    test: list[Example]
    extra_tests: dict[str, list[Example]] = field(default_factory=dict)  # e.g. out-of-domain test sets
    split_note: str = ""  # how train/dev/test were made, for reports


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Resolve the data directory: argument, then $DATA_DIR, then ../shared/data."""
    chosen = explicit or os.environ.get("DATA_DIR")
    if chosen:
        if not Path(chosen).is_dir():
            raise DataError(f"data directory {chosen} does not exist (check --data-dir or DATA_DIR)")
        return Path(chosen)
    default = PROJECT_ROOT.parent / "shared" / "data"
    if default.is_dir():
        return default
    raise DataError(f"no data directory: pass --data-dir or set DATA_DIR (looked for {default})")


def require_file(root: Path, relative: str, source: str) -> Path:
    path = root / relative
    if not path.is_file():
        raise DataError(f"missing data file {path}; get it from {source}")
    if path.stat().st_size == 0:
        raise DataError(f"data file {path} is empty; get it again from {source}")
    return path


def read_lines(path: Path) -> list[str]:
    """Lines of a text file; some classic sets (MR, SUBJ, TREC) are Latin-1, not UTF-8."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    # split on "\n" only: str.splitlines() would also break at \x85 and \x0c inside Latin-1 text
    return [line.rstrip("\r") for line in text.split("\n") if line.strip()]
