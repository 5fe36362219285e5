"""The bundled checkpoints: train the set in configs/bundled.toml, compact it into checkpoints/, measure it.

    python -m tools.release.bundle train               # = make train: train every entry, then bundle it
    python -m tools.release.bundle train --from-runs   # only re-bundle the existing runs/ (no training)
    python -m tools.release.bundle train --only sst5/dcnn --from-runs
    python -m tools.release.bundle train --parallel 2  # the runs as Ray tasks, 2 at a time (tools.release.parallel)
    python -m tools.release.bundle check               # manifest, size budget and every checkpoint loads
    python -m tools.release.bundle cards               # rewrite the model cards from metrics.json (no training)
    python -m tools.release.bundle report              # reports/checkpoints.md: unknown test tokens, accuracy, sizes

For each entry {model, task, phrases, seed, args} the run `runs/<task>[-phrases]/<model>-s<seed>/` is
trained with core.training.train (its best-on-dev checkpoint), then copied into `checkpoints/<task>/<model>/`
in float16 with its whole training vocabulary, unless the size budget forces pruning to the most
frequent training words: one word budget for all checkpoints is chosen so that the whole folder stays
within `max_total_mb`, and a checkpoint whose weights file would exceed `max_file_mb` keeps fewer words.
A run whose embedding is fixed pretrained vectors is *linked* instead (core.checkpoints.checkpoint): the most frequent
`vectors_rows` words (the language's) of `.cache/vectors/<lang>.safetensors` are written once per language to
`checkpoints/vectors/<lang>/` (float16 shards of at most `max_file_mb`), and the checkpoint keeps only the
rows its set lacks, so at prediction time it reads every word of the set. A run is linked only when its
fixed rows ARE that file's rows (to float16 precision): a run trained with other vectors is bundled plainly,
and the log says why. The
float16 checkpoint is loaded back exactly as the app loads it and RE-EVALUATED on the task's test set:
that measured accuracy goes into its metrics.json and its model card (the full-precision run's number
is shown beside it, labelled as such, never in its place). Finally `checkpoints/manifest.json`
records every file's sha256 and Gradio's cached examples are cleared (they were computed with the
old checkpoints).
"""

import argparse
import dataclasses
import json
import logging
import os
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from core.analysis.metrics import evaluate
from core.checkpoints.checkpoint import (
    CONFIG,
    SHARED_VECTORS_DIR,
    Checkpoint,
    CheckpointError,
    atomic_write_text,
    load_checkpoint,
    own_rows,
    save_checkpoint,
    sha256,
    shared_rows,
)
from core.checkpoints.hub import BUNDLED, display_path
from core.checkpoints.manifest import (
    CARD,
    MANIFEST,
    manifest_pairs,
    read_manifest,
    verify_against_manifest,
    verify_vectors_against_manifest,
    write_manifest,
)
from core.data import PROJECT_ROOT, DataError, TaskData, load_task
from core.data.vectors import SHARED_INDEX, Vectors, load_shared_vectors, load_vectors, save_shared_vectors
from core.data.vocab import PAD, UNK, Vocab
from core.models import model_class
from core.training.train import Trainer
from tools.git import git_commit
from tools.release.cards import paper_result, render_card
from tools.release.config import BUNDLE_CONFIG, BundleConfig, Entry, read_bundle_config

log = logging.getLogger("tools.release.bundle")

EXAMPLES_CACHE = PROJECT_ROOT / ".gradio" / "cached_examples"
VECTORS_CACHE = PROJECT_ROOT / ".cache" / "vectors"  # where `make vectors` writes <lang>.safetensors
# how far a linked run's fixed rows may be from the shared set's float16 rows: float16 keeps 11 bits
LINK_RTOL, LINK_ATOL = 2e-3, 1e-3
CARD_OVERHEAD = (
    64_000  # bytes per checkpoint planned for config.json, metrics.json, README.md, evaluation.json, headers
)
SAFETENSORS_HEADER = 16_384  # bytes planned for model.safetensors' JSON header (AGT's, the largest: 5.3 kB)


