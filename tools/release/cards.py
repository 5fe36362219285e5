"""Model cards: one README.md per bundled checkpoint and one for the Hub repo, with Hub metadata.

A card states the accuracy measured on the compacted checkpoint itself (float16, the vocabulary it ships with)
next to the full-precision run's and the paper's own number, each labelled as what it is, and how
the checkpoint was trained (command, settings, commits).
"""

import json
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from core.checkpoints.checkpoint import CheckpointError
from core.checkpoints.manifest import manifest_pairs, read_manifest
from core.data import TASKS
from core.models.papers import find_reported, paper
from tools.release.config import BUNDLE_CONFIG, BundleConfig, read_bundle_config


def paper_result(model: str, task: str, phrases: bool) -> dict | None:
    """The paper's number for this checkpoint's task and phrase regime (configs/papers.toml), when it has one."""
    found = find_reported(model, task, phrases)
    return {"accuracy": found[0].accuracy, "source": found[0].source} if found and found[1] else None


# task -> (Hub dataset id, or None when the data is not on the Hub, readable name, task name). A card's
# `datasets` lists the Hub ids only; its model-index, which needs a dataset type, names the others plainly.
DATASETS = {
    "sst5": (
        "stanfordnlp/sst",
        "SST-5 (Stanford Sentiment Treebank, fine-grained)",
        "Sentiment classification, 5 classes",
    ),
    "sst2": ("stanfordnlp/sst2", "SST-2 (Stanford Sentiment Treebank, binary)", "Sentiment classification, 2 classes"),
    "zh_sentiment": (
        None,
        "online_shopping_10_cats (SophonPlus ChineseNlpCorpus)",
        "Chinese sentiment classification, 2 classes",
    ),
    "trec": ("CogComp/trec", "TREC question classification", "Question type classification, 6 classes"),
}
HUB_DATASETS = {task: hub_id for task, (hub_id, _, _) in DATASETS.items()}
TAGS = ["sentence-classification", "sentiment-analysis", "compositional-models", "safetensors", "pytorch"]


def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _no_result(model: str) -> str:
    record = paper(model)
    return (record and record.no_result) or "no published number for this task"


def _paper_pct(metrics: dict) -> str:
    return f"{metrics['paper']['accuracy']:.1f}%" if metrics.get("paper") else "—"


def _dataset(task: str) -> tuple[str | None, str, str]:
    return DATASETS.get(task, (None, TASKS.get(task, ("", "", task))[2], "Text classification"))


def checkpoint_name(metrics: dict) -> str:
    return f"{metrics['model']}-{metrics['task']}"


def _common_data(metrics_list: list[dict], config: BundleConfig) -> dict:
    """The metadata every card shares: library_name only when configured (the Hub knows no `pytorch`
    library; the `pytorch` tag says the framework), Hub dataset ids only."""
    return dict(
        library_name=config.library_name or None,
        pipeline_tag="text-classification",
        language=sorted({m["lang"] for m in metrics_list}),
        license=config.license or None,
        datasets=sorted({_dataset(m["task"])[0] for m in metrics_list} - {None}) or None,
        metrics=["accuracy"],
        tags=TAGS + sorted({m["model"].replace("_", "-") for m in metrics_list}),
    )


def card_data(metrics: dict, config: BundleConfig) -> ModelCardData:
    """One checkpoint's metadata, with its own model-index (one name, one result)."""
    hub_id, dataset_name, task_name = _dataset(metrics["task"])
    result = EvalResult(
        task_type="text-classification",
        task_name=task_name,
        dataset_type=hub_id or metrics["task"],
        dataset_name=dataset_name,
        dataset_split="test",
        metric_type="accuracy",
        metric_value=round(metrics["test"]["accuracy"], 4),
        metric_name="Test accuracy (this float16 checkpoint, as shipped)",
    )
    return ModelCardData(model_name=checkpoint_name(metrics), eval_results=[result], **_common_data([metrics], config))


def repo_card_data(metrics_list: list[dict], config: BundleConfig) -> ModelCardData:
    """The repo card's metadata: no model-index, which holds one model name per card (huggingface_hub reads
    ten entries back as one name); each checkpoint's own card has its model-index."""
    return ModelCardData(**_common_data(metrics_list, config))


def _card(data: ModelCardData, body: str) -> str:
    return str(ModelCard(f"---\n{data.to_yaml()}\n---\n{body}"))


