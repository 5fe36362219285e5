"""The papers' ablations, re-run on the shipped checkpoints: every intervention's effect on dev and test accuracy
(at inference, no retraining), beside the paper's number and our retrained run where the paper reports one.

    python -m tools.research.ablations           # every shipped checkpoint -> reports/ablations.{json,md}
    python -m tools.research.ablations --tasks sst5 --models tensor_cnn

An indexed intervention is measured at each index a reader would try: every layer, order and DCNN map; the
AGT's first, middle and last layers; AdaSent's levels 1-3 and its top level; the mRNN's cut after 1 and 3 words.
"""

import argparse
import json
import time
from pathlib import Path

from core.analysis.metrics import evaluate
from core.checkpoints.checkpoint import load_checkpoint
from core.data import PROJECT_ROOT, load_task
from core.models import PAPER_MODELS
from core.models.base import SENTENCE_INDEX, Intervention
from tools.bench.machine import machine_info

DOCS = PROJECT_ROOT / "reports"
TOP_LEVEL = SENTENCE_INDEX[1]  # level_only past a sentence's length reads its top level (grConv's root)

# What the papers report for a retrained model without the part (test accuracy), and where; None where the
# paper gives a figure or a comparison on another task only (the text says what)
PAPER = {
    ("tensor_cnn", "consecutive"): (None, "Lei et al. 2015, Fig. 3: λ = 0 drops accuracy in every setting (no table)"),
    ("mrnn", "additive"): (
        None,
        "Irsoy & Cardie 2015, §5.2: the additive RNN is slightly worse on MPQA (ranking loss "
        "0.5265 vs 0.5232); no SST number",
    ),
    ("dcnn", "max_pool"): (
        None,
        "Kalchbrenner et al. 2014, Table 1: Max-TDNN (max pooling, one narrow layer) 37.4 on "
        "SST-5, a different network",
    ),
    ("adasent", "level_only"): (
        None,
        "Zhao et al. 2015, §Results: GrConv (the top level only) is worse on every data "
        "set (its table is lost in our copy); no SST number",
    ),
    ("agt", "skip_only"): (48.5, "Guo 2017, §3.2: only s+_0 (retrained), 48.5 on SST-5 against 50.5"),
}
# our retrained counterparts: (model, intervention) -> the variant of a make bench row (reports/benchmarks.json)
RETRAINED = {("tensor_cnn", "consecutive"): ("sst5", "decay=0.0"), ("agt", "skip_only"): ("sst5", "attention_layers=1")}


