"""tools.bench: the smoke mode end to end on tiny runs and checkpoints trained here, and the pieces that
turn stored runs into the accuracy table (variant labels, reproduce commands, statistics)."""

import dataclasses
import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from core.models import model_class
from core.models.dcnn import DCNNConfig
from core.training.config import resolve_recipe
from core.training.recipes import load_recipe
from core.training.train import TrainConfig, Trainer, parse_args
from tools.bench.accuracy import (
    READ_FROM_SST5,
    accuracy_table,
    carry_over,
    field_defaults,
    load_runs,
    missing_runs,
    paper_bars,
    settings_digest,
    train_command,
    variant_label,
    vectors_source,
    vectors_used,
)
from tools.bench.cli import SMOKE, main
from tools.bench.served import measure_app
from tools.bench.smoke import SMOKE_MODELS, train_smoke_runs, write_synthetic_sst
from tools.bench.timing import growth_exponent, percentile

# (model, seed, phrases, extra train settings): 3 seeds of one model for mean ± std, a root-label run
# for Lei's 28 s/epoch ratio, and a non-default lr that must show up as a variant
PLAN = [
    ("tensor_cnn", 1, True, {}),
    ("tensor_cnn", 2, True, {}),
    ("tensor_cnn", 3, True, {}),
    ("tensor_cnn", 1, False, {}),
    ("dcnn", 1, True, {}),
    ("adasent", 1, True, {}),
    ("nbow", 1, True, {"lr": 0.05}),
]


@pytest.fixture(scope="module")
def tiny_runs(tiny_data, tmp_path_factory):
    """runs/ and checkpoints/sst5/<model>/ of tiny models trained for one epoch with core.training.train.Trainer."""
    root = tmp_path_factory.mktemp("bench")
    for model, seed, phrases, extra in PLAN:
        out = root / "runs" / ("sst5-phrases" if phrases else "sst5") / f"{model}-s{seed}"
        cfg = TrainConfig(
            model=model,
            task="sst5",
            phrases=phrases,
            seed=seed,
            epochs=1,
            vectors="none",
            out=str(out),
            data_dir=str(tiny_data),
            set=SMOKE_MODELS[model],
            progress=False,
            max_train=64,
            **extra,
        )
        Trainer.from_config(cfg).fit()
        if not (root / "checkpoints" / "sst5" / model).exists():
            shutil.copytree(out / "best", root / "checkpoints" / "sst5" / model)
    return root / "runs", root / "checkpoints"


