"""`make attribution`: how faithful each word-attribution method is, per model and task -> reports/attribution.md
and reports/attribution.json, and each measured checkpoint's attribution.json (which the lab reads for its "most
faithful method" hint; the manifest is written again).

    python -m tools.research.attribution [--checkpoints checkpoints] [--sample 200] [--seed 13] [--out reports]

On a seeded random sample of each task's test sentences (2 to 60 words: the lab's attribution cap), every
model explains its own predicted class with every method; the words are then deleted in each method's
order and in random orders (the baseline), and the area over the probability-drop curve (AOPC) is averaged.
The same run records integrated gradients' completeness error and each method's time per sentence, and, on
the tasks with gold trees (SST), each method's plausibility (core.analysis.plausibility). Tasks left out of
--tasks keep their rows from the previous reports/attribution.json, each task with its own run's date and sample.
"""

import argparse
import json
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from core.analysis.attribution import (
    COMPLETENESS_TARGET,
    DELETION_STEPS,
    GRADIENT_METHODS,
    IG_MAX_SEGMENTS,
    IG_SEGMENT_STEPS,
    METHODS,
    ON_DEMAND,
    aopc,
    deletion_curve,
    gradient_attributions,
    occlusion,
    random_order,
    ranking,
    write_faithfulness,
)
from core.analysis.plausibility import TOP_K, Plausibility, plausibility, summarize
from core.analysis.treebank import SST_TASKS
from core.checkpoints.checkpoint import weights_sha256
from core.checkpoints.manifest import write_manifest
from core.data import PROJECT_ROOT, data_dir, load_task
from core.data.sst import Tree, load_sst_trees
from core.predict import OCCLUSION_MAX_WORDS, Lab
from tools.bench.machine import machine_info

TASKS = ("sst5", "zh_sentiment")
RANDOM_ORDERS = 5  # random deletion orders per sentence, averaged


def sample_sentences(task: str, data_dir: str | None, size: int, seed: int) -> list[tuple[str, ...]]:
    """`size` test sentences drawn with `seed` among those of 2 to OCCLUSION_MAX_WORDS words."""
    test = [e.words for e in load_task(task, data_dir).test if 2 <= len(e.words) <= OCCLUSION_MAX_WORDS]
    return random.Random(seed).sample(test, min(size, len(test)))


def gold_trees(task: str, data: str | None) -> dict[tuple[str, ...], Tree] | None:
    """The test trees by their words on the tasks that have them (SST); None on the others."""
    return {t.words: t for t in load_sst_trees(data_dir(data), "test")} if task in SST_TASKS else None


@torch.inference_mode()
def _predicted(net, ids: list[int]) -> int:
    return int(net.predict_labels(net(torch.tensor([ids]), torch.tensor([len(ids)]))))