def indices(net, key: str) -> list[int | None]:
    """The indices of intervention `key` that the table reports for this model."""
    what = net.interventions[key].index
    if what is None:
        return [None]
    if what == "word":
        return [2, 4]  # the recurrence cut after the first word, and after the third
    if what == "level":
        return [1, 2, 3, TOP_LEVEL] if key == "level_only" else [2, 3]
    lowest, highest = net.intervention_range(key)
    if highest - lowest + 1 <= 12:
        return list(range(lowest, highest + 1))
    return sorted({lowest, (lowest + highest) // 2, highest})


def retrained(model: str, key: str) -> dict | None:
    """Our retrained run of the paper's ablation (make bench's accuracy row), when there is one."""
    wanted = RETRAINED.get((model, key))
    stored = DOCS / "benchmarks.json"
    if wanted is None or not stored.is_file():
        return None
    rows = json.loads(stored.read_text(encoding="utf-8")).get("accuracy", {}).get("rows", [])
    row = next((r for r in rows if r["model"] == model and (r["task"], r["variant"]) == wanted), None)
    if row is None:
        return None
    # the full model trained the same way (same task and phrase regime, the recipe's own variant)
    full = next(
        (
            r
            for r in rows
            if r["model"] == model
            and r["task"] == row["task"]
            and r["phrases"] == row["phrases"]
            and r["variant"] == ""
        ),
        None,
    )
    return {
        "test": row["mean"],
        "dev": row.get("dev_mean"),
        "runs": row["n"],
        "variant": row["variant"],
        "phrases": row["phrases"],
        "full_test": full["mean"] if full else None,
        "full_runs": full["n"] if full else 0,
    }


def measure(task_name: str, model: str, root: Path, data: str | None = None) -> list[dict]:
    """Dev and test accuracy of one shipped checkpoint, plain and under each of its interventions."""
    ckpt = load_checkpoint(root / task_name / model)
    task = load_task(task_name, data)
    net, rows = ckpt.model, []
    for key in [None, *net.interventions]:
        for index in [None] if key is None else indices(net, key):
            intervention = None if key is None else Intervention(key, index)
            start = time.perf_counter()
            dev, test = (
                evaluate(net, getattr(task, split), ckpt.vocab, task.labels, intervention)["accuracy"] * 100
                for split in ("dev", "test")
            )
            paper, source = PAPER.get((model, key), (None, ""))
            rows.append(
                {
                    "task": task_name,
                    "model": model,
                    "intervention": str(intervention or "none"),
                    "section": net.interventions[key].section if key else "",
                    "dev": dev,
                    "test": test,
                    "paper": paper,
                    "paper_source": source,
                    "retrained": retrained(model, key) if key else None,
                    "seconds": time.perf_counter() - start,
                }
            )
            print(
                f"{task_name} {model:>10} {rows[-1]['intervention']:>22}  dev {dev:5.1f}  test {test:5.1f}", flush=True
            )
    return rows


def markdown(report: dict) -> str:
    lines = [
        "# Ablations: what each part of each model contributes",
        "",
        f"Generated by `{report['command']}` on {report['machine']['cpu']} ({report['machine']['logical_cpus']} "
        f"cores, load average {report['machine']['load_average'][0]:.1f}), {report['generated']}, commit "
        f"{report['machine']['commit']}.",
        "",
        "Each shipped checkpoint is evaluated with one of its parts switched off or replaced at inference "
        "(`forward`'s `intervention`, core.models.base; the Lab's intervention menu and `/predict`'s "
        "`intervention`): no retraining, so a drop says how much the trained model relies on that part, not how "
        "well a model trained without it would do. Where a paper retrained without the part, its number and our "
        "retrained run (`make bench`'s row) stand beside it. Accuracy in %; Δ against the plain model's test accuracy.",
        "",
    ]
    for task in dict.fromkeys(r["task"] for r in report["rows"]):
        for model in dict.fromkeys(r["model"] for r in report["rows"] if r["task"] == task):
            rows = [r for r in report["rows"] if (r["task"], r["model"]) == (task, model)]
            plain = rows[0]
            lines += [
                f"## {task} · {model}",
                "",
                "| intervention | tests | dev | test | Δ test | paper (retrained) | ours retrained |",
                "|---|---|---|---|---|---|---|",
            ]
            for r in rows:
                ours = r["retrained"]
                ours_text = (
                    ""
                    if not ours
                    else (
                        f"{ours['test']:.1f} (`{ours['variant']}`, {ours['runs']} run, "
                        f"{'all phrases' if ours['phrases'] else 'sentences'})"
                        + (
                            f" against {ours['full_test']:.1f} for the full model ({ours['full_runs']} runs)"
                            if ours.get("full_test") is not None
                            else ""
                        )
                    )
                )
                paper = (f"{r['paper']:.1f}: " if r["paper"] is not None else "") + r["paper_source"]
                delta = "" if r is plain else f"{r['test'] - plain['test']:+.1f}"
                lines.append(
                    f"| `{r['intervention']}` | {r['section']} | {r['dev']:.1f} | {r['test']:.1f} | {delta} | "
                    f"{paper} | {ours_text} |"
                )
            lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.research.ablations", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tasks", nargs="+", default=["sst5", "zh_sentiment"], help="the tasks whose shipped checkpoints are measured"
    )
    parser.add_argument("--models", nargs="+", default=PAPER_MODELS, help="the models measured")
    parser.add_argument("--checkpoints", default=str(PROJECT_ROOT / "checkpoints"), help="the checkpoints folder")
    parser.add_argument("--data", default=None, help="the data directory (default: $DATA_DIR, else ../shared/data)")
    parser.add_argument("--out", default=str(DOCS), help="the folder ablations.md and ablations.json are written to")
    parser.add_argument(
        "--render",
        action="store_true",
        help="rewrite ablations.md from the stored ablations.json (retrained rows re-read), measuring nothing",
    )
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.render:
        report = json.loads((out / "ablations.json").read_text(encoding="utf-8"))
        for row in report["rows"]:
            key = row["intervention"].partition(":")[0]
            row["retrained"] = retrained(row["model"], key) if key != "none" else None
    else:
        rows = [
            r
            for task in args.tasks
            for model in args.models
            for r in measure(task, model, Path(args.checkpoints), args.data)
        ]
        report = {
            "command": "make ablations",
            "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": machine_info(),
            "rows": rows,
        }
    (out / "ablations.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "ablations.md").write_text(markdown(report) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
