"""Why a training run ended (core.training.train.STOP_TEXT): the trainer says it for each way a run stops, on
tiny data, and a job records it (and a cancel's) where /train_status reads it."""

import csv
import json

from core.training.train import TrainConfig, Trainer
from service.jobs import cancel_job, read_job, submit_job, update_job


def _fit(tiny_data, out, **settings) -> tuple[Trainer, dict]:
    cfg = TrainConfig(
        model="nbow",
        task="sst5",
        vectors="none",
        out=str(out),
        data_dir=str(tiny_data),
        set=["embed_dim=8", "hidden=6"],
        progress=False,
        batch_size=16,
        **settings,
    )
    trainer = Trainer.from_config(cfg)
    return trainer, trainer.fit()


def test_a_run_that_trains_every_epoch_says_so(tiny_data, tmp_path):
    trainer, metrics = _fit(tiny_data, tmp_path, epochs=2, patience=5)
    assert metrics["stop"] == {
        "code": "stop_epochs",
        "params": {"epochs": 2},
        "message": "Trained every epoch asked for: 2.",
    }
    assert json.loads((tmp_path / "metrics.json").read_text())["stop"]["code"] == "stop_epochs"


def test_patience_stops_a_run_whose_dev_accuracy_stays_put(tiny_data, tmp_path):
    # lr 0: the first evaluation is the best there will be, and every epoch after it is one without a better dev
    trainer, metrics = _fit(tiny_data, tmp_path, epochs=10, patience=2, lr=0.0)
    stop = metrics["stop"]
    assert stop["code"] == "stop_patience" and trainer.epoch == 3 == metrics["epochs_run"]
    assert stop["params"] == {
        "epoch": 3,
        "epochs": 10,
        "patience": 2,
        "best_dev": metrics["dev_accuracy"],
        "best_epoch": 1,
    }
    assert stop["message"].startswith("Stopped early at epoch 3 of 10: dev accuracy did not improve for 2 epochs")


def test_the_time_budget_stops_a_run_after_the_epoch_that_spends_it(tiny_data, tmp_path):
    trainer, metrics = _fit(tiny_data, tmp_path, epochs=5, max_minutes=1e-6)
    assert metrics["stop"]["code"] == "stop_time" and metrics["epochs_run"] == 1
    assert metrics["stop"]["message"] == "Stopped after epoch 1 of 5: the 1e-06-minute time budget was spent."


def test_a_budget_spent_on_the_last_epoch_is_not_blamed(tiny_data, tmp_path):
    _, metrics = _fit(tiny_data, tmp_path, epochs=1, max_minutes=1e-6)
    assert metrics["stop"]["code"] == "stop_epochs"


def test_a_cancelled_job_records_the_epoch_it_was_in(tmp_path):
    data = tmp_path / "reviews.csv"
    with open(data, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [("review", "stars")] + [(f"a {'good' if i % 2 else 'bad'} film number {i}", i % 2) for i in range(40)]
        )
    root = tmp_path / "um"
    waiting, job = (submit_job(data, "dcnn", epochs=4, root=root) for _ in range(2))
    folder = root / "jobs" / job["id"]
    update_job(folder, status="running", started=1.0, progress=1.5)
    cancelled = cancel_job(job["id"], root)
    assert cancelled["stop"]["code"] == "stop_cancelled" and cancelled["stop"]["params"] == {"epoch": 2, "epochs": 4}
    assert read_job(folder)["stop"] == cancelled["stop"]
    assert "stop" not in cancel_job(waiting["id"], root)  # it never trained: no epoch to name