def measure_model(
    net,
    vocab,
    sentences: list[tuple[str, ...]],
    seed: int,
    trees: dict[tuple[str, ...], Tree] | None = None,
    classes: int = 5,
) -> dict:
    """AOPC per method and for random orders, IG's completeness errors, each method's milliseconds and, with
    the sentences' gold `trees`, each method's plausibility for the model's `classes` (5 or 2)."""
    rng = random.Random(seed)
    curves: dict[str, list[float]] = {m: [] for m in [*METHODS, "random"]}
    agreement: dict[str, list[Plausibility]] = {m: [] for m in METHODS}
    ms: dict[str, list[float]] = {m: [] for m in METHODS}
    errors: list[float] = []  # integrated gradients' completeness error and path steps, per sentence
    steps: list[int] = []
    for index, words in enumerate(sentences):
        ids = vocab.encode(list(words))
        target = _predicted(net, ids)
        started = time.perf_counter()
        found = {"occlusion": occlusion(net, ids, target)}
        ms["occlusion"].append(1000 * (time.perf_counter() - started))
        for method in GRADIENT_METHODS:
            started = time.perf_counter()
            found |= gradient_attributions(net, ids, target, [method], seed=index)
            ms[method].append(1000 * (time.perf_counter() - started))
        ig = found["integrated_gradients"]
        if ig.completeness_error is None or ig.steps is None:
            raise RuntimeError("integrated gradients gave no completeness error")
        errors.append(ig.completeness_error)
        steps.append(ig.steps)
        for method, attribution in found.items():
            curves[method].append(aopc(deletion_curve(net, ids, target, ranking(attribution.scores))))
            if trees:
                agreement[method].append(plausibility(trees[words], attribution.scores, target, classes))
        curves["random"].append(
            statistics.mean(
                aopc(deletion_curve(net, ids, target, random_order(len(ids), rng))) for _ in range(RANDOM_ORDERS)
            )
        )
    return {
        "sentences": len(sentences),
        "aopc": {m: statistics.mean(curves[m]) for m in METHODS},
        "random": statistics.mean(curves["random"]),
        "ig_completeness": {
            "median": statistics.median(errors),
            "max": max(errors),
            "share_under_target": sum(e < COMPLETENESS_TARGET for e in errors) / len(errors),
            "median_steps": statistics.median(steps),
            "max_steps": max(steps),
        },
        "ms_per_sentence": {m: statistics.median(v) for m, v in ms.items()},
        "plausibility": {m: summarize(found) for m, found in agreement.items()} if trees else None,
    }


