"""The Train tab says why a run ended, in English and Chinese. A model trained by a real worker, its stop said and
captioned with its checkpoint sha256 and commit: test_user_training.py (one trained job serves the tests that read
it)."""

from core.training.train import stop_record
from demo.tabs.train import status_text


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