# -- compaction -------------------------------------------------------------------------------------


def _training_examples(train_config: dict, data_dir: str | None):
    task = load_task(
        train_config["task"],
        data_dir or train_config.get("data_dir") or None,
        phrases=train_config.get("phrases", False),
        fold=train_config.get("fold", 0),
    )
    train = task.train[: train_config["max_train"]] if train_config.get("max_train") else task.train
    if train_config.get("max_words"):
        train = [dataclasses.replace(e, words=e.words[: train_config["max_words"]]) for e in train]
    return task, train


def ranked_words(train, vocab: Vocab) -> list[str]:
    """Vocabulary words by training frequency (sentences only when phrases were added: a phrase repeats
    words of its sentence), ties alphabetically, as Vocab.build orders them. Words the training data
    never had (extra words from the vectors) are left out."""
    sentences = [e for e in train if not e.is_phrase] or train
    counts = Counter(w for e in sentences for w in e.words)
    counts.update({w: 0 for e in train for w in e.words if w not in counts})  # words only in phrases: last
    words = [w for w in counts if w in vocab.stoi and w not in (PAD, UNK)]
    return sorted(words, key=lambda w: (-counts[w], w))


def _json_bytes(word: str) -> int:
    return len(json.dumps(word, ensure_ascii=False).encode("utf-8")) + 2  # the word, ", "


@dataclass
class Plan:
    """What one run becomes: sizes to choose the word budget, the words in frequency order."""

    entry: Entry
    run_dir: Path
    ckpt: Checkpoint  # of the run's best epoch
    task: TaskData
    words: list[str]
    weight_bytes: int  # float16 weights without the embedding
    bytes_per_row: int  # float16 embedding row
    max_words: int  # at most: the training words, the entry's max_vocab, what keeps the weights file within max_file_mb
    link: tuple[str, str, Vectors] | None = None  # (lang, digest, vectors) of the shared set it reads, if linked
    link_note: str = ""  # why it is not linked (empty when it is, or has trainable embeddings)

    def size(self, n_words: int) -> int:
        if self.link is not None:  # every training word; rows only for the words the set lacks
            own = len(own_rows(self.ckpt.vocab, self.link[2]))
            return (
                self.weight_bytes + CARD_OVERHEAD + own * self.bytes_per_row + sum(_json_bytes(w) for w in self.words)
            )
        n = min(n_words, self.max_words)
        return (
            self.weight_bytes
            + CARD_OVERHEAD
            + (n + 2) * self.bytes_per_row
            + sum(_json_bytes(w) for w in self.words[:n])
        )


def link_problem(ckpt, vectors: Vectors) -> str | None:
    """Why the run cannot read the shared set, or None when its fixed rows are the set's rows."""
    model, vocab = ckpt.model, ckpt.vocab
    if model.embedding.weight.requires_grad:
        return "its embeddings are trained"
    if model.embedding.embedding_dim != vectors.dim:
        return f"its embeddings are {model.embedding.embedding_dim}-d, the set's {vectors.dim}-d"
    index = vectors.index()
    ids = [i for i, w in enumerate(vocab.itos) if i > vocab.unk_id and w in index]
    if not ids:
        return "no training word has a row in the set"
    expected = shared_rows(vectors, getattr(model.config, "unit_norm_vectors", False))[
        [index[vocab.itos[i]] for i in ids]
    ]
    actual = model.embedding.weight.detach()[ids].float()
    if not torch.allclose(actual, expected, rtol=LINK_RTOL, atol=LINK_ATOL):
        return (
            f"it was trained with other vectors (largest row difference {float((actual - expected).abs().max()):.3g}): "
            "retrain it with the current .cache/vectors file to link it"
        )
    return None


