"""`make evaluate-all`: every checkpoint against its task's test set -> <task>/<model>/evaluation.json
(core.analysis.dataset_view), the manifest updated, and reports/treebank.md + reports/treebank.json (the numbers, the
length-bucket curve, and the Treebank tab's server time).

    python -m tools.evaluate_all [--checkpoints checkpoints] [--data-dir D] [--force] [--docs reports]

A task whose files are all current (computed from the weights loaded now, every model of the task in
the disagreement list) is skipped unless --force. One torch thread: it runs beside other work on a
2-core machine (about 2 minutes for the shipped set; the SST phrase level is 45,900 distinct phrases).
"""

import argparse
import json
import logging
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from core.analysis.dataset_view import SLICES, evaluate_task, read_evaluation, write_evaluation
from core.analysis.treebank import SST_TASKS, Treebank, TreebankError
from core.checkpoints.checkpoint import CheckpointError
from core.checkpoints.hub import BUNDLED, display_path
from core.checkpoints.manifest import write_manifest
from core.data import PROJECT_ROOT, DataError, data_dir, load_task
from core.data.sst import load_sst_trees
from core.predict import Lab
from service.lab import ServedLab
from tools.git import git_commit
from tools.probes import machine

log = logging.getLogger("tools.evaluate_all")
TIMED_SENTENCES = 30  # random test sentences timed as "switch sentence", besides every one of 40+ words


def current(lab: Lab, task: str) -> bool:
    views = [read_evaluation(lab.checkpoints, task, m) for m in lab.models(task)]
    return all(
        v.status == "ok"
        and not v.disagreement_stale
        and set(v.evaluation["disagreement"]["models"]) == set(lab.models(task))
        for v in views
    )


def evaluate_all(root: Path, data: str | None = None, force: bool = False) -> dict[str, float]:
    """Write every stale or missing evaluation.json under `root`, then the manifest; {task: seconds} of
    the tasks computed."""
    lab = Lab.load(root, prefer="bundled")
    if lab.errors:
        raise CheckpointError("; ".join(f"{where}: {message}" for where, message in lab.errors.items()))
    seconds = {}
    for task_name in lab.tasks():
        if not force and current(lab, task_name):
            log.info("%s: evaluation.json current for every model (--force recomputes)", task_name)
            continue
        start = time.perf_counter()
        task = load_task(task_name, data)
        trees = load_sst_trees(data_dir(data), "test") if task_name in SST_TASKS else None
        checkpoints = {m: lab.checkpoints[(task_name, m)] for m in lab.models(task_name)}
        for model, evaluation in evaluate_task(checkpoints, task, trees).items():
            path = write_evaluation(checkpoints[model].path, evaluation)
            log.info(
                "%s/%s: sentences %.4f%s -> %s",
                task_name,
                model,
                evaluation["sentences"]["accuracy"],
                f", all phrases {evaluation['phrases']['accuracy']:.4f}" if evaluation["phrases"] else "",
                display_path(path),
            )
        seconds[task_name] = time.perf_counter() - start
    write_manifest(root)
    return seconds


def measure(lab: ServedLab, treebank: Treebank) -> dict:
    """The Treebank tab's callbacks as the server runs them (figures included): opening the tab, and
    switching sentence (random test sentences, and every test sentence of 40 words or more)."""
    from demo.treebank_outputs import Filters, dataset_outputs, search_choices, tree_outputs  # the tab's own outputs

    task = "sst5" if "sst5" in lab.tasks() else next(t for t in lab.tasks() if t in SST_TASKS)
    tree_outputs(lab, treebank, "test", 0, task, "en")  # warm-up: first-call allocations
    start, cpu = time.perf_counter(), time.process_time()  # the tab's first visit: picker, dataset view, first tree
    search_choices(treebank, Filters("test"), "en")
    dataset_outputs(lab, task, lab.models(task)[0], "en")
    tree_outputs(lab, treebank, "test", 0, task, "en")
    opening, opening_cpu = time.perf_counter() - start, time.process_time() - cpu
    rng = random.Random(0)
    trees = treebank.trees["test"]
    timed = {
        "random": rng.sample(range(len(trees)), min(TIMED_SENTENCES, len(trees))),
        "40+ words": [i for i, t in enumerate(trees) if len(t.words) >= 40],
    }
    result = {"task": task, "open_tab_s": round(opening, 4), "open_tab_cpu_s": round(opening_cpu, 4)}
    for name, indices in timed.items():
        times, cpu_times = [], []
        for i in indices:
            start, cpu = time.perf_counter(), time.process_time()
            tree_outputs(lab, treebank, "test", i, task, "en")
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu)
        if times:
            result[name] = {
                "sentences": len(times),
                "median_s": round(statistics.median(times), 4),
                "max_s": round(max(times), 4),
                "median_cpu_s": round(statistics.median(cpu_times), 4),
                "max_cpu_s": round(max(cpu_times), 4),
                "max_words": max(len(trees[i].words) for i in indices),
            }
    return result


