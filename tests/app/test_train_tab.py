"""The Train tab says why a run ended, in English and Chinese, and the Lab's captions name a trained model's
checkpoint sha256 and commit. The worker is a real `python -m service.jobs run` process on a tiny file."""

from core.checkpoints.files import sha256
from core.gitinfo import git_commit
from core.training.train import stop_record
from demo.lab_html import result_html
from demo.tabs.checkpoints import facts
from demo.tabs.train import status_text
from service.jobs import TrainRequest
from service.lab import ServedLab
from service.settings import Settings
from tests.app.test_user_training import reviews, wait_for, write_csv
from web.training import TrainingQueue


def _done(stop: dict) -> dict:
    metrics = {"test_accuracy": 0.75, "test_examples": 8}
    return {
        "status": "done",
        "title": "reviews.csv · 2026-11-26 10:02",
        "model": "dcnn",
        "metrics": metrics,
        "stop": stop,
    }


def test_an_early_stop_is_said_with_its_reason_in_both_languages():
    job = _done(stop_record("stop_patience", epoch=8, epochs=20, patience=3, best_dev=0.8125, best_epoch=5))
    english, chinese = status_text(job, "en"), status_text(job, "zh")
    assert "task **reviews.csv · 2026\\-11\\-26 10:02**" in english
    assert "Task menu. Stopped early at epoch 8 of 20: dev accuracy did not improve for 3 epochs" in english
    assert "best 0.812 at epoch 5" in english
    assert "在第 8 / 20 轮提前停止：开发集准确率连续 3 轮没有提高" in chinese
    timed = _done(stop_record("stop_time", epoch=4.5, epochs=20, minutes=0.5))
    assert "Stopped at epoch 4.5 of 20: the 0.5" in status_text(timed, "en")
    assert "在第 4.5 / 20 轮时停止：0.5 分钟" in status_text(timed, "zh")
    cancelled = {"status": "cancelled", "stop": stop_record("stop_cancelled", epoch=2, epochs=5)}
    assert status_text(cancelled, "en") == "Cancelled during epoch 2 of 5."
    assert status_text({"status": "cancelled"}, "zh") == "已取消。"  # cancelled while waiting: no epoch to name


def test_a_trained_model_reports_its_stop_and_is_captioned_with_its_sha256_and_commit(tmp_path):
    lab = ServedLab({})
    known = facts(lab)  # as the app does: read before any job trains
    queue = TrainingQueue(lab, Settings.load(), tmp_path / "um")
    data = write_csv(tmp_path / "my_reviews.csv", reviews(60))
    job = wait_for(queue, queue.submit(TrainRequest(data, "dcnn", epochs=2, minutes=1))["id"])
    assert job["status"] == "done", job
    assert job["stop"]["code"] == "stop_epochs" and "Trained every epoch asked for: 2." in status_text(job, "en")
    assert "已训练完要求的全部 2 轮。" in status_text(job, "zh")
    weights = sha256(tmp_path / "um" / "checkpoints" / job["task"] / "dcnn" / "model.safetensors")
    assert job["sha256"] == weights and job["commit"] == git_commit()
    html = result_html([lab.predict("a great film", "dcnn", task=job["task"])], known, "en")
    assert f"checkpoint sha256 {weights[:16]}" in html and "sha256 ?" not in html
    assert f"commit {git_commit()}" in html and job["title"] in html
