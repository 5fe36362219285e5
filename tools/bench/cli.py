"""Benchmarks: accuracy against the papers, training speed, inference latency, scaling and memory.

    python -m tools.bench                       # make bench: reports/benchmarks.{md,json}, reports/scaling.svg
    python -m tools.bench --smoke               # make bench-smoke: seconds, on tiny models it trains itself
    python -m tools.bench --sections accuracy,speed    # only re-read the stored runs
    python -m tools.bench --render              # re-write the markdown and SVGs from the stored benchmarks.json

What each section measures (the markdown repeats this next to the numbers):
- accuracy: reads every runs/**/metrics.json that core.training.train wrote; groups runs by task, phrase regime,
  model and a variant label (every train/model setting that differs from the model's defaults);
  test accuracy mean ± sample std over seeds, the paper's number and our delta, and the command and
  commit of each run. It trains nothing: missing entries are listed with the command that makes them.
  The rows of the previous <out>/benchmarks.json whose runs are not here are kept, marked with the
  report that measured them (runs/ is not in git, so another machine would otherwise erase them); a group
  re-run here in part keeps its earlier runs of the other seeds when both were trained with the same settings.
  Paper bars: each paper number beside the complete entry (3 seeds, or 10 folds) that is best on mean dev.
- speed: the same runs' per-epoch training seconds (`epoch_seconds`, training only, no evaluation),
  median over all epochs of all seeds, and the ratio to Lei et al.'s 28 s / 445 s per epoch.
- inference: per checkpoint of one task (checkpoints/<task>/<model>/): p50/p95 latency of one
  sentence as a bare forward (pad + forward) and as `Lab.predict` (tokenize + forward + word curve +
  occlusion + views), and sentences/s for padded batches of 64.
- scaling: bare-forward latency of one sentence of 5..400 words (random in-vocabulary ids, best of N,
  with the fitted exponent k of latency ~ L^k) and `Lab.predict` latency up to the app's 300-word cap.
- memory: one fresh subprocess per model; its peak resident set (VmHWM in /proc/self/status) after each
  stage: imports + tokenizer, checkpoint load, forward at 400 words, a batch of 64, and Lab.predict at
  300 words. Peaks only grow, so each stage's number includes the earlier ones. (getrusage's ru_maxrss
  is not used on Linux: a child inherits its parent's peak through fork/exec, which hides small models.)
- app: start app.py as its own process on the same checkpoints and time `/compare` ("all five"), one
  call at a time, through the REST API (httpx) and through gradio_client, on the task's sentences and
  on one word (the round trip's fixed cost).
- machine: CPU, cores, torch threads, load average, library versions, commit.
Only measured (or stored) numbers are written; anything missing is reported as "not run".
"""

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from core.checkpoints.hub import display_path
from core.data import PROJECT_ROOT
from core.predict import MAX_WORDS, Lab
from tools.bench.accuracy import (
    accuracy_table,
    carry_over,
    curve_rows,
    load_runs,
    load_sweeps,
    missing_runs,
    paper_bars,
    speed_table,
)
from tools.bench.inference import bench_sentences, measure_inference, measure_scaling
from tools.bench.machine import machine_info
from tools.bench.markdown import RUNS_FILE, render_markdown, render_runs
from tools.bench.memory import measure_memory, memory_probe
from tools.bench.served import measure_app
from tools.bench.smoke import train_smoke_runs, write_synthetic_sst
from tools.bench.steps import measure_steps
from tools.bench.svg import render_dev_curves, render_svg

# Repetitions and time budgets. A measurement stops at its budget once it has min_reps samples;
# scale_budget_s is per model for the bare-forward curve and per length for Lab.predict.
FULL = dict(
    forward_reps=200,
    predict_reps=100,
    min_reps=20,
    batch_reps=10,
    budget_s=10.0,
    scale_reps=30,
    scale_budget_s=10.0,
    lengths=[5, 10, 20, 50, 100, 200, 400],
    predict_lengths=[5, 20, 50, 100, 200, 300],
    predict_cap_s=30.0,
    app_reps=100,
    sentences=200,
    step_lengths=[7, 20, 50],
    step_reps=30,
    step_budget_s=3.0,
)
SMOKE = dict(
    forward_reps=10,
    predict_reps=3,
    min_reps=3,
    batch_reps=2,
    budget_s=1.0,
    scale_reps=3,
    scale_budget_s=0.3,
    lengths=[5, 20, 100],
    predict_lengths=[5, 20],
    predict_cap_s=5.0,
    app_reps=3,
    sentences=16,
    step_lengths=[7, 20],
    step_reps=3,
    step_budget_s=0.3,
)