def test_smoke_mode_end_to_end(tiny_runs, tiny_data, tmp_path):
    runs, checkpoints = tiny_runs
    out = tmp_path / "docs"
    assert (
        main(
            [
                "--smoke",
                "--runs",
                str(runs),
                "--checkpoints",
                str(checkpoints),
                "--data-dir",
                str(tiny_data),
                "--out",
                str(out),
                "--threads",
                "1",
            ]
        )
        == 0
    )
    report = json.loads((out / "benchmarks.json").read_text())
    models = sorted({m for m, *_ in PLAN})

    rows = {(r["model"], r["phrases"]): r for r in report["accuracy"]["rows"] if r["task"] == "sst5"}
    three = rows[("tensor_cnn", True)]
    assert three["n"] == 3 and three["seeds"] == [1, 2, 3] and three["std"] is not None
    assert three["paper"] == 51.2 and three["delta"] == pytest.approx(three["mean"] - 51.2)
    assert rows[("tensor_cnn", False)]["paper"] == 50.6  # root labels: Lei's other row
    assert "lr=0.05" in rows[("nbow", True)]["variant"] and "lr=" not in three["variant"]
    assert all(0 <= a <= 100 for r in rows.values() for a in r["accuracies"])
    assert all(c.startswith("python -m core.training.train") for r in rows.values() for c in r["commands"])
    # every SST-5 run is read as SST-2 too, a variant of its own beside the dedicated SST-2 runs
    read = [r for r in report["accuracy"]["rows"] if r["task"] == "sst2" and r["variant"].startswith(READ_FROM_SST5)]
    assert {(r["model"], r["n"]) for r in read if r["phrases"]} >= {("tensor_cnn", 3)}
    assert all(0 <= a <= 100 for r in read for a in r["accuracies"])
    missing = {(x["model"], x["task"]) for x in report["accuracy"]["missing"]}
    assert ("mrnn", "sst5") in missing and ("agt", "trec") in missing  # never trained: listed with a command

    speed = {(r["model"], r["phrases"]): r for r in report["speed"]}
    assert speed[("tensor_cnn", True)]["paper_s"] == 445 and speed[("tensor_cnn", False)]["paper_s"] == 28
    assert speed[("tensor_cnn", True)]["epochs_timed"] == 3
    assert speed[("tensor_cnn", True)]["ratio"] == pytest.approx(speed[("tensor_cnn", True)]["median_s"] / 445)

    assert sorted(report["inference"]) == models
    for x in report["inference"].values():
        assert (
            0 < x["forward"]["p50_ms"] <= x["forward"]["p95_ms"]
            and 0 < x["predict"]["p50_ms"] <= x["predict"]["p95_ms"]
        )
        assert x["batch64"]["sentences_per_s"] > 0
    assert sorted(report["steps"]) == models  # a forward and a training step per model and length
    for x in report["steps"].values():
        assert x["lengths"] == SMOKE["step_lengths"] and len(x["forward"]) == len(x["train_step"]) == len(
            SMOKE["step_lengths"]
        )
        assert all(0 < f["p50_ms"] for f in x["forward"] + x["train_step"])
    for x in report["scaling"].values():
        assert x["forward"]["lengths"] == SMOKE["lengths"] and all(t > 0 for t in x["forward"]["p50_ms"])
    measured = [m for m, x in report["memory"].items() if "not_run" not in x]
    assert len(measured) == 1
    stages = list(report["memory"][measured[0]]["stages_mib"].values())
    assert stages == sorted(stages) and stages[0] > 0  # peaks only grow
    app = report["app"]  # app.py served the tiny checkpoints in its own process
    assert app["status"] == "measured", app
    assert sorted(app["models"]) == models and 0 < app["rest"]["p50_ms"] and 0 < app["gradio_client"]["p50_ms"]

    text = (out / "benchmarks.md").read_text()
    for heading in (
        "## Machine",
        "## Accuracy",
        "### Not run",
        "## Training speed",
        "## Inference",
        "## Forward pass and training step",
        "## Scaling",
        "## Memory",
        "## Load test",
    ):
        assert heading in text
    command = "for s in 1 2 3; do python -m core.training.train --model mrnn --task sst5 --phrases --seed $s; done"
    assert f"`{command}`" in text
    assert "1†‡" in (out / "runs.md").read_text()  # the every-entry table, beside the headline page
    svg = ET.fromstring((out / "scaling.svg").read_text())
    assert len([e for e in svg.iter() if e.tag.endswith("polyline")]) == 2 * len(models)  # both panels, every model
    # every row below its paper's number (tiny runs all are) is drawn with a dev curve per seed
    assert sorted(three["dev_curves"]) == ["seed 1", "seed 2", "seed 3"]
    logged = [
        json.loads(line) for line in (runs / "sst5-phrases" / "tensor_cnn-s2" / "log.jsonl").read_text().splitlines()
    ]
    evals = [dev for entry in logged for dev in entry.get("dev_evals") or [entry["dev_accuracy"]]]
    assert three["dev_curves"]["seed 2"][1] == pytest.approx([100 * dev for dev in evals])
    assert three["dev_curves"]["seed 2"][0][-1] == pytest.approx(logged[-1]["epoch"])
    missed = [r for r in report["accuracy"]["rows"] if r.get("delta") is not None and r["delta"] < 0]
    curves = ET.fromstring((out / "dev_curves.svg").read_text())
    assert (
        len([e for e in curves.iter() if e.tag.endswith("polyline")]) == sum(len(r["dev_curves"]) for r in missed) >= 3
    )
    assert "![dev curves of the missed bars](dev_curves.svg)" in text


