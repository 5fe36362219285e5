"""Accuracy and training speed from stored runs: every runs/**/metrics.json that core.training.train wrote,
grouped by task, phrase regime, model, variant and vectors, next to the papers' numbers. It trains nothing."""

import dataclasses
import hashlib
import json
import logging
import statistics
from collections.abc import Collection
from pathlib import Path

from core.checkpoints.hub import display_path
from core.data.classic import CLASSIC
from core.data.tasks import TASKS
from core.models import PAPER_MODELS, model_class
from core.models.papers import find_reported, papers
from core.training.config import resolve_recipe
from core.training.recipes import load_recipe
from core.training.train import TrainConfig

log = logging.getLogger("tools.bench")

MODEL_ORDER = PAPER_MODELS + ["nbow"]
SST = ("sst5", "sst2")
SEEDS_WANTED = {"sst5": 3, "sst2": 3}  # the issue: 3 seeds on SST, 1 allowed elsewhere

# settings that do not make a variant: the run's identity, and the epoch budget (early stopping on dev
# decides the epoch that counts; the command column shows the budget)
RUN_IDENTITY = {
    "model",
    "task",
    "phrases",
    "seed",
    "fold",
    "out",
    "resume",
    "data_dir",
    "threads",
    "progress",
    "set",
    "epochs",
    "patience",
}


def field_defaults(cls) -> dict:
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


SWEEPS = "sweeps"  # runs/sweeps/<name>/: tools.research.sweep's trials and best.json


