"""`make probes`: every probe suite on the shipped checkpoints -> reports/probes.md and reports/probes.json.

    python -m tools.probes [--checkpoints checkpoints] [--out reports]

Each suite runs once to load the tokenizer (spaCy, jieba) and once timed: the time recorded is a warm
run of every model of the suite's task over all its cases, tokenization included.
"""

import argparse
import json
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

import torch

from core.analysis.probes import ProbeReport, load_suite, run_suite, suite_names
from core.data import PROJECT_ROOT
from core.predict import Lab
from tools.git import git_commit

TYPE_NAMES = {"mft": "minimum functionality", "inv": "invariance", "dir": "directional"}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores visible, torch {torch.__version__} with {torch.get_num_threads()} threads"


def markdown_table(report: ProbeReport) -> list[str]:
    """Capability x model pass rates (%), with the number of cases per row."""
    lines = ["| capability | cases | " + " | ".join(report.models) + " |", "|---|---:|" + "---:|" * len(report.models)]
    for capability, row in report.cells.items():
        total = next(iter(row.values())).total
        lines.append(
            f"| {report.capabilities[capability]['en']} | {total} | "
            + " | ".join(f"{100 * row[m].rate:.0f}" for m in report.models)
            + " |"
        )
    return lines


def test_table(report: ProbeReport) -> list[str]:
    lines = [
        "| test | type | cases | " + " | ".join(report.models) + " |",
        "|---|---|---:|" + "---:|" * len(report.models),
    ]
    for test in report.tests:
        row = report.test_cells[test["name"]]
        total = next(iter(row.values())).total
        lines.append(
            f"| {test['name']} | {test['type']} | {total} | "
            + " | ".join(f"{100 * row[m].rate:.0f}" for m in report.models)
            + " |"
        )
    return lines


def render(reports: list[ProbeReport], root: str, commit: str) -> str:
    lines = [
        "# Behavioural probes",
        "",
        "Written by `make probes` (`python -m tools.probes`); do not edit by hand. Suites: `probes/*.toml` "
        "(CheckList's test types: minimum functionality, invariance, directional; see docs/analysis.md, Probes). "
        "Cells are pass rates in %.",
        "",
        f"Checkpoints: `{root}`. Commit: `{commit}`. Machine: {machine()}. "
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.",
        "",
    ]
    for report in reports:
        lines += [
            f"## {report.suite}: task {report.task}",
            "",
            f"{report.cases} cases ({report.sentences} distinct sentences) x {len(report.models)} models in "
            f"**{report.seconds:.2f} s** (warm, batched; tokenization included). Directional tests compare "
            f"{report.score_label}.",
            "",
        ]
        lines += markdown_table(report) + ["", "<details><summary>Per test</summary>", ""] + test_table(report)
        lines += ["", "</details>", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.probes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", default=str(PROJECT_ROOT / "checkpoints"), help="the checkpoints folder")
    parser.add_argument(
        "--out", default=str(PROJECT_ROOT / "reports"), help="the folder probes.md and probes.json are written to"
    )
    args = parser.parse_args(argv)
    lab = Lab.load(args.checkpoints, prefer="bundled")
    reports = []
    for name in suite_names():
        suite = load_suite(name)
        if not lab.models(suite.task):
            print(f"skip {name}: no checkpoint for task {suite.task}", file=sys.stderr)
            continue
        run_suite(lab, suite)  # loads the tokenizer; the next run is timed warm
        report = run_suite(lab, suite)
        print(f"{name}: {report.cases} cases x {len(report.models)} models in {report.seconds:.2f} s")
        reports.append(report)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    commit = git_commit() or "unknown"
    root = os.path.relpath(args.checkpoints, PROJECT_ROOT)
    (out / "probes.md").write_text(render(reports, root, commit), encoding="utf-8")
    summary = {"machine": machine(), "commit": commit, "suites": [r.to_dict(failures=False) for r in reports]}
    (out / "probes.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out / 'probes.md'} and {out / 'probes.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
