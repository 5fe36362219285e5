"""`make attribution`: how faithful each word-attribution method is, per model and task -> docs/attribution.md
and docs/attribution.json (which the lab reads for its "most faithful method" hint).

    python -m tools.attribution [--checkpoints checkpoints] [--sample 200] [--seed 13] [--out docs]

On a seeded random sample of each task's test sentences (2 to 60 words: the lab's attribution cap), every
model explains its own predicted class with every method; the words are then deleted in each method's
order and in random orders (the baseline), and the area over the probability-drop curve (AOPC) is averaged.
The same run records integrated gradients' completeness error and each method's time per sentence.
"""

import argparse
import json
import random
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import torch

from core.analysis.attribution import (COMPLETENESS_TARGET, DELETION_STEPS, GRADIENT_METHODS, IG_MAX_SEGMENTS, IG_SEGMENT_STEPS,
                              METHODS, ON_DEMAND, aopc, deletion_curve, gradient_attributions, occlusion, random_order,
                              ranking, weights_sha256)
from core.data import PROJECT_ROOT, load_task
from core.predict import OCCLUSION_MAX_WORDS, Lab
from tools.bench.machine import machine_info

TASKS = ("sst5", "zh_sentiment")
RANDOM_ORDERS = 5  # random deletion orders per sentence, averaged


def sample_sentences(task: str, data_dir: str | None, size: int, seed: int) -> list[tuple[str, ...]]:
    """`size` test sentences drawn with `seed` among those of 2 to OCCLUSION_MAX_WORDS words."""
    test = [e.words for e in load_task(task, data_dir).test if 2 <= len(e.words) <= OCCLUSION_MAX_WORDS]
    return random.Random(seed).sample(test, min(size, len(test)))


@torch.inference_mode()
def _predicted(net, ids: list[int]) -> int:
    return int(net.predict_labels(net(torch.tensor([ids]), torch.tensor([len(ids)]))))


def measure_model(net, vocab, sentences: list[tuple[str, ...]], seed: int) -> dict:
    """AOPC per method and for random orders, IG's completeness errors and each method's milliseconds."""
    rng = random.Random(seed)
    curves = {m: [] for m in METHODS} | {"random": []}
    errors, steps, ms = [], [], {m: [] for m in METHODS}
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
        errors.append(found["integrated_gradients"].completeness_error)
        steps.append(found["integrated_gradients"].steps)
        for method, attribution in found.items():
            curves[method].append(aopc(deletion_curve(net, ids, target, ranking(attribution.scores))))
        curves["random"].append(statistics.mean(aopc(deletion_curve(net, ids, target, random_order(len(ids), rng)))
                                                for _ in range(RANDOM_ORDERS)))
    return {
        "sentences": len(sentences),
        "aopc": {m: statistics.mean(curves[m]) for m in METHODS},
        "random": statistics.mean(curves["random"]),
        "ig_completeness": {"median": statistics.median(errors), "max": max(errors),
                            "share_under_target": sum(e < COMPLETENESS_TARGET for e in errors) / len(errors),
                            "median_steps": statistics.median(steps), "max_steps": max(steps)},
        "ms_per_sentence": {m: statistics.median(v) for m, v in ms.items()},
    }


def render_markdown(report: dict) -> str:
    r, m = report["results"], report["machine"]
    lines = [
        "# Word attributions: which explanation can I trust?",
        "",
        f"Written by `make attribution` (`python -m tools.attribution`) on {report['date']}, commit `{m['commit']}`, "
        f"{m['cpu']}, {m['cpus_usable']} usable cores (shared with other work; load average "
        f"{', '.join(f'{x:.1f}' for x in m['load_average'])}), torch {m['versions']['torch']} with "
        f"{m['torch_threads']} thread, Captum {report['captum']}.",
        "",
        f"**Sample.** {report['sample']} test sentences per task, drawn with `random.Random({report['seed']})` among "
        f"those of 2 to {OCCLUSION_MAX_WORDS} words (SST-5 test trees; zh_sentiment's seeded test split), the "
        "shipped checkpoints in `checkpoints/`. Each model explains its own predicted class.",
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
    wins = {x: sum(max(e["aopc"], key=e["aopc"].get) == x for models in r.values() for e in models.values())
            for x in METHODS}
    lines += ["", "Most faithful method, count of (task, model) rows: "
              + ", ".join(f"{x} {n}" for x, n in wins.items()) + ".", ""]
    lines += [
        "## Integrated gradients: completeness",
        "",
        f"Error = |sum of the scores - (f(x) - f(x'))| / |f(x) - f(x')| (the explained logit, baseline x' = zero "
        f"vectors; a change under 0.1 logit is compared with 0.1). The path is cut into segments of {IG_SEGMENT_STEPS} "
        f"trapezoid steps, the one with the largest gap halved until the error is under {COMPLETENESS_TARGET:.0%} "
        f"or {IG_MAX_SEGMENTS} segments ({IG_MAX_SEGMENTS * IG_SEGMENT_STEPS} steps) are reached. No number of steps makes DCNN complete: "
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
            lines.append(f"| {task} | {model} | {c['median']:.2%} | {c['max']:.2%} | {c['share_under_target']:.0%} | "
                         f"{c['median_steps']:.0f} | {c['max_steps']} |")
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
            lines.append(f"| {task} | {model} | " + " | ".join(f"{e['ms_per_sentence'][x]:.0f}" for x in METHODS) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.attribution", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", default=str(PROJECT_ROOT / "checkpoints"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS))
    parser.add_argument("--sample", type=int, default=200, help="test sentences per task")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(PROJECT_ROOT / "docs"))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    lab = Lab.load(args.checkpoints, prefer="bundled")
    results = {}
    for task in args.tasks:
        sentences = sample_sentences(task, args.data_dir, args.sample, args.seed)
        results[task] = {}
        for model in lab.models(task):
            ckpt = lab.checkpoints[(task, model)]
            started = time.perf_counter()
            results[task][model] = measure_model(ckpt.model, ckpt.vocab, sentences, args.seed)
            results[task][model]["weights_sha256"] = weights_sha256(ckpt)  # the hint names these weights only
            print(f"{task} {model}: {time.perf_counter() - started:.0f} s, AOPC {results[task][model]['aopc']}, "
                  f"random {results[task][model]['random']:.3f}", file=sys.stderr)
    from importlib.metadata import version

    report = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "sample": args.sample, "seed": args.seed,
              "captum": version("captum"), "machine": machine_info(), "results": results}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "attribution.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "attribution.md").write_text(render_markdown(report), encoding="utf-8")
    print(f"wrote {out / 'attribution.md'} and {out / 'attribution.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