def _short(value) -> str:
    if isinstance(value, list):
        return ",".join(_short(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, float) else str(value)  # repr: the shortest exact float


def _vectors_parts(metrics: dict) -> tuple[str, str]:
    """(vectors file name or 'random', its PCA reduction or '') of the vectors a run started from."""
    coverage = metrics.get("vectors")
    if not coverage:
        return "random", ""
    reduced = (
        f"PCA {coverage['pca_from']}-d to {metrics.get('model_config', {}).get('embed_dim', '?')}-d"
        if coverage.get("pca_from")
        else ""
    )
    return Path(str(coverage.get("file", "?"))).stem, reduced


def vectors_source(metrics: dict) -> str:
    """Which word vectors a run started from: a vectors file's name (and the PCA reduction), or 'random'.
    With --vectors auto this depends on what existed at training time (and on the model's embedding size)."""
    return ", ".join(part for part in _vectors_parts(metrics) if part)


def vectors_used(members: list[dict]) -> str:
    """The runs' vectors with their vocabulary coverage (a range when folds or seeds differ)."""
    name, reduced = _vectors_parts(members[0])
    if name == "random":
        return name
    fractions = sorted({round(100 * m["vectors"].get("fraction", 0)) for m in members})
    covered = f"{fractions[0]}" + (f"–{fractions[-1]}" if len(fractions) > 1 else "")
    return f"{name} ({covered}% of vocab{', ' + reduced if reduced else ''})"


def variant_label(metrics: dict) -> str:
    """'' for the model's defaults, else the settings that differ, e.g. 'vectors=none · lr=0.05'."""
    if metrics.get("read_from") == "sst5":
        return " · ".join(filter(None, [READ_FROM_SST5, variant_label({**metrics, "task": "sst5", "read_from": ""})]))
    train, model_cfg, key = metrics.get("train_config", {}), metrics.get("model_config", {}), metrics.get("model", "")
    try:
        cls = model_class(key)
    except ValueError:
        return "unknown model"
    parts = []
    used_vectors = metrics.get("vectors") is not None
    # what the trainer stores when nothing is set: the model's recipe resolved as core.training.config does it
    defaults = dataclasses.asdict(resolve_recipe(TrainConfig(model=key)))
    for name in (f.name for f in dataclasses.fields(TrainConfig)):
        if name not in RUN_IDENTITY and name in train and train[name] != defaults.get(name):
            parts.append(f"{name}={_short(train[name])}")
    config_defaults = field_defaults(cls.config_class) | load_recipe(key).preset(metrics.get("task", ""))
    explicit = {pair.partition("=")[0] for pair in train.get("set", [])}
    for name, value in model_cfg.items():
        if name in ("vocab_size", "num_classes"):
            continue
        if name == "freeze_embeddings" and not used_vectors and name not in explicit:
            continue  # the trainer trains random vectors itself when there are no pretrained ones
        if config_defaults.get(name) != value:
            parts.append(f"{name}={_short(value)}")
    return " · ".join(parts)


def settings_digest(metrics: dict) -> str:
    """A digest of every setting a run trained with, apart from its identity and budget (RUN_IDENTITY), with
    a setting its trainer did not know yet read as that setting's default (the behaviour it had then). Two rows
    with the same digest are the same configuration whatever the defaults were when each report was written."""
    train, model_cfg = metrics.get("train_config", {}), metrics.get("model_config", {})
    train_defaults = field_defaults(TrainConfig)
    settings = {
        "train": {n: train.get(n, train_defaults[n]) for n in train_defaults if n not in RUN_IDENTITY},
        "model": {n: v for n, v in model_cfg.items() if n not in ("vocab_size", "num_classes")},
        "read_from": metrics.get("read_from", ""),
    }
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def train_command(train: dict) -> str:
    """The core.training.train command line equivalent to a stored train_config."""
    defaults = field_defaults(TrainConfig)
    parts = ["python -m core.training.train", f"--model {train.get('model')}", f"--task {train.get('task')}"]
    if train.get("phrases"):
        parts.append("--phrases")
    parts.append(f"--seed {train.get('seed')}")
    for name, value in train.items():
        if name in ("model", "task", "phrases", "seed", "out", "resume", "progress", "set") or value == defaults.get(
            name
        ):
            continue
        flag = "--" + name.replace("_", "-")
        parts.append((flag if value else "--no-" + flag[2:]) if isinstance(value, bool) else f"{flag} {_short(value)}")
    parts += [f"--set {pair}" for pair in train.get("set", [])]
    return " ".join(parts)


def load_sweeps(root: Path) -> list[dict]:
    """The best trial of every hyper-parameter sweep under `root`/sweeps (tools.research.sweep's best.json)."""
    records = []
    for path in sorted((root / SWEEPS).glob("*/best.json")):
        try:
            records.append(json.loads(path.read_text(encoding="utf-8")) | {"path": str(path)})
        except (OSError, ValueError) as err:
            log.warning("skipping %s: %s", path, err)
    return records


def load_runs(root: Path) -> tuple[list[dict], list[str]]:
    """Every finished run's metrics.json under `root` (not the copies in best/), and unfinished run dirs.
    A sweep's trials (runs/sweeps/) are a search, not results: `load_sweeps` reads each sweep's best."""
    runs: list[dict] = []
    unfinished: list[str] = []
    if not root.is_dir():
        return runs, unfinished
    for path in sorted(root.rglob("metrics.json")):
        if path.parent.name in ("best", "state") or SWEEPS in path.relative_to(root).parts:
            continue
        try:
            metrics = json.loads(path.read_text(encoding="utf-8"))
            metrics["test"]["accuracy"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            log.warning("skipping %s: %s", path, err)
            continue
        metrics["path"], metrics["mtime"] = str(path.parent), path.stat().st_mtime
        # runs/timing/: epochs run only to time them on a quiet machine; they count for speed, not accuracy
        metrics["timing_only"] = "timing" in path.relative_to(root).parts
        runs.append(metrics)
    for log_file in sorted(root.rglob("log.jsonl")):
        if SWEEPS not in log_file.relative_to(root).parts and not (log_file.parent / "metrics.json").is_file():
            unfinished.append(str(log_file.parent))
    return runs, unfinished


READ_FROM_SST5 = "read from SST-5 (p3+p4 > p0+p1)"


def read_as_sst2(metrics: dict) -> dict:
    """An SST-5 run's SST-2 reading (the trainer's `as_sst2`) as a run of its own on SST-2: a variant of
    the SST-2 entry whose dev and test are the binary accuracies of the SST-5 model chosen on SST-5 dev."""
    read = metrics["as_sst2"]
    return {
        **{k: v for k, v in metrics.items() if k not in ("as_sst2", "extra_tests")},
        "task": "sst2",
        "read_from": "sst5",
        "test": read["test"],
        "dev_accuracy": read["dev"]["accuracy"],
    }


def _phrases(metrics: dict) -> bool:
    return bool(metrics.get("phrases")) and metrics.get("task") in SST


def _paper(model: str, task: str, phrases: bool) -> tuple[float, str, bool] | None:
    """(number, source, comparable): comparable is False when the paper used the other phrase regime
    (configs/papers.toml)."""
    found = find_reported(model, task, phrases)
    if not found:
        return None
    reported, comparable = found
    other = "" if comparable else ", with phrases" if not phrases else ", root labels"
    return reported.accuracy, reported.source + other, comparable


def _order(key: tuple) -> tuple:
    """Table order of a group (task, phrases, model, variant, vectors): by task, phrases first, model, defaults
    first."""
    task, phrases, model, variant, vectors = key
    tasks = list(TASKS)
    return (
        tasks.index(task) if task in tasks else 99,
        not phrases,
        MODEL_ORDER.index(model) if model in MODEL_ORDER else 99,
        variant != "",
        variant,
        vectors,
    )


def _groups(runs: list[dict]) -> list[tuple[tuple, list[dict]]]:
    """Runs grouped by (task, phrases, model, variant, vectors used), in table order."""
    groups: dict[tuple, list[dict]] = {}
    for m in runs:
        groups.setdefault((m["task"], _phrases(m), m["model"], variant_label(m), vectors_source(m)), []).append(m)
    return sorted(groups.items(), key=lambda kv: _order(kv[0]))


def _row_key(row: dict) -> tuple:
    return row["task"], row["phrases"], row["model"], row["variant"], row["vectors"]


def split_row(row: dict) -> list[dict]:
    """A row's runs one by one: seed, fold, path, test, dev, command, commit and dev curve (or None)."""
    many_folds = len(row["folds"]) > 1
    return [
        {
            "seed": seed,
            "fold": fold,
            "path": path,
            "test": test,
            "dev": dev,
            "command": command,
            "commit": commit,
            "curve": row.get("dev_curves", {}).get(curve_label(seed, fold, many_folds)),
        }
        for seed, fold, path, test, dev, command, commit in zip(
            row["seeds"],
            row["run_folds"],
            row["paths"],
            row["accuracies"],
            row["devs"],
            row["commands"],
            row["run_commits"],
            strict=True,
        )
    ]


def merge_rows(now: dict, before: dict, read: set[str], report: str) -> dict:
    """`now` (a group measured now) with the runs of `before` (the same group in an earlier report) that are not
    here: neither their folder nor their seed and fold was read now. The row then lists every run and says which
    came from the earlier report (`carried_paths`, `merged_from`). `now` as it is when there is none, when the two
    were trained with other settings (a row's variant label names the settings that differ from the defaults of
    its day, and defaults change) or their settings are unknown (an older report, whose rows also lack the per-run
    lists), or when the row has a ranking loss, which is not kept per run."""
    if before.get("settings") != now["settings"] or "ranking_loss" in now:
        return now
    mine = split_row(now)
    here = {(r["seed"], r["fold"]) for r in mine}
    extra = [r for r in split_row(before) if r["path"] not in read and (r["seed"], r["fold"]) not in here]
    if not extra:
        return now
    members = sorted(mine + extra, key=lambda r: (r["seed"], r["fold"]))
    tests = [r["test"] for r in members]
    many_folds = len({r["fold"] for r in members}) > 1
    row = dict(
        now,
        n=len(members),
        seeds=[r["seed"] for r in members],
        folds=sorted({r["fold"] for r in members}),
        accuracies=tests,
        mean=statistics.fmean(tests),
        std=statistics.stdev(tests) if len(tests) > 1 else None,
        dev_mean=statistics.fmean(r["dev"] for r in members),
        devs=[r["dev"] for r in members],
        run_folds=[r["fold"] for r in members],
        commits=sorted({r["commit"] for r in members}),
        run_commits=[r["commit"] for r in members],
        commands=[r["command"] for r in members],
        paths=[r["path"] for r in members],
        merged_from=before.get("carried_from") or before.get("merged_from") or report,
        carried_paths=[r["path"] for r in extra],
    )
    if row.get("delta") is not None:
        row["delta"] = row["mean"] - row["paper"]
    if "dev_curves" in now or "dev_curves" in before:
        row["dev_curves"] = {curve_label(r["seed"], r["fold"], many_folds): r["curve"] for r in members if r["curve"]}
    return row


def carry_over(rows: list[dict], previous: dict, read: Collection[str] = frozenset()) -> list[dict]:
    """`rows` plus the accuracy rows of an earlier report (its benchmarks.json) whose runs are not under the runs
    folder now, so that a machine without the older runs does not erase measured history. A carried row keeps
    every number it had and says which report measured it (`carried_from`); a row any of whose run folders was
    read now is dropped (`read`: every run folder loaded, also those a longer rerun of the same seed superseded,
    and every folder of `rows`). A group measured now takes in the runs of its earlier row that are not here
    (merge_rows), so that re-running one seed does not drop the others. Rows come back in table order."""
    report = previous.get("generated", "an earlier report")
    earlier = previous.get("accuracy", {}).get("rows", [])
    paths_now = set(read) | {p for r in rows for p in r["paths"]}
    before = {_row_key(r): r for r in earlier}
    merged = [merge_rows(r, before[_row_key(r)], paths_now, report) if _row_key(r) in before else r for r in rows]
    groups_now = {_row_key(r) for r in rows}
    kept = [
        dict(r, carried_from=r.get("carried_from") or report)
        for r in earlier
        if _row_key(r) not in groups_now and not paths_now & set(r["paths"])
    ]
    return sorted(merged + kept, key=lambda r: _order(_row_key(r)))


def complete(row: dict) -> bool:
    """Whether a row carries the evidence a paper bar is judged on: all 10 folds of a cross-validated task
    (MR, CR, SUBJ, MPQA), else at least 3 seeds (the issue: mean of 3 seeds, test at best dev)."""
    return len(row["folds"]) >= 10 if row["task"] in CLASSIC else len(set(row["seeds"])) >= 3


def paper_bars(rows: list[dict]) -> list[dict]:
    """One entry per paper number that has comparable rows: the complete row with the best mean dev accuracy
    (the variant a user would pick without looking at test; `row`: its 1-based index in `rows`, None when no row
    is complete), the paper's number and source (with its own mean ± std and the best public reproduction), and how
    many variants and runs were tried for it."""
    bars = []
    for model, reported in ((m, r) for m, p in papers().items() for r in p.reported):
        task, regime = reported.task, reported.phrases
        tried = [
            (i, r)
            for i, r in enumerate(rows, 1)
            if (r["model"], r["task"]) == (model, task)
            and r.get("delta") is not None
            and (regime is None or r["phrases"] == regime)
        ]
        if not tried:
            continue
        full = [(i, r) for i, r in tried if complete(r)]
        bars.append(
            {
                "model": model,
                "task": task,
                "phrases": tried[0][1]["phrases"],
                "paper": reported.accuracy,
                "source": reported.source,
                "mean_std": reported.mean_std,
                # raw record only: the markdown reads configs/papers.toml, so --render shows its latest searches
                "reproduction": dataclasses.asdict(reported.reproduction),
                "variants": len(tried),
                "runs": sum(r["n"] for _, r in tried),
                # on a tie in shown dev (the same runs under another budget) the defaults stand
                "row": max(full, key=lambda ir: (round(ir[1]["dev_mean"], 2), ir[1]["variant"] == ""))[0]
                if full
                else None,
            }
        )
    return bars


def _latest_per_seed(members: list[dict]) -> list[dict]:
    """A rerun of the same seed and fold in another directory (say, with a longer epoch budget)
    replaces the earlier one: the newest metrics.json counts, so no seed is counted twice."""
    latest: dict[tuple, dict] = {}
    for m in sorted(members, key=lambda m: m.get("mtime", 0.0)):
        latest[(m.get("seed"), m.get("train_config", {}).get("fold", 0))] = m
    return list(latest.values())


def dev_curve(run_dir: str) -> tuple[list[float], list[float]]:
    """Dev accuracy (%) at every evaluation of a run, from its log.jsonl: evaluation i of n in epoch e sits at
    x = e - 1 + i / n epochs (one per epoch: at x = e). Empty when the log is gone."""
    xs: list[float] = []
    ys: list[float] = []
    path = Path(run_dir) / "log.jsonl"
    if not path.is_file():
        return xs, ys
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        evals = entry.get("dev_evals") or [entry["dev_accuracy"]]
        xs += [entry["epoch"] - 1 + i / len(evals) for i in range(1, len(evals) + 1)]
        ys += [100 * dev for dev in evals]
    return xs, ys


def accuracy_table(runs: list[dict]) -> list[dict]:
    """One row per group of runs, SST-5 runs' SST-2 readings (`read_as_sst2`) as groups of their own."""
    rows = []
    readings = [read_as_sst2(m) for m in runs if "as_sst2" in m]
    for (task, phrases, model, variant, _), members in _groups(runs + readings):
        members = _latest_per_seed(members)
        members.sort(key=lambda m: (m.get("seed", 0), m.get("train_config", {}).get("fold", 0)))
        accs = [100 * m["test"]["accuracy"] for m in members]
        row = {
            "task": task,
            "phrases": phrases,
            "model": model,
            "variant": variant,
            "vectors": vectors_used(members),
            "n": len(accs),
            "seeds": [m.get("seed") for m in members],
            "folds": sorted({m.get("train_config", {}).get("fold", 0) for m in members}),
            "accuracies": accs,
            "mean": statistics.fmean(accs),
            "std": statistics.stdev(accs) if len(accs) > 1 else None,
            "seeds_wanted": SEEDS_WANTED.get(task, 1),
            "dev_mean": statistics.fmean(100 * m["dev_accuracy"] for m in members),
            "devs": [100 * m["dev_accuracy"] for m in members],
            "run_folds": [m.get("train_config", {}).get("fold", 0) for m in members],
            "commits": sorted({m.get("commit") or "unknown" for m in members}),
            "run_commits": [m.get("commit") or "unknown" for m in members],
            "commands": [
                m.get("command") or train_command(m.get("train_config", {})) + "  (reconstructed)" for m in members
            ],
            "paths": [display_path(m["path"]) for m in members],
            "split": members[0].get("split", ""),
            "settings": settings_digest(members[0]),
        }
        ranking = [
            m["test"]["ranking_loss"]
            for m in members
            if "ranking_loss" in m["test"] and m.get("model_config", {}).get("head") == "ordinal"
        ]
        if len(ranking) == len(members):  # the ordinal head's metric (mRNN §4.2): mean |predicted - gold| class
            row["ranking_loss"] = statistics.fmean(ranking)
        reported = _paper(model, task, phrases)
        if reported:
            row["paper"], row["paper_source"], comparable = reported
            row["delta"] = row["mean"] - reported[0] if comparable else None
        if row.get("delta") is not None and row["delta"] < 0:  # a missed bar is shown with its dev curves
            # an SST-2 reading has no SST-2 curve: its log holds the SST-5 run's dev evaluations
            curves = {
                run_label(m, len(row["folds"]) > 1): dev_curve(m["path"]) for m in members if not m.get("read_from")
            }
            row["dev_curves"] = {label: curve for label, curve in curves.items() if curve[0]}
        rows.append(row)
    return rows


def curve_label(seed, fold: int, many_folds: bool) -> str:
    return f"seed {seed}" + (f" fold {fold}" if many_folds else "")


def run_label(metrics: dict, folds: bool) -> str:
    return curve_label(metrics.get("seed"), metrics.get("train_config", {}).get("fold", 0), folds)


def curve_rows(rows: list[dict]) -> list[tuple[str, dict]]:
    """(table id, row) of the rows below their paper's number that have dev curves to draw."""
    return [(f"A{i}", row) for i, row in enumerate(rows, 1) if row.get("dev_curves")]


def missing_runs(rows: list[dict]) -> list[dict]:
    """The default-variant entries the issue asks for that have fewer runs than wanted."""
    wanted = [(task, task in SST, model) for task in TASKS for model in MODEL_ORDER]
    wanted += [("sst5", False, "tensor_cnn"), ("sst2", False, "tensor_cnn")]  # Lei's root-label numbers and 28 s/epoch
    have: dict[tuple, set] = {}
    for r in rows:
        if r["variant"] == "":
            have.setdefault((r["task"], r["phrases"], r["model"]), set()).update(r["seeds"])
    out = []
    for task, phrases, model in wanted:
        seeds = [s for s in range(1, SEEDS_WANTED.get(task, 1) + 1) if s not in have.get((task, phrases, model), set())]
        if seeds and len(have.get((task, phrases, model), ())) < SEEDS_WANTED.get(task, 1):
            base = (
                f"python -m core.training.train --model {model} --task {task}{' --phrases' if phrases else ''} --seed"
            )
            command = (
                f"{base} {seeds[0]}" if len(seeds) == 1 else f"for s in {' '.join(map(str, seeds))}; do {base} $s; done"
            )
            out.append({"task": task, "phrases": phrases, "model": model, "missing_seeds": seeds, "command": command})
    return out


def speed_table(runs: list[dict]) -> list[dict]:
    """One row per group and setting: the dedicated timing runs (runs/timing/: one epoch on an otherwise idle
    machine) apart from the training runs, which often shared the cores with other jobs; and per torch threads."""
    rows = []
    for (task, phrases, model, variant, _), group in _groups([m for m in runs if m.get("epoch_seconds")]):
        settings: dict[tuple, list[dict]] = {}
        for m in group:
            threads = m.get("torch_threads") or m.get("train_config", {}).get("threads") or 0
            settings.setdefault((not m.get("timing_only"), threads), []).append(m)
        for (training, threads), members in sorted(settings.items()):
            seconds = [s for m in members for s in m["epoch_seconds"]]
            examples = statistics.median(m.get("train_examples", 0) for m in members)
            median = statistics.median(seconds)
            row = {
                "task": task,
                "phrases": phrases,
                "model": model,
                "variant": variant,
                "vectors": vectors_used(members),
                "runs": len(members),
                "timing_only": not training,
                "epochs_timed": len(seconds),
                "median_s": median,
                "min_s": min(seconds),
                "max_s": max(seconds),
                "train_examples": examples,
                "s_per_10k": 1e4 * median / examples if examples else None,
                "threads": threads,
            }
            found = find_reported(model, task, phrases)
            if found and found[1] and found[0].epoch_seconds:
                row["paper_s"], row["ratio"] = found[0].epoch_seconds, median / found[0].epoch_seconds
            rows.append(row)
    return rows