def test_without_checkpoints_every_measurement_says_not_run(tiny_runs, tmp_path):
    runs, _ = tiny_runs
    out = tmp_path / "docs"
    main(
        [
            "--runs",
            str(runs),
            "--checkpoints",
            str(tmp_path / "none"),
            "--out",
            str(out),
            "--threads",
            "1",
            "--sections",
            "accuracy,inference,scaling,memory",
        ]
    )
    report = json.loads((out / "benchmarks.json").read_text())
    assert "inference" not in report and "make train" in report["checkpoints_note"]
    text = (out / "benchmarks.md").read_text()
    assert text.count("Not run: no checkpoints for task `sst5`") == 3  # inference, scaling, memory
    assert "## Training speed\n\nNot run (section not selected)." in text


def test_reconstructed_command_reproduces_the_config(tiny_runs):
    runs, _ = tiny_runs
    metrics, _ = load_runs(runs)
    assert len(metrics) == len(PLAN)  # the copies in best/ are not counted twice
    for m in metrics:
        command = train_command(m["train_config"])
        parsed = dataclasses.asdict(parse_args(command.split()[3:]))
        for name in ("out", "resume", "progress"):
            parsed.pop(name), m["train_config"].pop(name)
        assert parsed == m["train_config"], command


def _default_metrics(model: str, task: str) -> dict:
    """metrics.json fields of a run with the model's own recipe, its task preset and pretrained vectors."""
    cls = model_class(model)
    train = dataclasses.asdict(resolve_recipe(TrainConfig(model=model, task=task)))  # as core.training.train stores it
    config = field_defaults(cls.config_class) | load_recipe(model).preset(task) | {"vocab_size": 50, "num_classes": 2}
    return {
        "model": model,
        "task": task,
        "vectors": {"file": ".cache/vectors/en.safetensors"},
        "train_config": train,
        "model_config": config,
    }


def test_variant_labels():
    base = _default_metrics("tensor_cnn", "sst2")
    assert variant_label(base) == ""  # the paper's recipe and the task preset
    assert vectors_used([dict(base, vectors={"file": "x/en.safetensors", "fraction": 0.91})]) == "en (91% of vocab)"
    folds = [dict(base, vectors={"file": "x/en.safetensors", "fraction": f, "pca_from": 300}) for f in (0.91, 0.924)]
    assert len({vectors_source(m) for m in folds}) == 1  # coverage differs by fold, the source does not
    assert vectors_used(folds) == "en (91–92% of vocab, PCA 300-d to 300-d)"
    # --vectors auto that found nothing: the trainer then trains the random vectors; a fact, not a variant
    auto_none = dict(base, vectors=None, model_config=dict(base["model_config"], freeze_embeddings=False))
    assert variant_label(auto_none) == "" and vectors_used([auto_none]) == "random"
    explicit_none = dict(auto_none, train_config=dict(base["train_config"], vectors="none"))
    assert variant_label(explicit_none) == "vectors=none"
    lr = base["train_config"]["lr"] * 3
    changed = dict(
        base,
        model_config=dict(base["model_config"], decay=0.123),
        train_config=dict(base["train_config"], lr=lr, set=["decay=0.123"]),
    )
    assert variant_label(changed) == f"lr={lr!r} · decay=0.123"
    dcnn = dict(_default_metrics("dcnn", "trec"), vectors=None)
    assert dcnn["model_config"]["widths"] != field_defaults(DCNNConfig)["widths"]  # the TREC preset applies
    assert variant_label(dcnn) == ""


def test_runs_differing_only_in_vectors_are_not_averaged():
    base = dict(
        _default_metrics("nbow", "sst5"), phrases=True, seed=1, test={"accuracy": 0.4}, dev_accuracy=0.4, path="a"
    )
    random_init = dict(base, vectors=None, seed=2, test={"accuracy": 0.3}, path="b")
    rows = accuracy_table([base, random_init])
    assert [(r["vectors"], r["n"]) for r in rows] == [("en (0% of vocab)", 1), ("random", 1)]
    assert not any(
        x["model"] == "nbow" and x["task"] == "sst5" and x["missing_seeds"] == [1, 2, 3] for x in missing_runs(rows)
    )  # both count as the default variant: seed 3 is what is missing