def render(lab: Lab, timing: dict | None, root: str, load: str) -> str:
    lines = [
        "# Treebank and dataset view",
        "",
        "Written by `make evaluate-all` (`python -m tools.evaluate_all`); do not edit by hand. Every number is "
        "read from the checkpoints' `evaluation.json` (core.analysis.dataset_view), the files the Treebank tab shows.",
        "",
        f"Checkpoints: `{root}`. Commit: `{git_commit() or 'unknown'}`. Machine: {machine()}; load average "
        f"{load} while it ran. Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.",
        "",
    ]
    for task in lab.tasks():
        views = {m: read_evaluation(lab.checkpoints, task, m) for m in lab.models(task)}
        ok = {m: v for m, v in views.items() if v.status == "ok"}
        if not ok:
            continue
        first = next(iter(ok.values())).evaluation
        unit = first["length_unit"]
        lines += [
            f"## {task}",
            "",
            "| model | sentences (root) | all phrases | " + " | ".join(SLICES[1:]) + " |",
            "|---|---:|---:|" + "---:|" * (len(SLICES) - 1),
        ]
        for m, v in ok.items():
            e = v.evaluation
            phrases = f"{100 * e['phrases']['accuracy']:.2f}" if e["phrases"] else "–"
            slices = [
                f"{100 * e['slices'][s]['accuracy']:.1f} (n={e['slices'][s]['n']})" if e["slices"][s]["n"] else "–"
                for s in SLICES[1:]
            ]
            lines.append(f"| {m} | {100 * e['sentences']['accuracy']:.2f} | {phrases} | " + " | ".join(slices) + " |")
        buckets = [b["bucket"] for b in next(iter(ok.values())).buckets]
        measured = "every labelled test phrase, as Socher et al. 2013, Fig. 4" if unit == "phrase" else "test sentences"
        lines += [
            "",
            f"Accuracy (%) by {unit} length in words ({measured}):",
            "",
            "| model | " + " | ".join(buckets) + " |",
            "|---|" + "---:|" * len(buckets),
        ]
        counts = {b["bucket"]: b["n"] for b in next(iter(ok.values())).buckets}
        for m, v in ok.items():
            lines.append(f"| {m} | " + " | ".join(f"{100 * b['accuracy']:.1f}" for b in v.buckets) + " |")
        lines += ["| *n* | " + " | ".join(str(counts[b]) for b in buckets) + " |", ""]
    if timing:
        lines += [
            "## Server time of the Treebank tab",
            "",
            f"Task {timing['task']}, every model of it, SVG figures included (the tab's own callbacks, "
            "`demo/tabs/treebank.py`), one torch thread; wall time, and the process's CPU time, which other "
            "work on the machine does not inflate:",
            "",
            f"- opening the tab (the picker, the dataset view, the first tree): **{timing['open_tab_s']:.3f} s** "
            f"(CPU {timing['open_tab_cpu_s']:.3f} s)",
        ]
        for name in ("random", "40+ words"):
            if name in timing:
                t = timing[name]
                lines.append(
                    f"- switching sentence, {name} ({t['sentences']} test sentences, up to {t['max_words']} "
                    f"words): median **{t['median_s']:.3f} s**, max {t['max_s']:.3f} s "
                    f"(CPU: median {t['median_cpu_s']:.3f} s, max {t['max_cpu_s']:.3f} s)"
                )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    parser = argparse.ArgumentParser(prog="python -m tools.evaluate_all", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", default=str(BUNDLED), help="the checkpoints folder")
    parser.add_argument("--data-dir", default=None, help="where the datasets are (default: the project's data folder)")
    parser.add_argument("--force", action="store_true", help="recompute every task, current or not")
    parser.add_argument("--docs", default=str(PROJECT_ROOT / "reports"), help="where treebank.md/json go ('' : none)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    root = Path(args.checkpoints)
    try:
        seconds = evaluate_all(root, args.data_dir, args.force)
        if not args.docs:
            return 0
        lab = ServedLab.load(root, prefer="bundled")
        try:
            timing = measure(lab, Treebank.load(args.data_dir)) if any(t in SST_TASKS for t in lab.tasks()) else None
        except TreebankError as err:
            log.warning("no timing: %s", err)
            timing = None
    except (CheckpointError, DataError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out = Path(args.docs)
    out.mkdir(parents=True, exist_ok=True)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    (out / "treebank.md").write_text(render(lab, timing, display_path(root), load), encoding="utf-8")
    record = out / "treebank.json"
    # the tasks skipped as current keep the seconds of the run that computed them
    earlier = json.loads(record.read_text(encoding="utf-8")).get("evaluate_seconds", {}) if record.is_file() else {}
    summary = {
        "machine": machine(),
        "load_average": load,
        "commit": git_commit(),
        "evaluate_seconds": {**earlier, **{task: round(s, 1) for task, s in seconds.items()}},
        "timing": timing,
    }
    record.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out / 'treebank.md'} and {out / 'treebank.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