def render_card(metrics: dict, config: BundleConfig) -> str:
    model, task = metrics["model"], metrics["task"]
    run, ck, tc = metrics["source_run"], metrics["checkpoint"], metrics["train_config"]
    _, dataset_name, task_name = _dataset(task)
    reported = metrics["paper"]
    paper_row = (
        f"| paper ({reported['source']}) | {reported['accuracy']:.1f}% |"
        if reported
        else f"| paper | — ({_no_result(model)}) |"
    )
    extra = "".join(
        f"| {name} (extra test set, this checkpoint) | {_pct(r['accuracy'])} (n = {r['n']}) |\n"
        for name, r in metrics["extra_tests"].items()
    )
    vectors = run.get("vectors") or {}
    vectors_text = (
        f"pretrained vectors `{vectors.get('file')}`"
        if vectors.get("file")
        else "randomly initialised word vectors (no pretrained vectors)"
    )
    settings = ", ".join(
        f"{k} = {tc.get(k)}"
        for k in ("optimizer", "lr", "l2", "batch_size", "clip", "epochs", "patience")
        if tc.get(k) is not None
    )
    model_config = ", ".join(f"{k} = {v}" for k, v in metrics["model_config"].items())
    name = checkpoint_name(metrics)
    shared = ck.get("shared_vectors")
    words = (
        f"its {ck.get('training_words_kept', 0):,} training words and the {shared['words']:,} words of the shared "
        f"{shared['lang']} vectors"
        if shared
        else f"{ck['vocab_size']:,}-word vocabulary"
    )
    linked = (
        f"\nIts word vectors are fixed, so it reads any word of the shared vectors set `vectors/{shared['lang']}/` "
        "(the file it was trained with, the most frequent words kept) as training would have read it."
        if shared
        else ""
    )
    ours = f"**{_pct(metrics['test']['accuracy'])}** (n = {metrics['test']['n']})"
    before_compaction = (
        f"| the same run before compaction (float32, {ck['source_vocab_size']:,} words) "
        f"| {_pct(run['test_accuracy_full_precision'])} |"
    )
    best = (
        f"best dev accuracy {_pct(run.get('dev_accuracy'))} at epoch {run.get('best_epoch')} of {run.get('epochs_run')}"
    )
    record = paper(model)
    body = f"""
# {name}: {task_name}

The `{model}` sentence classifier trained on {dataset_name}, as bundled with the compositional sentence
models lab (an interactive Gradio lab for five classic neural sentence classifiers).
Model: {record.citation if record else model}.
Classes: {", ".join(metrics["labels"])}.

## Results (test set accuracy)

| | accuracy |
|---|---|
| **this checkpoint** (float16 weights, {words}), measured after compaction | {ours} |
{extra}{before_compaction}
{paper_row}

One seed ({metrics["seed"]}); the paper numbers come from their own setups (pretrained vectors, tuning), so a gap
is expected. Test-token coverage of the vocabulary: {_pct(ck["test_token_coverage"])} (the run's training
vocabulary: {_pct(ck["source_test_token_coverage"])}); other words read as `<unk>`.{linked}

## How it was trained

- Command: `{run["command"]}` (`make train` runs every entry of `configs/bundled.toml`, then
  `python -m tools.release.bundle` compacts and re-evaluates it).
- Data: {run.get("split") or "see the task"}; {run.get("train_examples") or "?"} training examples.
- {settings}; {best}.
- Embeddings: {vectors_text}.
- Model configuration: {model_config}; {metrics["parameters"]:,} parameters.
- Code: commit `{run.get("commit") or "?"}` (training), `{metrics.get("bundle_commit") or "?"}` (bundling).

## Files

`model.safetensors` (float16; loads as float32), `config.json` (model configuration, labels, the sha256
of the weights and the vocabulary), `vocab.json` (index = id), `metrics.json` (the full report: per-class
precision/recall/F1 and the confusion matrix). Every file's sha256 is in `manifest.json` at the root.
No pickle anywhere: `core.checkpoints.checkpoint.load_checkpoint("{task}/{model}")` reads them, and the lab's
`Lab.load()` finds them in the bundled folder or in a pinned Hub repo.
"""
    return _card(card_data(metrics, config), body)


def render_repo_card(checkpoints: Path, repo_id: str, config: BundleConfig | None = None) -> str:
    """The README.md of the Hub repo: every checkpoint's measured accuracy next to the paper's."""
    config = config or (read_bundle_config() if BUNDLE_CONFIG.is_file() else BundleConfig([]))
    metrics_list = []
    for task, model in manifest_pairs(read_manifest(checkpoints)):
        path = checkpoints / task / model / "metrics.json"
        try:
            metrics_list.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as err:
            raise CheckpointError(f"{path}: cannot read the metrics for the card ({err})") from None
    rows = "".join(
        f"| [`{m['task']}/{m['model']}`]({m['task']}/{m['model']}/README.md) ({checkpoint_name(m)}) "
        f"| {_pct(m['test']['accuracy'])} | {_pct(m['source_run']['test_accuracy_full_precision'])} "
        f"| {_paper_pct(m)} | {m['checkpoint']['vocab_size']:,} |\n"
        for m in metrics_list
    )
    body = f"""
# {repo_id.split("/")[1]}: checkpoints of the compositional sentence models lab

Five classic neural sentence classifiers (Lei et al. 2015 tensor CNN, Irsoy & Cardie 2015 multiplicative
RNN, Kalchbrenner et al. 2014 DCNN, Zhao et al. 2015 AdaSent, Guo 2017 AGT) trained by the lab's own PyTorch
trainer. Each `<task>/<model>/` folder is one checkpoint with its own model card, which holds its
model-index entry.

| checkpoint | test accuracy (this checkpoint) | before compaction | paper | words |
|---|---|---|---|---|
{rows}
"This checkpoint" is measured on the float16 files in this repo, as they load. `manifest.json` lists
every file's sha256; the lab refuses a file that does not match. Pin a commit of this repo in the lab's
`configs/hub.toml` to load these checkpoints instead of the bundled copies.
"""
    return _card(repo_card_data(metrics_list, config), body)