def test_paper_bars_pick_the_complete_entry_best_on_dev():
    """Each paper number is set beside the entry with 3 seeds (10 folds on MR) whose mean dev is highest, never
    a one-seed entry, whatever their test numbers."""

    def row(variant, seeds, dev, test, folds=(0,), task="trec"):
        return {
            "task": task,
            "phrases": False,
            "model": "dcnn" if task == "trec" else "adasent",
            "variant": variant,
            "vectors": "en",
            "n": len(seeds) * len(folds),
            "seeds": list(seeds),
            "folds": list(folds),
            "mean": test,
            "std": 1.0,
            "dev_mean": dev,
            "delta": test - 93.0,
        }

    rows = [
        row("", [1, 2, 3], 86.0, 88.0),
        row("lucky", [1], 99.0, 95.0),
        row("better dev", [1, 2, 3], 87.0, 87.0),
        row("", [1], 80.0, 78.0, folds=range(10), task="mr"),
        row("fold 0", [1, 2, 3], 90.0, 80.0, task="mr"),
    ]
    bars = {(b["model"], b["task"]): b for b in paper_bars(rows)}
    assert bars[("dcnn", "trec")]["row"] == 3 and bars[("dcnn", "trec")]["variants"] == 3
    assert rows[bars[("dcnn", "trec")]["row"] - 1]["variant"] == "better dev"  # chosen on dev, though its test is lower
    assert bars[("adasent", "mr")]["row"] == 4  # the 10-fold entry; three seeds on one fold are not complete


def test_statistics_helpers():
    assert percentile(list(range(1, 101)), 50) == pytest.approx(50.5)
    assert percentile([3.0], 95) == 3.0
    lengths = [5, 10, 20, 50, 100, 200, 400]
    assert growth_exponent(lengths, [0.01 * n for n in lengths]) == pytest.approx(1.0)
    assert growth_exponent(lengths, [1e-4 * n * n for n in lengths]) == pytest.approx(2.0)
    assert growth_exponent([5, 10], [1.0, 2.0]) is None  # nothing at L >= 50 to fit


def test_synthetic_data_and_smoke_training(tmp_path):
    """The self-contained path of `make bench-smoke`: synthetic SST trees, one tiny run, its checkpoint."""
    data = write_synthetic_sst(tmp_path / "data")
    runs, checkpoints = train_smoke_runs(data, tmp_path, plan=[("nbow", 1, True)])
    assert (checkpoints / "sst5" / "nbow" / "config.json").is_file()
    assert load_runs(runs)[0][0]["train_examples"] == 64


def test_an_app_that_does_not_start_is_reported_not_fatal(monkeypatch, tmp_path):
    import subprocess
    import sys

    import tools.bench.loadtest

    def start_app(checkpoints, port, log_file):
        return subprocess.Popen(
            [sys.executable, "-c", "print('the app is half-written'); raise SystemExit(3)"],
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )

    monkeypatch.setattr(tools.bench.loadtest, "start_app", start_app)
    result = measure_app(tmp_path, "sst5", ["nbow"], ["a good film"], reps=1)
    assert (
        result["status"] == "failed" and "exited with status 3" in result["note"] and "half-written" in result["note"]
    )


def test_a_rerun_of_a_seed_replaces_the_earlier_run():
    runs = [
        {
            "task": "trec",
            "model": "dcnn",
            "seed": int(directory[-1]),
            "dev_accuracy": accuracy,
            "test": {"accuracy": accuracy},
            "train_config": {"model": "dcnn", "task": "trec"},
            "path": directory,
            "mtime": mtime,
        }
        for directory, accuracy, mtime in (("dcnn-long-s1", 0.45, 2.0), ("dcnn-s1", 0.40, 1.0), ("dcnn-s2", 0.42, 3.0))
    ]
    (row,) = accuracy_table(runs)
    assert row["seeds"] == [1, 2] and row["accuracies"] == pytest.approx([45.0, 42.0])