SECTIONS = ("accuracy", "speed", "inference", "steps", "scaling", "memory", "app")


def run(args, previous: dict | None = None) -> dict:
    """The report; `previous` (the benchmarks.json it replaces) lends its accuracy rows whose runs are not here,
    and every section this run does not select (`carried_sections`: each one's date), so that re-reading the
    runs with `--sections accuracy` keeps the timings."""
    started = time.perf_counter()
    torch.set_num_threads(args.threads)
    settings = dict(SMOKE if args.smoke else FULL, smoke=args.smoke, threads=args.threads, task=args.task)
    sections = set(args.sections.split(",")) if args.sections else set(SECTIONS)
    if unknown := sections - set(SECTIONS):
        raise SystemExit(f"unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
    seconds: dict[str, float] = {}  # wall time per section, to keep `make bench` inside its budget
    data_dir = args.data_dir
    if args.smoke and (args.runs is None or args.checkpoints is None):
        scratch = Path(tempfile.mkdtemp(prefix="bench-smoke-"))
        os.environ.setdefault("LAB_CACHE_DIR", str(scratch / "cache"))
        data_dir = data_dir or str(write_synthetic_sst(scratch / "data"))
        runs_dir, checkpoints_dir = train_smoke_runs(Path(data_dir), scratch)
        settings["scratch"] = str(scratch)  # removed by main() once the outputs are written
        seconds["smoke_training"] = time.perf_counter() - started
    else:
        runs_dir = Path(args.runs or PROJECT_ROOT / "runs")
        checkpoints_dir = Path(args.checkpoints or PROJECT_ROOT / "checkpoints")
        if data_dir is None and not args.smoke:
            data_dir = ""  # the default data directory
    report = {
        "command": " ".join(["python -m tools.bench", *args.argv]),
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_info(),
        "settings": settings,
        "runs_dir": display_path(runs_dir),
        "checkpoints_dir": display_path(checkpoints_dir),
        "task": args.task,
        "sections": sorted(sections),
        "section_seconds": seconds,
    }

    def timed(name, fn, *fn_args):
        t0 = time.perf_counter()
        report[name] = fn(*fn_args)
        seconds[name] = time.perf_counter() - t0

    if sections & {"accuracy", "speed"}:
        runs, unfinished = load_runs(runs_dir)
        if "accuracy" in sections:
            measured = accuracy_table([m for m in runs if not m.get("timing_only")])
            # keep the history whose runs this machine lacks
            rows = carry_over(measured, previous or {}, {display_path(m["path"]) for m in runs})
            report["accuracy"] = {
                "rows": rows,
                "missing": missing_runs(measured),
                "unfinished": unfinished,
                "sweeps": load_sweeps(runs_dir),
                "bars": paper_bars(rows),
            }
        if "speed" in sections:
            report["speed"] = speed_table(runs)

    if sections & {"inference", "steps", "scaling", "memory", "app"}:
        lab = Lab.load(checkpoints_dir)
        if not lab.models(args.task):
            where = display_path(checkpoints_dir)
            report["checkpoints_note"] = (
                f"Not run: no checkpoints for task `{args.task}` under `{where}` "
                f"({where}/<task>/<model>/config.json). Produce them with `make train`, or "
                f"copy a run's best/ there (e.g. `cp -r runs/sst5-phrases/dcnn-s1/best "
                f"checkpoints/sst5/dcnn`), then re-run `python -m tools.bench`."
            )
        else:
            lang = lab.checkpoints[(args.task, lab.models(args.task)[0])].meta.get("lang", "en")
            sentences, report["sentences"] = bench_sentences(args.task, lang, data_dir, settings["sentences"])
            if "inference" in sections:
                timed("inference", measure_inference, lab, args.task, sentences, settings)
            if "steps" in sections:
                timed(
                    "steps",
                    measure_steps,
                    lab,
                    args.task,
                    settings["step_lengths"],
                    settings["step_reps"],
                    settings["step_budget_s"],
                )
            if "scaling" in sections:
                timed("scaling", measure_scaling, lab, args.task, settings)
            if "memory" in sections:
                timed(
                    "memory",
                    measure_memory,
                    lab,
                    args.task,
                    args.threads,
                    1 if args.smoke else None,
                    report.get("scaling"),
                )
            if "app" in sections:
                timed(
                    "app",
                    measure_app,
                    checkpoints_dir,
                    args.task,
                    lab.models(args.task),
                    sentences,
                    settings["app_reps"],
                )
    earlier = previous or {}
    for name in (n for n in SECTIONS if n not in sections and n in earlier):
        report[name] = earlier[name]
        carried = earlier.get("carried_sections", {})
        report.setdefault("carried_sections", {})[name] = carried.get(name) or earlier["generated"]
        if name == "inference" and "sentences" in earlier:
            report.setdefault("sentences", earlier["sentences"])
    stored_load = PROJECT_ROOT / "reports" / "loadtest.json"  # written by `make loadtest` (tools.bench.loadtest)
    if not args.smoke and stored_load.is_file():
        report["loadtest"] = json.loads(stored_load.read_text(encoding="utf-8"))
    report["load_average_end"] = list(os.getloadavg())
    report["bench_seconds"] = time.perf_counter() - started
    return report


def write_outputs(report: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "benchmarks.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    render_outputs(report, out)


def render_outputs(report: dict, out: Path) -> None:
    """Everything drawn from the report: benchmarks.md, RUNS_FILE and the SVGs (--render redraws them alone)."""
    (out / "benchmarks.md").write_text(render_markdown(report), encoding="utf-8")
    if "accuracy" in report:
        (out / RUNS_FILE).write_text(render_runs(report), encoding="utf-8")
    if "scaling" in report:
        panels = [
            (
                "one sentence, bare forward (best of N)",
                {m: (x["forward"]["lengths"], x["forward"]["best_ms"]) for m, x in report["scaling"].items()},
            ),
            (
                "one sentence, Lab.predict (explanations, p50)",
                {m: (x["predict"]["lengths"], x["predict"]["p50_ms"]) for m, x in report["scaling"].items()},
            ),
        ]
        (out / "scaling.svg").write_text(render_svg(panels), encoding="utf-8")
    if missed := curve_rows(report.get("accuracy", {}).get("rows", [])):
        curves = [
            (f"{i}: {row['task']} {row['model']} {row['variant'] or 'defaults'}"[:72], row["dev_curves"], row["paper"])
            for i, row in missed
        ]
        (out / "dev_curves.svg").write_text(render_dev_curves(curves), encoding="utf-8")


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="seconds-long run on tiny models (trained here unless --runs/--checkpoints)",
    )
    parser.add_argument("--runs", default=None, help="directory of training runs (default runs/)")
    parser.add_argument(
        "--checkpoints", default=None, help="checkpoint root, <root>/<task>/<model>/ (default checkpoints/)"
    )
    parser.add_argument("--task", default="sst5", help="the task whose checkpoints are timed (default sst5)")
    parser.add_argument(
        "--data-dir", default=None, help="data directory for the task's test sentences (default: the usual one)"
    )
    parser.add_argument("--out", default=None, help="output directory (default reports/; smoke: a temporary directory)")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads for every timing (default 2, the machine's cores; --smoke: 1)",
    )
    parser.add_argument("--sections", default="", help=f"comma-separated subset of {','.join(SECTIONS)} (default all)")
    parser.add_argument(
        "--render",
        action="store_true",
        help="measure nothing: re-write the markdown and SVGs from <out>/benchmarks.json",
    )
    parser.add_argument(
        "--memory-probe", default=None, help=argparse.SUPPRESS
    )  # internal: one model's memory, in a child
    parser.add_argument("--probe-words", type=int, default=MAX_WORDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.threads is None:  # on a busy machine 2 threads stall each other on every small op; smoke keeps to 1
        args.threads = 1 if args.smoke else 2
    return args


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    args = parse_args(argv)
    if args.memory_probe:
        print(json.dumps(memory_probe(args.memory_probe, args.threads, args.probe_words)))
        return 0
    out = (
        Path(args.out)
        if args.out
        else (Path(tempfile.mkdtemp(prefix="bench-smoke-out-")) if args.smoke else PROJECT_ROOT / "reports")
    )
    previous = out / "benchmarks.json"
    if args.render:
        if not previous.is_file():
            raise SystemExit(f"--render: no {previous} to render (make bench writes it)")
        render_outputs(json.loads(previous.read_text(encoding="utf-8")), out)
        print(f"wrote {out / 'benchmarks.md'} from {previous}")
        return 0
    report = run(args, json.loads(previous.read_text(encoding="utf-8")) if previous.is_file() else None)
    write_outputs(report, out)
    if report["settings"].get("scratch"):
        shutil.rmtree(report["settings"]["scratch"], ignore_errors=True)
    print(f"wrote {out / 'benchmarks.md'} in {report['bench_seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
