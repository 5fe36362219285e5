"""The Train tab's defaults on a visitor's small file: every model learns in one epoch (an epoch of a small file makes
service.jobs.JOB_MIN_UPDATES updates), and a model that answers one class, or no better than the commonest class,
is said to be so on the Train tab and on its Lab panel."""

import pytest
from test_user_training import reviews, write_csv

from core.models import PAPER_MODELS
from core.training.config import MIN_BATCH, small_file_batch
from core.training.train import degenerate
from demo.lab_html import accuracy_text
from demo.tabs.checkpoints import Facts
from demo.tabs.train import status_text
from service.jobs import JOB_MIN_UPDATES, TrainRequest, job_dir, run_job, submit_job


@pytest.mark.parametrize("model", PAPER_MODELS)
def test_one_epoch_of_the_train_tab_s_defaults_beats_the_commonest_class(tmp_path, model):
    """200 rows, random vectors (the tab's default), one epoch: the recipes' 32-row batches made 5 updates, and
    the DCNN then answered one class on every seed."""
    csv = write_csv(tmp_path / "reviews.csv", reviews(200, seed=5))
    job = submit_job(TrainRequest(csv, model, "review", "stars", epochs=1), root=tmp_path / "um")
    done = run_job(job_dir(job["id"], tmp_path / "um"))
    metrics = done["metrics"]
    commonest = max(map(sum, metrics["confusion"])) / metrics["test_examples"]
    assert done["status"] == "done" and done["degenerate"] is None
    assert metrics["test_accuracy"] > commonest, (metrics["test_accuracy"], commonest)


def test_a_small_file_gets_batches_that_make_enough_updates():
    assert small_file_batch(32, 160, JOB_MIN_UPDATES) == MIN_BATCH == 4
    assert small_file_batch(32, 640, 40) == 16 and small_file_batch(32, 100_000, 40) == 32


def test_a_model_that_answers_one_class_or_no_better_than_the_commonest_is_degenerate():
    one_class = {"accuracy": 0.55, "confusion": [[0, 9], [0, 11]]}
    found = degenerate(one_class, ["1", "5"])
    assert found["code"] == "model_one_class" and found["params"] == {"label": "5", "accuracy": 0.55, "majority": 0.55}
    assert "answers 5 for every test row" in found["message"] and "Try more epochs" in found["message"]
    below = degenerate({"accuracy": 0.5, "confusion": [[5, 4], [6, 5]]}, ["1", "5"])
    assert below["code"] == "model_below_majority"
    assert degenerate({"accuracy": 0.9, "confusion": [[8, 1], [1, 10]]}, ["1", "5"]) is None


@pytest.mark.parametrize(
    "ui, labels, words",
    [
        ("en", ["1", "5"], "answers 5 for every test row"),
        ("zh", ["1", "5"], "都回答 5"),
        ("zh", ["negative", "positive"], "都回答 正面"),  # a class the page names in Chinese, named so here too
    ],
)
def test_the_train_tab_and_the_lab_panel_say_a_model_is_degenerate(ui, labels, words):
    warning = degenerate({"accuracy": 0.55, "confusion": [[0, 9], [0, 11]]}, labels)
    job = {
        "status": "done",
        "task": "reviews",
        "model": "dcnn",
        "metrics": {"test_accuracy": 0.55, "test_examples": 20},
        "stop": None,
        "degenerate": warning,
    }
    assert words in status_text(job, ui) and words not in status_text({**job, "degenerate": None}, ui)
    prediction = type("P", (), {"intervention": "none", "task": "reviews", "model": "dcnn"})()
    fact = Facts(0.55, None, "0" * 64, "abc", "reviews", warning)
    assert words in accuracy_text(prediction, fact, ui)
