"""tools.release.bundle: train the configured set, compact it (float16, pruned vocabulary), re-evaluate the
compact copy, and write metrics, model cards and the manifest. Tiny nbow runs on the synthetic data."""

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from safetensors import safe_open

import tools.release.bundle as bundle_module
from core.analysis.metrics import evaluate
from core.checkpoints.checkpoint import CheckpointError, load_checkpoint
from core.checkpoints.files import sha256
from core.checkpoints.manifest import read_manifest
from core.data import load_task
from tools.release.bundle import bundle, check, choose_vocab, main, plan_run
from tools.release.cards import render_card
from tools.release.config import read_bundle_config

TINY_ARGS = [
    "--set",
    "embed_dim=16",
    "--set",
    "hidden=12",
    "--vectors",
    "none",
    "--epochs",
    "1",
    "--batch-size",
    "8",
    "--no-progress",
]
ENTRIES = [("nbow", "sst5", True), ("nbow", "sst2", False)]


def write_config(path: Path, entries=ENTRIES, **settings) -> Path:
    settings = {"max_total_mb": 1.0, "max_vocab": 12, "min_vocab": 5, **settings}
    lines = ["[bundle]"] + [f"{k} = {json.dumps(v)}" for k, v in settings.items()]
    for model, task, phrases in entries:
        lines += [
            "",
            "[[checkpoint]]",
            f'model = "{model}"',
            f'task = "{task}"',
            f"phrases = {json.dumps(phrases)}",
            "seed = 1",
            f"args = {json.dumps(TINY_ARGS)}",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n", 2)[1])


@pytest.fixture(scope="module")
def bundled(tiny_data, tmp_path_factory):
    """Train both entries and bundle them (with a stale folder and a cached-examples folder to clear)."""
    root = tmp_path_factory.mktemp("bundle")
    config = read_bundle_config(write_config(root / "bundled.toml"))
    out = root / "checkpoints"
    (out / "sst5" / "dcnn").mkdir(parents=True)  # not in the config: must go
    (out / "sst5" / "dcnn" / "config.json").write_text("{}")
    cache = root / "cached_examples"
    (cache / "0").mkdir(parents=True)
    results = bundle(config, out, data_dir=str(tiny_data), examples_cache=[cache], runs=root / "runs")
    return {"root": root, "out": out, "config": config, "results": results, "cache": cache, "data": tiny_data}


def test_every_checkpoint_has_its_files_and_the_manifest_matches(bundled):
    out = bundled["out"]
    assert sorted(p.relative_to(out).as_posix() for p in out.glob("*/*")) == ["sst2/nbow", "sst5/nbow"]
    files = read_manifest(out)
    for key in ("sst5/nbow", "sst2/nbow"):
        for name in ("model.safetensors", "config.json", "vocab.json", "metrics.json", "README.md"):
            assert files[f"{key}/{name}"]["sha256"] == sha256(out / key / name)
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert on_disk == set(files) | {"manifest.json"}
    assert not bundled["cache"].exists()  # Gradio's cached examples were cleared
    assert check(out, max_total_mb=1.0) == []


def test_weights_are_float16_and_the_vocabulary_keeps_the_most_frequent_training_words(bundled):
    path = bundled["out"] / "sst5" / "nbow"
    with safe_open(str(path / "model.safetensors"), "pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.float16}
    vocab = json.loads((path / "vocab.json").read_text())
    task = load_task("sst5", bundled["data"], phrases=True)
    counts = Counter(w for e in task.train if not e.is_phrase for w in e.words)
    top = sorted(counts, key=lambda w: (-counts[w], w))[:12]
    assert vocab == ["<pad>", "<unk>"] + top
    ckpt = load_checkpoint(path)
    assert ckpt.model.embedding.weight.dtype == torch.float32 and ckpt.model.config.vocab_size == 14
    # the kept rows are the run's rows, rounded to float16
    run = load_checkpoint(bundled["root"] / "runs" / "sst5-phrases" / "nbow-s1" / "best")
    rows = run.model.embedding.weight[[run.vocab.stoi[w] for w in top]]
    assert torch.equal(ckpt.model.embedding.weight[2:], rows.half().float())


def test_recorded_accuracy_is_measured_on_the_compact_checkpoint(bundled):
    for key, metrics in bundled["results"].items():
        path = bundled["out"] / key
        saved = json.loads((path / "metrics.json").read_text())
        ckpt = load_checkpoint(path)
        task = load_task(ckpt.meta["task"], bundled["data"])
        assert saved["test"] == evaluate(ckpt.model, task.test, ckpt.vocab, task.labels) == metrics["test"]
        run_metrics = json.loads((Path(saved["source_run"]["path"]) / "metrics.json").read_text())  # absolute: tmp
        assert saved["source_run"]["test_accuracy_full_precision"] == run_metrics["test"]["accuracy"]
        assert saved["checkpoint"]["vocab_size"] == 14 and saved["checkpoint"]["dtype"] == "float16"
        assert 0 < saved["checkpoint"]["test_token_coverage"] <= saved["checkpoint"]["source_test_token_coverage"] <= 1


def test_model_card_front_matter_and_body(bundled):
    for key in ("sst5/nbow", "sst2/nbow"):
        card = (bundled["out"] / key / "README.md").read_text()
        meta = front_matter(card)
        metrics = json.loads((bundled["out"] / key / "metrics.json").read_text())
        # no library_name: the Hub knows no `pytorch` library; the tag says the framework
        assert (
            "library_name" not in meta and "pytorch" in meta["tags"] and meta["pipeline_tag"] == "text-classification"
        )
        assert meta["language"] == ["en"] and meta["metrics"] == ["accuracy"] and meta["datasets"]
        (entry,) = meta["model-index"]
        (result,) = entry["results"]
        assert result["task"]["type"] == "text-classification" and result["dataset"]["split"] == "test"
        assert result["metrics"][0] == {
            "type": "accuracy",
            "value": round(metrics["test"]["accuracy"], 4),
            "name": "Test accuracy (this float16 checkpoint, as shipped)",
        }
        assert f"**{100 * metrics['test']['accuracy']:.1f}%**" in card
        assert "python -m core.training.train --model nbow" in card
        assert "| paper (Lei et al. 2015, Table 1, their NBoW) |" in card  # the baseline's number in Lei's table
    from huggingface_hub import ModelCard

    parsed = ModelCard((bundled["out"] / "sst5" / "nbow" / "README.md").read_text())
    assert parsed.data.eval_results[0].metric_type == "accuracy"


def test_paper_number_sits_beside_ours(bundled):
    metrics = json.loads((bundled["out"] / "sst5" / "nbow" / "metrics.json").read_text())
    metrics.update(model="dcnn", paper={"accuracy": 48.5, "source": "Kalchbrenner et al. 2014, Table 1"})
    card = render_card(metrics, bundled["config"])
    assert "| paper (Kalchbrenner et al. 2014, Table 1) | 48.5% |" in card


def test_from_runs_rebundles_without_training(bundled, tmp_path, monkeypatch):
    monkeypatch.setattr(bundle_module.Trainer, "from_config", lambda *a, **k: pytest.fail("--from-runs must not train"))
    config = bundled["config"]
    rc = main(
        [
            "train",
            "--from-runs",
            "--config",
            str(config.path),
            "--out",
            str(tmp_path / "c"),
            "--runs",
            str(bundled["root"] / "runs"),
            "--data-dir",
            str(bundled["data"]),
        ]
    )
    assert rc == 0
    for key in ("sst5/nbow", "sst2/nbow"):
        assert (tmp_path / "c" / key / "model.safetensors").read_bytes() == (
            bundled["out"] / key / "model.safetensors"
        ).read_bytes()
    # --only re-bundles one entry and keeps the other
    before = (tmp_path / "c" / "sst2" / "nbow" / "metrics.json").stat().st_mtime_ns
    assert (
        main(
            [
                "train",
                "--from-runs",
                "--only",
                "sst5/nbow",
                "--config",
                str(config.path),
                "--out",
                str(tmp_path / "c"),
                "--runs",
                str(bundled["root"] / "runs"),
                "--data-dir",
                str(bundled["data"]),
            ]
        )
        == 0
    )
    assert (tmp_path / "c" / "sst2" / "nbow" / "metrics.json").stat().st_mtime_ns == before
    assert check(tmp_path / "c", max_total_mb=1.0) == []


def test_word_budget_follows_the_size_limit(bundled, tmp_path):
    plans = [plan_run(e, str(bundled["data"]), bundled["root"] / "runs") for e in bundled["config"].entries]
    config = read_bundle_config(write_config(tmp_path / "b.toml", max_vocab=1000, min_vocab=1))
    roomy = choose_vocab(plans, 10**6, config)
    tight = choose_vocab(plans, sum(p.size(5) for p in plans), config)
    assert tight == 5 < roomy
    with pytest.raises(ValueError, match="max_total_mb"):
        choose_vocab(plans, 1000, config)


def test_file_size_limit_caps_a_checkpoints_words(bundled):
    entry = bundled["config"].entries[0]
    free = plan_run(entry, str(bundled["data"]), bundled["root"] / "runs")
    limit = bundle_module.SAFETENSORS_HEADER + free.weight_bytes + (2 + 4) * free.bytes_per_row  # room for 4 words
    capped = plan_run(entry, str(bundled["data"]), bundled["root"] / "runs", max_file_bytes=limit)
    assert free.max_words > 4 and capped.max_words == 4 and capped.size(10**6) == capped.size(4)
    with pytest.raises(ValueError, match="max_file_mb"):
        choose_vocab([capped], 10**6, bundled["config"])  # min_vocab = 5
    assert check(bundled["out"], max_total_mb=1.0) == []
    assert "over max_file_mb = 0.0001" in "\n".join(check(bundled["out"], max_total_mb=1.0, max_file_mb=0.0001))


def test_missing_run_is_named(bundled, tmp_path):
    config = read_bundle_config(write_config(tmp_path / "b.toml"))
    with pytest.raises(CheckpointError, match="no trained run in .*nbow-s1"):
        bundle(
            config,
            tmp_path / "out",
            from_runs=True,
            data_dir=str(bundled["data"]),
            runs=tmp_path / "none",
            examples_cache=[],
        )


@pytest.mark.parametrize(
    "text, message",
    [
        ('[[checkpoint]]\nmodel = "../nbow"\ntask = "sst5"\n', "invalid model name"),
        ('[[checkpoint]]\nmodel = "nbow"\ntask = "sst5/../../x"\n', "invalid task name"),
        ('[[checkpoint]]\nmodel = "nbow"\ntask = "sst5"\ncolour = 1\n', "unknown keys"),
        ('[[checkpoint]]\nmodel = "nbow"\ntask = "sst5"\nargs = ["--task", "sst2"]\n', "cannot be in args"),
        (
            '[[checkpoint]]\nmodel = "nbow"\ntask = "sst5"\n[[checkpoint]]\nmodel = "nbow"\ntask = "sst5"\n',
            "listed twice",
        ),
        ("[bundle]\nmax_total_mb = 40\n", "no \\[\\[checkpoint\\]\\] entries"),
        ('[[checkpoint]]\nmodel = "nbow"\ntask = "sst5"\nseed = "one"\n', "integers"),
        ('[bundle]\nvectors_rows = { en = -1 }\n[[checkpoint]]\nmodel = "nbow"\ntask = "sst5"\n', "vectors_rows >= 0"),
    ],
)
def test_config_errors_name_the_file(tmp_path, text, message):
    path = tmp_path / "bundled.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as info:
        read_bundle_config(path)
    assert str(path) in str(info.value)


def test_project_config_lists_the_ten_checkpoints():
    config = read_bundle_config()
    assert {(e.task, e.model) for e in config.entries} == {
        (t, m) for t in ("sst5", "zh_sentiment") for m in ("tensor_cnn", "mrnn", "dcnn", "adasent", "agt")
    }
    assert config.max_total_mb <= 70 and config.max_file_mb <= 8  # every file under the Hub's 10 MB limit outside LFS
    # the shared sets: half the budget at most
    assert 0 < sum(config.shared_rows(lang) for lang in ("en", "zh")) * 300 * 2 <= 0.5 * config.max_total_mb * 1e6
    for entry in config.entries:
        entry.train_config()  # every entry's arguments parse


def test_check_reports_a_corrupt_or_unlisted_file(bundled, tmp_path):
    import shutil

    out = tmp_path / "c"
    shutil.copytree(bundled["out"], out)
    (out / "sst5" / "nbow" / "notes.txt").write_text("hello")
    data = bytearray((out / "sst2" / "nbow" / "vocab.json").read_bytes())
    data[5] ^= 1
    (out / "sst2" / "nbow" / "vocab.json").write_bytes(bytes(data))
    problems = "\n".join(check(out, max_total_mb=1.0))
    assert "sst5/nbow/notes.txt is not recorded" in problems
    assert "sst2/nbow/vocab.json does not match its sha256" in problems
    assert "over 0.0001 MB" in "\n".join(check(bundled["out"], max_total_mb=0.0001))


# -- frozen-vector runs linked to the shared vectors set ----------------------------------------------

FROZEN_ARGS = [
    "--set",
    "hidden=12",
    "--set",
    "freeze_embeddings=true",
    "--epochs",
    "1",
    "--batch-size",
    "8",
    "--no-progress",
]


def _vectors_file(folder: Path, words: list[str], seed: int) -> Path:
    from core.data.vectors import Vectors, save_vectors

    matrix = np.random.default_rng(seed).normal(size=(len(words), 12)).astype(np.float32)
    save_vectors(Vectors(words, matrix), folder / "en")
    return folder / "en.safetensors"


def test_a_frozen_run_reads_every_word_of_the_shared_set_and_a_mismatched_one_is_not_linked(
    tiny_data, tmp_path, monkeypatch
):
    train_words = sorted({w for e in load_task("sst5", str(tiny_data), phrases=True).train for w in e.words})
    known = [f"unseen{i}" for i in range(10)] + train_words[
        : len(train_words) // 2
    ]  # words it never saw, then half its words
    trained_with = _vectors_file(tmp_path / "a", known, seed=1)
    monkeypatch.setattr(bundle_module, "VECTORS_CACHE", tmp_path / "a")
    config_path = write_config(
        tmp_path / "bundled.toml", entries=[("nbow", "sst5", True)], vectors_rows=20, max_total_mb=2.0
    )
    config_path.write_text(
        config_path.read_text().replace(
            json.dumps(TINY_ARGS), json.dumps(FROZEN_ARGS + ["--vectors", str(trained_with)])
        )
    )
    config = read_bundle_config(config_path)
    out = tmp_path / "checkpoints"
    results = bundle(config, out, data_dir=str(tiny_data), runs=tmp_path / "runs")
    assert check(out, max_total_mb=2.0) == []
    shared = sorted(p.relative_to(out).as_posix() for p in (out / "vectors" / "en").iterdir())
    assert set(shared) <= set(read_manifest(out)) and "vectors/en/vectors.json" in shared
    ckpt = load_checkpoint(out / "sst5" / "nbow")
    assert ckpt.meta["shared_vectors"]["lang"] == "en"
    # every training word keeps its id, then the set's 20 most frequent rows' other words are known too
    run = load_checkpoint(tmp_path / "runs" / "sst5-phrases" / "nbow-s1" / "best")
    assert ckpt.vocab.itos[: len(run.vocab)] == run.vocab.itos
    assert set(ckpt.vocab.itos) == set(run.vocab.itos) | set(known[:20]) and "unseen3" in ckpt.vocab
    metrics = results["sst5/nbow"]
    assert (
        metrics["checkpoint"]["shared_vectors"]["words"] == min(20, len(known))
        and metrics["checkpoint"]["not_linked"] is None
    )
    assert metrics["test"]["accuracy"] == pytest.approx(metrics["source_run"]["test_accuracy_full_precision"], abs=0.03)
    # the same set from another source file (its rows rounded to float16, as the set stores them): the set and
    # its digest stay as they were, so re-bundling one checkpoint never breaks the links of the others
    from core.data.vectors import Vectors, load_vectors, save_vectors

    index = (out / "vectors" / "en" / "vectors.json").read_bytes()
    first = load_vectors(trained_with)
    save_vectors(Vectors(first.words, first.matrix.astype(np.float16).astype(np.float32)), tmp_path / "c" / "en")
    monkeypatch.setattr(bundle_module, "VECTORS_CACHE", tmp_path / "c")
    bundle(config, out, from_runs=True, data_dir=str(tiny_data), runs=tmp_path / "runs")
    assert (out / "vectors" / "en" / "vectors.json").read_bytes() == index and check(out, max_total_mb=2.0) == []
    # the same run against vectors it was not trained with: bundled plainly, with the reason
    monkeypatch.setattr(bundle_module, "VECTORS_CACHE", tmp_path / "b")
    _vectors_file(tmp_path / "b", known, seed=2)
    results = bundle(config, out, from_runs=True, data_dir=str(tiny_data), runs=tmp_path / "runs")
    assert "other vectors" in results["sst5/nbow"]["checkpoint"]["not_linked"]
    assert "shared_vectors" not in load_checkpoint(out / "sst5" / "nbow").meta
    assert not (out / "vectors").exists() and check(out, max_total_mb=2.0) == []
    # a table of rows with none for English: the run keeps its own rows, and says why
    monkeypatch.setattr(bundle_module, "VECTORS_CACHE", tmp_path / "a")
    config_path.write_text(config_path.read_text().replace("vectors_rows = 20", "vectors_rows = { zh = 20 }"))
    config = read_bundle_config(config_path)
    assert (config.shared_rows("en"), config.shared_rows("zh")) == (0, 20)
    results = bundle(config, out, from_runs=True, data_dir=str(tiny_data), runs=tmp_path / "runs")
    assert results["sst5/nbow"]["checkpoint"]["not_linked"] == "no shared vectors for its language"
    assert not (out / "vectors").exists() and check(out, max_total_mb=2.0) == []