def render_markdown(report: dict) -> str:
    r, m = report["results"], report["machine"]
    lines = [
        "# Word attributions: which explanation can I trust?",
        "",
        f"Written by `make attribution` (`python -m tools.research.attribution`) on {m['cpu']}, "
        f"{m['cpus_usable']} usable cores (shared with other work), torch {m['versions']['torch']} with "
        f"{m['torch_threads']} thread, "
        f"Captum {report['captum']}. Each task's run:",
        "",
    ]
    for task, run in report["runs"].items():
        took = f", {run['seconds'] / 60:.1f} minutes" if "seconds" in run else ""
        lines.append(
            f"- {task}: {run['date']}, commit `{run['commit']}`, {run['sample']} test sentences drawn with "
            f"`random.Random({run['seed']})`{took}"
            + (f", load average {run['load_average']:.1f}" if "load_average" in run else "")
            + "."
        )
    lines += [
        "",
        f"**Sample.** Test sentences of 2 to {OCCLUSION_MAX_WORDS} words (SST-5 test trees; zh_sentiment's seeded "
        "test split), the shipped checkpoints in `checkpoints/`. Each model explains its own predicted class.",
        "",
        f"**Deletion test.** The words are deleted in the order a method ranks them (highest score first), "
        f"k = 0..K with K = min({DELETION_STEPS}, n - 1); AOPC = mean over k of P(c | sentence) - P(c | sentence "
        f"without its top-k words) (Samek et al. 2017). Higher is more faithful: the words the method puts first "
        f"are the ones the prediction rests on. *random* deletes in a random order ({RANDOM_ORDERS} orders per "
        "sentence, averaged). Best method per row in bold.",
        "",
        "| task | model | " + " | ".join(METHODS) + " | random | most faithful |",
        "|---|---|" + "---:|" * (len(METHODS) + 1) + "---|",
    ]
    for task, models in r.items():
        for model, e in models.items():
            best = max(e["aopc"], key=e["aopc"].get)
            cells = [f"**{e['aopc'][x]:.3f}**" if x == best else f"{e['aopc'][x]:.3f}" for x in METHODS]
            lines.append(f"| {task} | {model} | " + " | ".join(cells) + f" | {e['random']:.3f} | {best} |")
    wins = {
        x: sum(max(e["aopc"], key=e["aopc"].get) == x for models in r.values() for e in models.values())
        for x in METHODS
    }
    lines += [
        "",
        "Most faithful method, count of (task, model) rows: " + ", ".join(f"{x} {n}" for x, n in wins.items()) + ".",
        "",
    ]
    lines += render_plausibility(r)
    lines += [
        "## Integrated gradients: completeness",
        "",
        f"Error = |sum of the scores - (f(x) - f(x'))| / |f(x) - f(x')| (the explained logit, baseline x' = zero "
        f"vectors; a change under 0.1 logit is compared with 0.1). The path is cut into segments of {IG_SEGMENT_STEPS} "
        f"trapezoid steps, the one with the largest gap halved until the error is under {COMPLETENESS_TARGET:.0%} "
        f"or {IG_MAX_SEGMENTS} segments ({IG_MAX_SEGMENTS * IG_SEGMENT_STEPS} steps) are reached. "
        "No number of steps makes DCNN complete: "
        "its k-max pooling keeps each row's top values in word order, so when one value overtakes another the "
        "kept columns reorder and the logit jumps; a path integral of gradients misses the jumps. The lab shows "
        "each explanation's error beside its scores.",
        "",
        "| task | model | median error | max error | sentences under 5% | median steps | max steps |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for task, models in r.items():
        for model, e in models.items():
            c = e["ig_completeness"]
            lines.append(
                f"| {task} | {model} | {c['median']:.2%} | {c['max']:.2%} | {c['share_under_target']:.0%} | "
                f"{c['median_steps']:.0f} | {c['max_steps']} |"
            )
    lines += [
        "",
        "## Cost",
        "",
        "Median milliseconds per sentence and model (one thread; occlusion here is its own batch, in the app it "
        f"shares the prediction's). Computed only on demand in the app: {', '.join(ON_DEMAND)}.",
        "",
        "| task | model | " + " | ".join(METHODS) + " |",
        "|---|---|" + "---:|" * len(METHODS),
    ]
    for task, models in r.items():
        for model, e in models.items():
            lines.append(
                f"| {task} | {model} | " + " | ".join(f"{e['ms_per_sentence'][x]:.0f}" for x in METHODS) + " |"
            )
    return "\n".join(lines) + "\n"


def render_plausibility(results: dict) -> list[str]:
    """The plausibility section: rank agreement and precision@k per method, the rows of the tasks with trees."""
    rows = [
        (task, model, e["plausibility"])
        for task, models in results.items()
        for model, e in models.items()
        if e.get("plausibility")
    ]
    if not rows:
        return []
    lines = [
        "## Plausibility: do the methods agree with the annotators?",
        "",
        "Same sentences and predictions as the deletion test above (SST only: its trees label every word and "
        "phrase). Definitions in `core/analysis/plausibility.py`. A word's gold polarity comes from its leaf's "
        "label (very negative/negative -1, neutral 0, positive/very positive +1), its sign flipped when the model "
        "predicted a negative class; sentences predicted neutral are left out (no side to agree with).",
        "",
        "- **τ** = Kendall's tau-b between the method's word scores and those oriented gold polarities, per "
        "sentence, averaged (0 for a random ranking; sentences whose words are all neutral have none).",
        f"- **P@{TOP_K}** = the share of the method's top {TOP_K} words that lie inside a gold phrase labelled the "
        "way the model predicted (a word's phrase: the smallest non-neutral node holding it, its own leaf included, "
        'the root not; so "bad" in a positive "not bad" counts against a positive prediction, "not" for it); '
        "*chance* = that share for a random ranking (the agreeing words' share of the sentence).",
        "",
        "Faithfulness (AOPC) and plausibility answer different questions: a method can follow the model closely "
        "where the model reads the sentence unlike the annotators. Best τ per row in bold. Every sentence's scores "
        "and AOPC, per method, as a dataset: `make attribute TASK=sst5 SPLIT=test`.",
        "",
        "| task | model | sentences (τ / P@k) | "
        + " | ".join(f"{x} τ" for x in METHODS)
        + " | "
        + " | ".join(f"{x} P@{TOP_K}" for x in METHODS)
        + " | chance |",
        "|---|---|---:|" + "---:|" * (2 * len(METHODS) + 1),
    ]

    def cell(value: float | None) -> str:  # None: no sentence had the score (e.g. every one predicted neutral)
        return "–" if value is None else f"{value:.3f}"

    for task, model, p in rows:
        taus = {x: p[x]["rank_agreement"] for x in METHODS if p[x]["rank_agreement"] is not None}
        best = max(taus, key=lambda x: taus[x]) if taus else None
        first = p[METHODS[0]]
        tau_cells = [f"**{cell(taus[x])}**" if x == best else cell(p[x]["rank_agreement"]) for x in METHODS]
        lines.append(
            f"| {task} | {model} | {first['rank_sentences']} / {first['precision_sentences']} | "
            + " | ".join(tau_cells)
            + " | "
            + " | ".join(cell(p[x]["precision"]) for x in METHODS)
            + f" | {cell(first['chance'])} |"
        )
    return lines + [""]


def previous_report(path: Path) -> dict:
    """The last run's report (for the tasks this run leaves out), with per-task runs; {} when there is none."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    runs = old.get("runs") or {
        t: {"date": old["date"], "commit": old["machine"]["commit"], "sample": old["sample"], "seed": old["seed"]}
        for t in old["results"]
    }  # written before per-task runs
    return {"results": old["results"], "runs": runs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.research.attribution", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", default=str(PROJECT_ROOT / "checkpoints"), help="the checkpoints folder")
    parser.add_argument("--data-dir", default=None, help="where the datasets are (default: the project's data folder)")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), help="the tasks measured")
    parser.add_argument("--sample", type=int, default=200, help="test sentences per task")
    parser.add_argument("--seed", type=int, default=13, help="the seed of the random baseline order")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument(
        "--out",
        default=str(PROJECT_ROOT / "reports"),
        help="the folder attribution.md and attribution.json are written to",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    lab = Lab.load(args.checkpoints, prefer="bundled")
    out = Path(args.out)
    kept = previous_report(out / "attribution.json")
    results = {t: e for t, e in kept.get("results", {}).items() if t not in args.tasks}
    runs = {t: run for t, run in kept.get("runs", {}).items() if t in results}
    for task in args.tasks:
        sentences = sample_sentences(task, args.data_dir, args.sample, args.seed)
        trees = gold_trees(task, args.data_dir)
        results[task] = {}
        task_started = time.perf_counter()
        for model in lab.models(task):
            ckpt = lab.checkpoints[(task, model)]
            started = time.perf_counter()
            results[task][model] = measure_model(
                ckpt.model, ckpt.vocab, sentences, args.seed, trees, len(ckpt.meta["labels"])
            )
            results[task][model]["weights_sha256"] = weights_sha256(ckpt)
            write_faithfulness(ckpt, results[task][model])  # the Lab's hint, beside these weights only
            print(
                f"{task} {model}: {time.perf_counter() - started:.0f} s, AOPC {results[task][model]['aopc']}, "
                f"random {results[task][model]['random']:.3f}",
                file=sys.stderr,
            )
        machine = machine_info()
        runs[task] = {
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": machine["commit"],
            "sample": len(sentences),
            "seed": args.seed,
            "seconds": time.perf_counter() - task_started,
            "load_average": machine["load_average"][0],
        }
    from importlib.metadata import version

    order = [t for t in TASKS if t in results] + [t for t in results if t not in TASKS]
    report = {
        "date": runs[args.tasks[-1]]["date"],
        "sample": args.sample,
        "seed": args.seed,
        "captum": version("captum"),
        "machine": machine_info(),
        "runs": {t: runs[t] for t in order},
        "results": {t: results[t] for t in order},
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "attribution.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "attribution.md").write_text(render_markdown(report), encoding="utf-8")
    write_manifest(args.checkpoints)  # the checkpoints' attribution.json files are listed with their sha256
    print(
        f"wrote {out / 'attribution.md'}, {out / 'attribution.json'} and each checkpoint's attribution.json",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
