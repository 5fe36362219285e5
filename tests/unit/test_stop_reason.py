"""Why a training run ended (core.training.train.STOP_TEXT): the trainer says it for each way a run stops, on
tiny data, and a job records it (and a cancel's) where /train_status reads it."""

import csv
import json
import os

from core.data.batching import bucket_batches
from core.training.train import TrainConfig, Trainer
from service import jobs
from service.jobs import TrainRequest, cancel_job, read_job, run_job, submit_job, update_job


def _trainer(tiny_data, out, **settings) -> Trainer:
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
    return Trainer.from_config(cfg)


def _fit(tiny_data, out, **settings) -> tuple[Trainer, dict]:
    trainer = _trainer(tiny_data, out, **settings)
    return trainer, trainer.fit()


def _slow(trainer: Trainer, seconds: float) -> list[int]:
    """Each training step takes `seconds` on the trainer's clock (a fake one: no test waits); the steps taken."""
    now, steps = [0.0], []
    step = trainer.optimizers[0].step

    def timed_step(*args, **kwargs):
        now[0] += seconds
        steps.append(1)
        return step(*args, **kwargs)

    trainer.optimizers[0].step = timed_step
    trainer.clock = lambda: now[0]
    return steps


def _batches_per_epoch(trainer: Trainer) -> int:
    return len(bucket_batches(trainer.task.train, trainer.vocab, trainer.cfg.batch_size, seed=trainer.cfg.seed * 1000))


def _reviews(tmp_path, rows: int = 40):
    data = tmp_path / "reviews.csv"
    with open(data, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [("review", "stars")] + [(f"a {'good' if i % 2 else 'bad'} film number {i}", i % 2) for i in range(rows)]
        )
    return data


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


def test_the_time_budget_stops_a_run_at_the_batch_that_spends_it(tiny_data, tmp_path):
    trainer = _trainer(tiny_data, tmp_path, epochs=5, max_minutes=0.5)
    steps, per_epoch = _slow(trainer, 10.0), _batches_per_epoch(trainer)  # 30 s: spent by the third batch
    assert per_epoch > 3
    metrics = trainer.fit()
    assert len(steps) == 3 and metrics["epochs_run"] == 0 and trainer.history == []
    assert metrics["stop"]["params"] == {"epoch": round(3 / per_epoch, 2), "epochs": 5, "minutes": 0.5}
    assert metrics["stop"]["message"].endswith(" of 5: the 0.5-minute time budget was spent.")
    # the best checkpoint is the dev evaluation made as it stopped: the model of those 3 batches
    assert metrics["best_epoch"] == 1 and (tmp_path / "best" / "metrics.json").is_file()


def test_a_budget_spent_by_an_epoch_last_batch_stops_after_it_and_is_not_blamed_on_the_last(tiny_data, tmp_path):
    per_epoch = _batches_per_epoch(_trainer(tiny_data, tmp_path / "probe"))
    for epochs, stop in ((2, "stop_time"), (1, "stop_epochs")):
        trainer = _trainer(tiny_data, tmp_path / str(epochs), epochs=epochs, max_minutes=per_epoch)
        steps = _slow(trainer, 60.0)  # the budget is one epoch's batches
        metrics = trainer.fit()
        assert len(steps) == per_epoch and metrics["epochs_run"] == 1 and metrics["stop"]["code"] == stop
    assert metrics["stop"]["message"] == "Trained every epoch asked for: 1."


def test_a_resumed_job_has_the_budget_its_earlier_runs_left(tmp_path, monkeypatch):
    root = tmp_path / "um"
    job = submit_job(TrainRequest(_reviews(tmp_path), "dcnn", epochs=5, minutes=0.5), root=root)
    folder = root / "jobs" / job["id"]
    update_job(folder, seconds_used=20.0)  # what its worker recorded before the app restarted (recover_jobs)
    build, steps = jobs.job_trainer, []

    def slow_trainer(*args) -> Trainer:
        trainer = build(*args)
        steps.append(_slow(trainer, 5.0))
        return trainer

    monkeypatch.setattr(jobs, "job_trainer", slow_trainer)
    done = run_job(folder, parent=os.getppid())
    assert done["status"] == "done" and done["stop"]["code"] == "stop_time"
    assert len(steps[0]) == 2 and done["seconds_used"] == read_job(folder)["seconds_used"] == 30.0  # 10 s left


def test_a_cancelled_job_records_the_epoch_it_was_in(tmp_path):
    data, root = _reviews(tmp_path), tmp_path / "um"
    waiting, job = (submit_job(TrainRequest(data, "dcnn", epochs=4), root=root) for _ in range(2))
    folder = root / "jobs" / job["id"]
    update_job(folder, status="running", started=1.0, progress=1.5)
    cancelled = cancel_job(job["id"], root)
    assert cancelled["stop"]["code"] == "stop_cancelled" and cancelled["stop"]["params"] == {"epoch": 2, "epochs": 4}
    assert read_job(folder)["stop"] == cancelled["stop"]
    assert "stop" not in cancel_job(waiting["id"], root)  # it never trained: no epoch to name
