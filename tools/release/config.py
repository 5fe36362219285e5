"""configs/bundled.toml: which runs become the bundled checkpoints, and the size budget they share.

Each [[checkpoint]] entry {model, task, phrases, seed, args, max_vocab} names one core.training.train run;
[bundle] sets max_total_mb (the whole folder), max_file_mb (any one weights file), the vocabulary
bounds and the cards' library_name and license. read_bundle_config refuses unknown keys, duplicate
entries and train arguments that would move a run out of its default folder.
"""

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from core.checkpoints.manifest import check_name
from core.data import PROJECT_ROOT
from core.training.train import parse_args

BUNDLE_CONFIG = PROJECT_ROOT / "configs" / "bundled.toml"
RESERVED_ARGS = ("--model", "--task", "--seed", "--phrases", "--no-phrases", "--resume", "--no-resume")


@dataclass
class Entry:
    model: str
    task: str
    phrases: bool = False
    seed: int = 1
    args: list[str] = field(default_factory=list)  # extra `python -m core.training.train` arguments
    max_vocab: int = 0  # 0: the [bundle] max_vocab

    @property
    def key(self) -> str:
        return f"{self.task}/{self.model}"

    def train_argv(self, data_dir: str | None = None) -> list[str]:
        argv = ["--model", self.model, "--task", self.task, "--seed", str(self.seed)]
        argv += ["--phrases"] if self.phrases else []
        return argv + list(self.args) + (["--data-dir", data_dir] if data_dir else [])

    def train_config(self, data_dir: str | None = None, runs: Path | None = None):
        """The run's TrainConfig; `runs` replaces the default runs/ folder (same sub-folders)."""
        try:
            cfg = parse_args(self.train_argv(data_dir))
        except SystemExit:  # argparse already printed what is wrong
            raise ValueError(f"{self.key}: invalid args {self.args}") from None
        if runs is not None:
            default = cfg.output_dir()
            cfg.out = str(Path(runs) / default.parent.name / default.name)
        return cfg


@dataclass
class BundleConfig:
    entries: list[Entry]
    max_total_mb: float = 40.0
    max_file_mb: float = 8.0  # any one model.safetensors (the repository's limit on a tracked file)
    max_vocab: int = 30000
    min_vocab: int = 1000
    # words of each language's shared vectors set: one number for all, or a table ({en = 50000, zh = 0});
    # 0 (or a language the table lacks): no set, and that language's fixed-vector runs keep their own rows
    vectors_rows: int | dict[str, int] = 0
    library_name: str = ""  # a library the Hub knows, or empty
    license: str = ""
    path: Path = BUNDLE_CONFIG

    def shared_rows(self, lang: str) -> int:
        rows = self.vectors_rows
        return rows.get(lang, 0) if isinstance(rows, dict) else rows


def read_bundle_config(path: str | Path = BUNDLE_CONFIG) -> BundleConfig:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path} does not exist") from None
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{path}: {err}") from None
    settings = data.get("bundle", {})
    known = {"max_total_mb", "max_file_mb", "max_vocab", "min_vocab", "vectors_rows", "library_name", "license"}
    if unknown := sorted(set(settings) - known) or sorted(set(data) - {"bundle", "checkpoint"}):
        raise ValueError(f"{path}: unknown keys {unknown}")
    entries, seen = [], set()
    entry_fields = {f.name: f.type for f in dataclasses.fields(Entry)}
    for i, raw in enumerate(data.get("checkpoint", [])):
        where = f"{path}: [[checkpoint]] #{i + 1}"
        if unknown := sorted(set(raw) - set(entry_fields)):
            raise ValueError(f"{where}: unknown keys {unknown}")
        try:
            entry = Entry(**raw)
            check_name("model", entry.model)
            check_name("task", entry.task)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{where}: {err}") from None
        if (
            not isinstance(entry.phrases, bool)
            or not isinstance(entry.seed, int)
            or not isinstance(entry.max_vocab, int)
            or not isinstance(entry.args, list)
            or not all(isinstance(a, str) for a in entry.args)
        ):
            raise ValueError(f"{where}: phrases is true/false, seed and max_vocab integers, args a list of strings")
        if bad := [a for a in entry.args if a.split("=")[0] in RESERVED_ARGS or a == "--out" or a.startswith("--out=")]:
            raise ValueError(
                f"{where}: {bad} cannot be in args (model, task, seed and phrases are fields; "
                "runs go to their default folder)"
            )
        if entry.key in seen:
            raise ValueError(f"{where}: {entry.key} is listed twice")
        seen.add(entry.key)
        entries.append(entry)
    if not entries:
        raise ValueError(f"{path}: no [[checkpoint]] entries")
    try:
        config = BundleConfig(entries, path=path, **settings)
    except TypeError as err:
        raise ValueError(f"{path}: {err}") from None
    rows = config.vectors_rows
    if (
        not 0 < config.min_vocab <= config.max_vocab
        or config.max_total_mb <= 0
        or config.max_file_mb <= 0
        or not all(isinstance(n, int) and n >= 0 for n in (rows.values() if isinstance(rows, dict) else [rows]))
    ):
        raise ValueError(
            f"{path}: need 0 < min_vocab <= max_vocab, max_total_mb > 0, max_file_mb > 0 "
            "and vectors_rows >= 0 (each language's)"
        )
    return config
