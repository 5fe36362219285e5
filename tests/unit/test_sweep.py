"""`make sweep`: a 2-trial, 1-epoch Ray Tune search on tiny data, resumed by running it again."""

import json

import pytest
from lab_fixture import RAY_GROUP

from core.models import MODELS, model_class
from core.training.config import TrainConfig
from core.training.recipes import load_recipe
from tools.bench.accuracy import load_runs, load_sweeps
from tools.research.sweep import command, sweep, trial_config, tune_space

pytestmark = RAY_GROUP  # the sweep's Ray (local_ray)


@pytest.mark.parametrize("model", list(MODELS))
def test_every_model_declares_a_search_space_of_known_settings(model):
    config_fields = set(model_class(model).config_class.__dataclass_fields__)
    space = load_recipe(model).search_space
    assert space and set(tune_space(space)) == set(space)
    for name in space:
        assert name in config_fields or name in TrainConfig.__dataclass_fields__, name


def test_a_trial_sets_training_settings_and_overrides_model_fields(tmp_path):
    cfg = trial_config(TrainConfig(model="dcnn", task="sst5", set=["k_top=3"]), {"lr": 0.05, "dropout": 0.4}, tmp_path)
    assert cfg.lr == 0.05 and cfg.set == ["k_top=3", "dropout=0.4"] and cfg.resume and cfg.out == str(tmp_path)
    assert (
        command(cfg)
        == "python -m core.training.train --model dcnn --task sst5 --seed 1 --lr 0.05 --set k_top=3 --set dropout=0.4"
    )


def test_unknown_distribution_is_refused():
    with pytest.raises(ValueError, match="unknown kind 'normal'"):
        tune_space({"lr": ("normal", 0, 1)})


def test_two_trial_sweep_writes_the_best_and_resumes(local_ray, tiny_data, tmp_path):
    base = TrainConfig(
        model="nbow", task="sst5", data_dir=str(tiny_data), vectors="none", set=["embed_dim=8", "hidden=6"]
    )
    record = sweep(base, samples=2, max_epochs=1, grace=1, name="nbow-tiny", root=tmp_path / "sweeps")
    saved = json.loads((tmp_path / "sweeps" / "nbow-tiny" / "best.json").read_text())
    assert saved == json.loads(json.dumps(record)) and len(record["trials"]) == 2
    best = record["best"]
    assert best["dev_accuracy"] == max(t["best_dev"] for t in record["trials"])
    # each trial is an ordinary trainer run: its metrics.json holds the dev accuracy the sweep reported
    metrics = json.loads(
        (tmp_path / "sweeps" / "nbow-tiny" / "trials" / best["run"].split("/")[-1] / "metrics.json").read_text()
    )
    assert metrics["dev_accuracy"] == best["dev_accuracy"] and set(best["config"]) == {"lr", "dropout"}
    again = sweep(
        base, samples=2, max_epochs=1, grace=1, name="nbow-tiny", root=tmp_path / "sweeps"
    )  # restored, not rerun
    assert again["best"] == best
    # make bench lists the sweep's best and leaves its trials out of the accuracy tables
    assert load_runs(tmp_path) == ([], []) and [x["best"] for x in load_sweeps(tmp_path)] == [best]