def plan_run(
    entry: Entry,
    data_dir: str | None = None,
    runs: Path | None = None,
    max_file_bytes: int | None = None,
    shared_set=None,
) -> Plan:
    """`shared_set(lang)` gives (digest, vectors) of the language's shared set or None (see bundle)."""
    cfg = entry.train_config(data_dir, runs)
    run_dir = cfg.output_dir()
    if not (run_dir / "best" / CONFIG).is_file():
        raise CheckpointError(f"{entry.key}: no trained run in {run_dir / 'best'} (train it, or drop --from-runs)")
    ckpt = load_checkpoint(run_dir / "best")
    if (ckpt.meta.get("task"), ckpt.meta.get("model")) != (entry.task, entry.model):
        raise CheckpointError(
            f"{run_dir / 'best' / CONFIG} holds {ckpt.meta.get('task')}/{ckpt.meta.get('model')}, not {entry.key}"
        )
    task, train = _training_examples(ckpt.meta.get("train_config", {"task": entry.task}), data_dir)
    embedding = ckpt.model.embedding.weight
    fixed = sum(
        t.numel() * (2 if t.is_floating_point() else t.element_size())
        for t in ckpt.model.state_dict().values()
        if t.data_ptr() != embedding.data_ptr()
    )
    words, row = ranked_words(train, ckpt.vocab), embedding.shape[1] * 2
    max_words = min(len(words), entry.max_vocab or len(words))
    if max_file_bytes is not None:  # the file holds the fixed weights, PAD and UNK, the kept rows and a header
        max_words = min(max_words, (max_file_bytes - SAFETENSORS_HEADER - fixed) // row - 2)
    link, note = None, ""
    if not embedding.requires_grad and shared_set is not None:
        found = shared_set(task.lang)
        note = "no shared vectors for its language" if found is None else link_problem(ckpt, found[1]) or ""
        if found is not None and not note:
            link = (task.lang, *found)
            max_words = len(words)
        elif note:
            log.warning("%s: not linked to the shared vectors: %s", entry.key, note)
    return Plan(entry, run_dir, ckpt, task, words, fixed, row, max_words, link, note)


def choose_vocab(plans: list[Plan], budget_bytes: int, config: BundleConfig) -> int:
    """The largest word budget (the same for every checkpoint) that keeps the total within budget_bytes."""

    def total(n: int) -> int:
        return sum(p.size(n) for p in plans)

    if capped := [p.entry.key for p in plans if p.link is None and p.max_words < min(config.min_vocab, len(p.words))]:
        raise ValueError(
            f"{', '.join(capped)}: max_file_mb = {config.max_file_mb} in {config.path} leaves room "
            f"for fewer than min_vocab = {config.min_vocab} words"
        )
    if total(config.min_vocab) > budget_bytes:
        raise ValueError(
            f"even {config.min_vocab} words per checkpoint need {total(config.min_vocab) / 1e6:.1f} MB, "
            f"over the {budget_bytes / 1e6:.1f} MB left of max_total_mb in {config.path}"
        )
    lo, hi = config.min_vocab, config.max_vocab
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if total(mid) <= budget_bytes else (lo, mid - 1)
    return lo


def prune(ckpt, keep: list[str]):
    """A copy of the model whose vocabulary is [PAD, UNK] + keep (rows gathered from the old embedding)."""
    itos = [PAD, UNK] + keep
    index = [ckpt.vocab.stoi[w] for w in itos]
    model = ckpt.model
    embedding_key = next(k for k, v in model.state_dict().items() if v.data_ptr() == model.embedding.weight.data_ptr())
    state = dict(model.state_dict())
    state[embedding_key] = state[embedding_key][index].clone()
    config = dataclasses.replace(model.config, vocab_size=len(itos))
    pruned = model_class(model.key)(config)
    pruned.load_state_dict(state, strict=True)
    return pruned.eval(), Vocab(itos)


def _coverage(examples, vocab: Vocab) -> float:
    tokens = [w for e in examples for w in e.words]
    return sum(w in vocab.stoi for w in tokens) / max(1, len(tokens))


def compact(plan: Plan, n_words: int, out_root: Path, config: BundleConfig) -> dict:
    """Write checkpoints/<task>/<model>/ from the run, re-evaluate it there, write metrics and card."""
    entry, ckpt, task = plan.entry, plan.ckpt, plan.task
    if plan.link is not None or n_words >= len(plan.words) and plan.max_words >= len(plan.words):
        model, vocab = ckpt.model.eval(), ckpt.vocab  # the whole training vocabulary
    else:
        model, vocab = prune(ckpt, plan.words[: min(n_words, plan.max_words)])
    staging = out_root / f".staging-{entry.task}-{entry.model}"
    shutil.rmtree(staging, ignore_errors=True)
    meta = {k: v for k, v in ckpt.meta.items() if k not in ("model", "config", "files", "shared_vectors")}
    meta["bundle"] = {
        "dtype": "float16",
        "vocab_size": len(vocab),
        "source_vocab_size": len(ckpt.vocab),
        "source_run": display_path(plan.run_dir),
    }
    save_checkpoint(staging, model, vocab, meta, half=True, shared_vectors=plan.link)

    # exactly what the app will load: float16 -> float32, its words (and the shared set's, when linked)
    bundled = load_checkpoint(staging, vectors_root=out_root)
    run_metrics_path = plan.run_dir / "metrics.json"
    run_metrics = json.loads(run_metrics_path.read_text(encoding="utf-8")) if run_metrics_path.is_file() else {}
    metrics = {
        "model": entry.model,
        "task": entry.task,
        "lang": task.lang,
        "labels": task.labels,
        "seed": entry.seed,
        "phrases": entry.phrases,
        "test": evaluate(bundled.model, task.test, bundled.vocab, task.labels),
        "extra_tests": {
            name: evaluate(bundled.model, ex, bundled.vocab, task.labels) for name, ex in task.extra_tests.items()
        },
        "measured_on": "this checkpoint (float16 weights, the vocabulary it loads with), re-evaluated after compaction",
        "checkpoint": {
            "dtype": "float16",
            "vocab_size": len(bundled.vocab),
            "training_words_kept": len(vocab) - 2,
            "source_vocab_size": len(ckpt.vocab),
            "test_token_coverage": _coverage(task.test, bundled.vocab),
            "source_test_token_coverage": _coverage(task.test, ckpt.vocab),
            "shared_vectors": (
                {"lang": plan.link[0], "sha256": plan.link[1], "words": len(plan.link[2].words)} if plan.link else None
            ),
            "not_linked": plan.link_note or None,
        },
        "source_run": {
            "path": display_path(plan.run_dir),
            "command": "python -m core.training.train " + " ".join(entry.train_argv()),
            "test_accuracy_full_precision": run_metrics.get("test", {}).get("accuracy"),
            "dev_accuracy": run_metrics.get("dev_accuracy"),
            "best_epoch": run_metrics.get("best_epoch"),
            "epochs_run": run_metrics.get("epochs_run"),
            "train_examples": run_metrics.get("train_examples"),
            "split": run_metrics.get("split", task.split_note),
            "vectors": run_metrics.get("vectors"),
            "commit": run_metrics.get("commit", ""),
        },
        "paper": paper_result(entry.model, entry.task, entry.phrases),
        "train_config": ckpt.meta.get("train_config", {}),
        "model_config": dataclasses.asdict(bundled.model.config),
        "parameters": sum(p.numel() for p in bundled.model.parameters()),
        "bundle_commit": git_commit(),
    }
    atomic_write_text(staging / "metrics.json", json.dumps(metrics, indent=2, ensure_ascii=False) + "\n")
    (staging / CARD).write_text(render_card(metrics, config), encoding="utf-8")
    final = out_root / entry.task / entry.model
    final.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(staging, final)
    unknown = 1 - _coverage(task.test, bundled.vocab)
    log.info(
        "%s: test accuracy %.4f after compaction (%d words%s, float16; the run had %s); unknown: %.2f%% "
        "of the test words",
        entry.key,
        metrics["test"]["accuracy"],
        len(bundled.vocab),
        " with the shared vectors" if plan.link else "",
        metrics["source_run"]["test_accuracy_full_precision"],
        100 * unknown,
    )
    return metrics


# -- the whole set ----------------------------------------------------------------------------------


def folder_bytes(root: Path) -> int:
    """Bytes of the files under root, hidden ones (staging folders) left out."""
    return sum(
        p.stat().st_size
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def write_shared_vectors(out: Path, lang: str, rows: int, max_file_bytes: int) -> tuple[str, Vectors] | None:
    """Write out/vectors/<lang>/ from the `rows` most frequent words of .cache/vectors/<lang>.safetensors;
    (digest, the set as it loads) or None when there is no such file."""
    source = VECTORS_CACHE / f"{lang}.safetensors"
    if not source.is_file():
        log.warning("no %s: the %s checkpoints cannot read shared vectors", display_path(source), lang)
        return None
    full = load_vectors(source)
    kept = Vectors(full.words[:rows], full.matrix[:rows])
    folder = out / SHARED_VECTORS_DIR / lang
    if (same := _unchanged_set(folder, kept)) is not None:  # a rewrite would change the digest the others link to
        log.info("shared vectors %s: unchanged, kept as they are", display_path(folder))
        return same
    digest = save_shared_vectors(
        kept,
        folder,
        max_file_bytes,
        source={
            "file": display_path(source),
            "sha256": sha256(source),
            "rows": len(full.words),
            "kept": f"the {len(kept.words)} most frequent words",
        },
    )
    log.info(
        "shared vectors %s: %d of %d words, %.1f MB",
        display_path(folder),
        len(kept.words),
        len(full.words),
        folder_bytes(folder) / 1e6,
    )
    return digest, load_shared_vectors(folder, digest)


def _unchanged_set(folder: Path, kept: Vectors) -> tuple[str, Vectors] | None:
    """(digest, set) of the set already in `folder` when it holds exactly `kept`'s words and float16 rows, else None.
    Re-bundling one checkpoint then leaves the set, and every other checkpoint's link to it, as it was."""
    try:
        digest = sha256(folder / SHARED_INDEX)
        existing = load_shared_vectors(folder, digest)
    except (OSError, ValueError):
        return None
    same = existing.words == kept.words and np.array_equal(
        existing.matrix, kept.matrix.astype(np.float16).astype(np.float32)
    )
    return (digest, existing) if same else None


def remove_unread_vectors(out: Path) -> list[Path]:
    """Remove the shared vectors sets that no checkpoint of `out` reads."""
    read = {
        json.loads(c.read_text(encoding="utf-8")).get("shared_vectors", {}).get("lang")
        for c in out.glob(f"*/*/{CONFIG}")
    }
    removed = [d for d in sorted((out / SHARED_VECTORS_DIR).glob("*")) if d.name not in read]
    for folder in removed:
        log.info("removing %s: no checkpoint reads it", folder)
        shutil.rmtree(folder)
    return removed


def clear_examples_cache(paths: list[Path] | None = None) -> list[Path]:
    """Remove Gradio's cached example outputs, which were computed with the old checkpoints."""
    if paths is None:
        paths = [EXAMPLES_CACHE] + (
            [Path(os.environ["GRADIO_EXAMPLES_CACHE"])] if os.environ.get("GRADIO_EXAMPLES_CACHE") else []
        )
    cleared = []
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path)
            cleared.append(path)
    return cleared


def bundle(
    config: BundleConfig,
    out: Path = BUNDLED,
    from_runs: bool = False,
    only: list[str] | None = None,
    data_dir: str | None = None,
    examples_cache: list[Path] | None = None,
    resume: bool = False,
    runs: Path | None = None,
    parallel: int = 0,
) -> dict:
    """Train (unless from_runs) and compact the configured set; returns {task/model: metrics}. With
    `parallel` the runs are Ray tasks, that many at a time here or all at once on RAY_ADDRESS's cluster
    (tools.release.parallel); without, one after another in this process."""
    entries = config.entries
    if only:
        unknown = sorted(set(only) - {e.key for e in entries})
        if unknown:
            raise ValueError(f"--only {unknown}: not in {config.path} ({', '.join(e.key for e in entries)})")
        entries = [e for e in entries if e.key in only]
    for entry in entries:  # validate every entry's arguments before hours of training
        entry.train_config(data_dir, runs)
    if not from_runs:
        start, configs = time.perf_counter(), {}
        for entry in entries:
            configs[entry.key] = cfg = entry.train_config(data_dir, runs)
            cfg.resume = resume
            log.info("training %s -> %s", entry.key, cfg.output_dir())
            if not parallel:
                Trainer.from_config(cfg).fit()
        if parallel:
            from tools.release.parallel import train_parallel  # Ray is imported only when it trains

            train_parallel(configs, parallel)
        log.info("trained %d runs in %.1f s", len(configs), time.perf_counter() - start)

    out.mkdir(parents=True, exist_ok=True)
    keys = {e.key for e in config.entries}
    for stale in sorted(out.glob("*/*")):  # make the folder exactly the configured set
        if (
            stale.is_dir()
            and stale.parent.name != SHARED_VECTORS_DIR
            and f"{stale.parent.name}/{stale.name}" not in keys
        ):
            log.warning("removing %s: not in %s", stale, config.path)
            shutil.rmtree(stale)
    for leftover in out.glob(".staging-*"):
        shutil.rmtree(leftover, ignore_errors=True)

    sets: dict[str, tuple[str, Vectors] | None] = {}

    def shared_set(lang: str) -> tuple[str, Vectors] | None:
        if lang not in sets:
            rows = config.shared_rows(lang)
            sets[lang] = write_shared_vectors(out, lang, rows, int(config.max_file_mb * 1e6)) if rows else None
        return sets[lang]

    plans = [plan_run(e, data_dir, runs, int(config.max_file_mb * 1e6), shared_set) for e in entries]
    kept = sum(
        folder_bytes(out / e.task / e.model)
        for e in config.entries
        if e not in entries and (out / e.task / e.model).is_dir()
    )
    kept += folder_bytes(out / SHARED_VECTORS_DIR) if (out / SHARED_VECTORS_DIR).is_dir() else 0
    n_words = choose_vocab(plans, int(config.max_total_mb * 1e6) - kept, config)
    log.info("vocabulary budget: %d words per checkpoint (max_total_mb = %g)", n_words, config.max_total_mb)
    results = {p.entry.key: compact(p, n_words, out, config) for p in plans}
    remove_unread_vectors(out)
    for directory in out.glob("*"):  # empty task folders left by removed entries
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
    write_manifest(out)
    total = folder_bytes(out)
    if total > config.max_total_mb * 1e6:
        raise ValueError(
            f"{out} holds {total / 1e6:.1f} MB, over max_total_mb = {config.max_total_mb} in {config.path}"
        )
    for path in clear_examples_cache(examples_cache):
        log.info("cleared %s", path)
    log.info("%s: %d checkpoints, %.1f MB, manifest written", out, len(list(out.glob("*/*/config.json"))), total / 1e6)
    return results


def rewrite_cards(config: BundleConfig, out: Path = BUNDLED) -> list[Path]:
    """Render every checkpoint's card again from its metrics.json, its paper number refreshed from
    configs/papers.toml (a change to the cards needs no retraining), then the manifest, which records the
    cards' sha256."""
    written = []
    for task, model in manifest_pairs(read_manifest(out)):
        folder = out / task / model
        metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
        metrics["paper"] = paper_result(model, task, metrics.get("phrases", False))
        atomic_write_text(folder / "metrics.json", json.dumps(metrics, indent=2, ensure_ascii=False) + "\n")
        atomic_write_text(folder / CARD, render_card(metrics, config))
        written.append(folder / CARD)
    write_manifest(out)
    return written


def check(out: Path = BUNDLED, max_total_mb: float | None = None, max_file_mb: float | None = None) -> list[str]:
    """Problems with the bundled folder (empty when it is fine): manifest, sizes, every checkpoint loads."""
    problems = []
    try:
        files = read_manifest(out)
    except CheckpointError as err:
        return [str(err)]
    listed = set(files) | {MANIFEST}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if path.is_file() and rel not in listed and not rel.startswith("."):
            problems.append(f"{path} is not recorded in {out / MANIFEST}")
    try:
        verify_vectors_against_manifest(out, files)
    except CheckpointError as err:
        problems.append(str(err))
    for task, model in manifest_pairs(files):
        try:
            verify_against_manifest(out, task, model, files)
            load_checkpoint(out / task / model)
        except CheckpointError as err:
            problems.append(str(err))
    config = read_bundle_config() if BUNDLE_CONFIG.is_file() else None
    limit = max_total_mb if max_total_mb is not None else (config.max_total_mb if config else BundleConfig.max_total_mb)
    if (total := folder_bytes(out)) > limit * 1e6:
        problems.append(f"{out} holds {total / 1e6:.1f} MB, over {limit} MB")
    file_limit = (
        max_file_mb if max_file_mb is not None else (config.max_file_mb if config else BundleConfig.max_file_mb)
    )
    for path in sorted(out.glob("*/*/*")):
        if path.is_file() and path.stat().st_size > file_limit * 1e6:
            problems.append(f"{path} holds {path.stat().st_size / 1e6:.2f} MB, over max_file_mb = {file_limit}")
    return problems


REPORT = PROJECT_ROOT / "reports" / "checkpoints.md"


def report(out: Path = BUNDLED, path: Path = REPORT) -> str:
    """reports/checkpoints.md: per shipped checkpoint, its words, the share of its test tokens it does not
    know, its test accuracy from the shipped files beside its run's; the folder's size and largest file."""
    files = read_manifest(out)
    rows = []
    for task, model in manifest_pairs(files):
        m = json.loads((out / task / model / "metrics.json").read_text(encoding="utf-8"))
        ck, run = m["checkpoint"], m["source_run"]
        full = run.get("test_accuracy_full_precision")
        linked = ck.get("shared_vectors")
        reads = (
            f"{ck.get('training_words_kept', ck['vocab_size'] - 2):,} training + shared {linked['lang']} vectors"
            if linked
            else f"{ck['vocab_size'] - 2:,} of {ck['source_vocab_size'] - 2:,} training words"
        )
        rows.append(
            f"| {task}/{model} | {reads} | {ck['vocab_size']:,} | {100 * (1 - ck['test_token_coverage']):.2f} "
            f"| {100 * (1 - ck['source_test_token_coverage']):.2f} | {100 * m['test']['accuracy']:.2f} "
            f"| {'' if full is None else f'{100 * full:.2f}'} | `{run['path']}` |"
        )
    sizes = {rel: info["bytes"] for rel, info in files.items()}
    vectors = {rel: b for rel, b in sizes.items() if rel.startswith(f"{SHARED_VECTORS_DIR}/")}
    largest = max(sizes, key=lambda rel: sizes[rel])
    header = (
        "| checkpoint | words it reads | vocabulary at prediction | unknown test tokens (%) "
        "| with the run's vocabulary (%) | test accuracy, shipped files (%) | the run's test accuracy (%) | run |"
    )
    text = f"""# Shipped checkpoints: vocabulary, unknown test tokens, accuracy

Written by `python -m tools.release.bundle report` (`make checkpoints-report`) from `checkpoints/*/*/metrics.json`,
which `make train` measures on the shipped files themselves (float16, loaded exactly as the app loads them).

*Unknown* = the share of the test set's tokens that the checkpoint reads as `<unk>`; *with the run's
vocabulary* = the same for the full training vocabulary of the run it was bundled from. A checkpoint linked to
the shared vectors (`checkpoints/{SHARED_VECTORS_DIR}/<lang>/`) knows its training words and every word of that set.

{header}
|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

Size: `checkpoints/` holds {sum(sizes.values()) / 1e6:.1f} MB in {len(sizes)} files (manifest.json aside), of which the
shared vectors {sum(vectors.values()) / 1e6:.1f} MB in {len(vectors)} files; the largest file is `{largest}`
({sizes[largest] / 1e6:.2f} MB; the Hub takes files up to 10 MB without LFS).
"""
    path.write_text(text, encoding="utf-8")
    return text


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    parser = argparse.ArgumentParser(prog="python -m tools.release.bundle", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train and bundle the checkpoints of configs/bundled.toml")
    train.add_argument("--config", default=str(BUNDLE_CONFIG), help="what to bundle (configs/bundled.toml)")
    train.add_argument("--from-runs", action="store_true", help="skip training: bundle the existing runs")
    train.add_argument("--only", action="append", default=[], metavar="TASK/MODEL", help="only this entry (repeatable)")
    train.add_argument("--resume", action="store_true", help="continue killed runs instead of starting fresh")
    train.add_argument("--data-dir", default=None, help="where the datasets are (default: the project's data folder)")
    train.add_argument("--out", default=str(BUNDLED), help="the bundled checkpoints folder")
    train.add_argument("--runs", default=None, help="the runs folder (default runs/)")
    train.add_argument(
        "--parallel",
        type=int,
        default=0,
        metavar="N",
        help="train as Ray tasks, N at a time on this machine (all at once on RAY_ADDRESS's cluster)",
    )
    cards = sub.add_parser(
        "cards", help="rewrite every checkpoint's model card from its metrics.json, and the manifest"
    )
    cards.add_argument("--config", default=str(BUNDLE_CONFIG), help="what to bundle (configs/bundled.toml)")
    cards.add_argument("--out", default=str(BUNDLED), help="the bundled checkpoints folder")
    verify = sub.add_parser("check", help="verify checkpoints/: manifest, size, every checkpoint loads")
    verify.add_argument("--out", default=str(BUNDLED), help="the bundled checkpoints folder")
    summary = sub.add_parser("report", help="reports/checkpoints.md: words, unknown test tokens, accuracy, sizes")
    summary.add_argument("--out", default=str(BUNDLED), help="the bundled checkpoints folder")
    summary.add_argument("--report", default=str(REPORT), help="the Markdown report to write")
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            problems = check(Path(args.out))
            for problem in problems:
                print(f"error: {problem}", file=sys.stderr)
            print(f"{args.out}: {'ok' if not problems else f'{len(problems)} problem(s)'}")
            return 0 if not problems else 1
        if args.command == "report":
            print(report(Path(args.out), Path(args.report)))
            return 0
        if args.command == "cards":
            for path in rewrite_cards(read_bundle_config(args.config), Path(args.out)):
                print(f"wrote {path}")
            return 0
        results = bundle(
            read_bundle_config(args.config),
            Path(args.out),
            args.from_runs,
            args.only,
            args.data_dir,
            resume=args.resume,
            runs=Path(args.runs) if args.runs else None,
            parallel=args.parallel,
        )
    except (CheckpointError, DataError, ValueError, FileNotFoundError, FloatingPointError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for key, metrics in results.items():
        print(
            f"{key:>24}  test {metrics['test']['accuracy']:.4f}  (before compaction "
            f"{metrics['source_run']['test_accuracy_full_precision']})  {metrics['checkpoint']['vocab_size']} words"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