def test_timing_runs_count_for_speed_only(tmp_path):
    for folder, accuracy in (("sst5-phrases/nbow-s1", 0.44), ("timing/nbow-s1", 0.30)):
        (tmp_path / folder).mkdir(parents=True)
        metrics = {
            "task": "sst5",
            "phrases": True,
            "model": "nbow",
            "seed": 1,
            "dev_accuracy": accuracy,
            "test": {"accuracy": accuracy},
            "epoch_seconds": [10.0],
            "train_examples": 100,
            "train_config": {"model": "nbow", "task": "sst5", "phrases": True},
        }
        (tmp_path / folder / "metrics.json").write_text(json.dumps(metrics))
    runs, _ = load_runs(tmp_path)
    assert sorted(m["timing_only"] for m in runs) == [False, True]
    out = tmp_path / "docs"
    assert main(["--runs", str(tmp_path), "--sections", "accuracy,speed", "--out", str(out)]) == 0
    report = json.loads((out / "benchmarks.json").read_text())
    assert [r["accuracies"] for r in report["accuracy"]["rows"]] == [[44.0]]
    # speed: the dedicated timing run gets its own row (first), apart from the training run
    assert [(r["runs"], r["timing_only"]) for r in report["speed"]] == [(1, True), (1, False)]
    # re-reading the runs alone keeps the sections it did not select, dated
    assert main(["--runs", str(tmp_path), "--sections", "accuracy", "--out", str(out)]) == 0
    again = json.loads((out / "benchmarks.json").read_text())
    assert again["speed"] == report["speed"] and again["carried_sections"] == {"speed": report["generated"]}
    assert f"kept as an earlier run measured them: speed ({report['generated']})" in (out / "benchmarks.md").read_text()


def test_make_bench_keeps_the_history_whose_runs_are_elsewhere(tmp_path):
    """A runs folder that lacks earlier runs does not erase them: the previous benchmarks.json's rows for groups
    not measured now are kept, marked with the report that measured them, in table order; a group measured now
    replaces its earlier row's runs of the same seeds, and a row read from the same run folder under another label
    is dropped."""

    def metrics(folder, model, seed, accuracy):
        (tmp_path / "runs" / folder).mkdir(parents=True)
        (tmp_path / "runs" / folder / "metrics.json").write_text(
            json.dumps(
                {
                    "task": "trec",
                    "model": model,
                    "seed": seed,
                    "dev_accuracy": accuracy,
                    "test": {"accuracy": accuracy},
                    "train_config": {"model": model, "task": "trec"},
                }
            )
        )

    metrics("trec/dcnn-s1", "dcnn", 1, 0.875)
    runs, _ = load_runs(tmp_path / "runs")
    (now,) = accuracy_table(runs)
    old = lambda model, variant, paths, mean: dict(
        now, model=model, variant=variant, paths=paths, mean=mean, accuracies=[mean]
    )
    previous = {
        "generated": "2026-11-22 14:28 UTC",
        "accuracy": {
            "rows": [
                old("dcnn", "", ["runs/trec/dcnn-s9"], 86.4),  # the same group: replaced by the run measured now
                old("dcnn", "older label", now["paths"], 80.0),  # the same run folder under an older label: replaced
                old("adasent", "", ["runs/trec/adasent-s1"], 85.5),  # not here: kept
                old("nbow", "", ["runs/trec/nbow-s1"], 89.6),
            ]
        },
    }  # not here: kept, last in table order
    rows = carry_over([now], previous)
    assert [(r["model"], r["mean"], r.get("carried_from")) for r in rows] == [
        ("dcnn", 87.5, None),
        ("adasent", 85.5, "2026-11-22 14:28 UTC"),
        ("nbow", 89.6, "2026-11-22 14:28 UTC"),
    ]
    assert (
        carry_over(rows, {"generated": "later", "accuracy": {"rows": rows}})[1]["carried_from"]
        == "2026-11-22 14:28 UTC"
    )
    # a folder read now but superseded by a longer rerun of its seed is in no row, and still is not history
    superseded = old("dcnn", "older label", ["runs/trec-short/dcnn-s1"], 80.0)
    assert carry_over([now], {"accuracy": {"rows": [superseded]}}, read={"runs/trec-short/dcnn-s1"}) == [now]
    # make bench does it with the benchmarks.json it is about to replace
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "benchmarks.json").write_text(json.dumps(previous))
    assert main(["--sections", "accuracy", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "docs")]) == 0
    written = json.loads((tmp_path / "docs" / "benchmarks.json").read_text())
    assert [r["model"] for r in written["accuracy"]["rows"]] == ["dcnn", "adasent", "nbow"]
    text = (tmp_path / "docs" / "runs.md").read_text()
    assert "| 1†§ |" in text and "carried over from the report of 2026-11-22 14:28 UTC" in text


def test_a_group_measured_again_keeps_the_earlier_seeds_it_lacks():
    """Re-running seed 1 of a group on a machine without seeds 2-3 merges: the row has all three seeds, the new
    seed 1 in place of the old, its mean and dev mean recomputed. A row trained with other settings (or unknown
    ones) is replaced as before."""
    now = {
        "task": "sst5", "phrases": True, "model": "dcnn", "variant": "", "vectors": "en", "n": 1, "seeds": [1],
        "folds": [0], "accuracies": [50.0], "mean": 50.0, "std": None, "dev_mean": 52.0, "devs": [52.0],
        "run_folds": [0], "commits": ["new"], "run_commits": ["new"], "commands": ["train s1 again"],
        "paths": ["runs/sst5-phrases/dcnn-s1"], "paper": 48.5, "delta": 1.5, "settings": "0123abcd",
    }  # fmt: skip
    curves = {f"seed {s}": [[1.0, 2.0], [dev - 1, dev]] for s, dev in ((1, 40.0), (2, 46.0), (3, 48.0))}
    before = dict(
        now, n=3, seeds=[1, 2, 3], accuracies=[41.0, 45.0, 47.0], mean=44.33, dev_mean=44.67, devs=[40.0, 46.0, 48.0],
        run_folds=[0, 0, 0], commits=["a", "b"], run_commits=["a", "a", "b"],
        commands=["train s1", "train s2", "train s3"], paths=[f"runs/sst5-phrases/dcnn-s{s}" for s in (1, 2, 3)],
        delta=-4.17, dev_curves=curves,
    )  # fmt: skip
    (row,) = carry_over([now], {"generated": "2026-11-25 02:11 UTC", "accuracy": {"rows": [before]}})
    assert (row["seeds"], row["accuracies"], row["devs"]) == ([1, 2, 3], [50.0, 45.0, 47.0], [52.0, 46.0, 48.0])
    assert row["mean"] == pytest.approx(142 / 3) and row["dev_mean"] == pytest.approx(146 / 3) and row["n"] == 3
    assert row["delta"] == pytest.approx(142 / 3 - 48.5) and row["commands"] == [
        "train s1 again",
        "train s2",
        "train s3",
    ]
    assert row["carried_paths"] == ["runs/sst5-phrases/dcnn-s2", "runs/sst5-phrases/dcnn-s3"]
    assert row["merged_from"] == "2026-11-25 02:11 UTC" and row["commits"] == ["a", "b", "new"]
    assert list(row["dev_curves"]) == ["seed 2", "seed 3"]  # seed 1's new run has no curve in this row
    # merged once, merged again: the row splits by its own per-run lists
    assert carry_over([now], {"generated": "later", "accuracy": {"rows": [row]}})[0]["seeds"] == [1, 2, 3]
    # a seed read now in another folder (a longer rerun superseded it) is not carried either
    read = {"runs/sst5-phrases/dcnn-s1", "runs/other/dcnn-s2"}
    assert carry_over([now], {"accuracy": {"rows": [dict(before, paths=[before["paths"][0], "runs/other/dcnn-s2",
           before["paths"][2]])]}}, read)[0]["seeds"] == [1, 3]  # fmt: skip
    # the same label under other defaults (another settings digest), or an older report's row without one
    assert carry_over([now], {"accuracy": {"rows": [dict(before, settings="fedc4321")]}}) == [now]
    unknown = {k: v for k, v in before.items() if k != "settings"}
    assert carry_over([now], {"accuracy": {"rows": [unknown]}}) == [now]


def test_settings_digest_reads_a_setting_unknown_then_as_its_default():
    run = {"train_config": {"model": "dcnn", "lr": 0.1, "seed": 1, "epochs": 8}, "model_config": {"k_top": 4}}
    same = {
        "train_config": {"model": "dcnn", "lr": 0.1, "seed": 2, "epochs": 20, "adagrad_root_eps": 0.0},
        "model_config": {"k_top": 4, "vocab_size": 900},
    }  # another seed and budget, a setting added since at its default, another vocabulary
    assert settings_digest(run) == settings_digest(same)
    assert settings_digest(run) != settings_digest({**run, "train_config": {**run["train_config"], "lr": 0.05}})
    assert settings_digest(run) != settings_digest({**run, "model_config": {"k_top": 5}})
