"""service.cleanup: what is past its time or past its owner's quota goes, oldest first, with the model it
installed; nothing else (an active job, a model still installed by a kept job, a model no job installed, and
never one owner's model to make room for another's job)."""

from pathlib import Path

import pytest

from service.cleanup import CleanupLimits, check_quota, clean_user_models
from service.jobs import JobError, jobs_dir, list_jobs, write_job
from service.settings import Settings
from service.store import STORE_FILES

NOW = 1_800_000_000.0
HOUR = 3600.0


def make_job(
    root: Path,
    job_id: str,
    status: str,
    age_hours: float,
    model: str | None = None,
    size: int = 1000,
    owner: str = "",
) -> dict:
    """A job folder as a finished run leaves it: job.json, its data file of `size` bytes and, when `model`
    is named, the checkpoint it installed."""
    folder = jobs_dir(root) / job_id
    folder.mkdir(parents=True)
    (folder / "data.csv").write_bytes(b"x" * size)
    created = NOW - age_hours * HOUR
    finished = None if status in ("queued", "running") else created + 60
    job = {"id": job_id, "status": status, "created": created, "finished": finished, "owner": owner}
    if model:
        checkpoint = root / "checkpoints" / "user_task" / model
        checkpoint.mkdir(parents=True, exist_ok=True)
        (checkpoint / "model.safetensors").write_bytes(b"w" * size)
        job["checkpoint"] = str(checkpoint)
    write_job(folder, job)
    return job


def ids(root: Path) -> list[str]:
    return [j["id"] for j in list_jobs(root)]


def test_cancelled_failed_and_stopped_jobs_go_after_their_grace_and_nothing_else(tmp_path):
    for status in ("cancelled", "failed", "stopped"):
        make_job(tmp_path, f"old-{status}", status, age_hours=2)
        make_job(tmp_path, f"new-{status}", status, age_hours=0.5)
    make_job(tmp_path, "queued", "queued", age_hours=100)
    make_job(tmp_path, "running", "running", age_hours=100)
    make_job(tmp_path, "done", "done", age_hours=2, model="dcnn")
    removed = clean_user_models(tmp_path, CleanupLimits(max_mb=0, ttl_hours=48, failed_minutes=60), NOW)
    assert sorted(j["id"] for j in removed) == ["old-cancelled", "old-failed", "old-stopped"]
    assert ids(tmp_path) == ["queued", "running", "done", "new-cancelled", "new-failed", "new-stopped"]
    assert (tmp_path / "checkpoints" / "user_task" / "dcnn").is_dir()


def test_a_finished_job_past_its_ttl_goes_with_its_model_unless_a_kept_job_installed_it_too(tmp_path):
    make_job(tmp_path, "a-old", "done", age_hours=50, model="dcnn")
    make_job(tmp_path, "b-old", "done", age_hours=49, model="mrnn")
    make_job(tmp_path, "c-new", "done", age_hours=1, model="mrnn")  # a later run of the same task and model
    operator = tmp_path / "checkpoints" / "cli_task" / "dcnn"  # installed by `make train-data`: no job
    operator.mkdir(parents=True)
    (operator / "config.json").write_text("{}")
    removed = clean_user_models(tmp_path, CleanupLimits(max_mb=0, ttl_hours=48, failed_minutes=60), NOW)
    assert [j["id"] for j in removed] == ["a-old", "b-old"]
    assert removed[0]["removed_checkpoints"] == [str(tmp_path / "checkpoints" / "user_task" / "dcnn")]
    assert removed[1]["removed_checkpoints"] == []
    assert not (tmp_path / "checkpoints" / "user_task" / "dcnn").exists()
    assert (tmp_path / "checkpoints" / "user_task" / "mrnn").is_dir() and operator.is_dir()
    assert ids(tmp_path) == ["c-new"]


def test_over_the_disk_quota_nobody_s_model_goes_and_new_jobs_are_refused(tmp_path):
    mb = 2**20
    make_job(tmp_path, "1-running", "running", age_hours=5, size=mb, owner="attacker")
    for i, hours in enumerate((4, 3, 2, 1), 2):
        make_job(tmp_path, f"{i}-done", "done", age_hours=hours, model=f"m{i}", size=mb, owner=f"visitor{i}")
    assert clean_user_models(tmp_path, CleanupLimits(max_mb=5.5, ttl_hours=48, failed_minutes=60), NOW) == []
    assert sorted(ids(tmp_path)) == ["1-running", "2-done", "3-done", "4-done", "5-done"]
    with pytest.raises(JobError) as err:  # 9 MB in a 5.5 MB quota: the next job waits, every model stays
        check_quota(tmp_path, CleanupLimits(max_mb=5.5))
    assert err.value.code == "disk_full"
    check_quota(tmp_path, CleanupLimits(max_mb=10))
    for name in STORE_FILES:  # the owner store's bytes are bounded by its row caps, not by this quota
        (tmp_path / name).write_bytes(b"x" * 2 * mb)
    check_quota(tmp_path, CleanupLimits(max_mb=10))


def test_past_its_quota_an_owner_loses_its_own_oldest_models_only(tmp_path):
    for i in range(4):
        make_job(tmp_path, f"a{i}", "done", age_hours=10 - i, model=f"a{i}", owner="a")
    make_job(tmp_path, "b0", "done", age_hours=20, model="b0", owner="b")  # the oldest of all, but b's only one
    removed = clean_user_models(tmp_path, CleanupLimits(max_mb=0, max_models_per_owner=2), NOW)
    assert [j["id"] for j in removed] == ["a0", "a1"]
    assert sorted(ids(tmp_path)) == ["a2", "a3", "b0"]
    assert (tmp_path / "checkpoints" / "user_task" / "b0").is_dir()


def test_a_finished_job_keeps_its_history_and_drops_its_resumable_run(tmp_path):
    make_job(tmp_path, "done", "done", age_hours=1, model="dcnn")
    make_job(tmp_path, "running", "running", age_hours=1)
    for job in ("done", "running"):
        (jobs_dir(tmp_path) / job / "run").mkdir()
    clean_user_models(tmp_path, CleanupLimits(max_mb=0), NOW)
    assert not (jobs_dir(tmp_path) / "done" / "run").exists() and (jobs_dir(tmp_path) / "running" / "run").is_dir()


def test_a_job_the_scheduler_still_reads_is_kept(tmp_path):
    make_job(tmp_path, "just-done", "done", age_hours=100, model="dcnn")
    assert clean_user_models(tmp_path, CleanupLimits(max_mb=0, ttl_hours=1), NOW, busy=("just-done",)) == []
    assert [j["id"] for j in clean_user_models(tmp_path, CleanupLimits(max_mb=0, ttl_hours=1), NOW)] == ["just-done"]


def test_the_limits_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("LAB_USER_MODELS_MAX_MB", "10")
    monkeypatch.setenv("LAB_USER_MODELS_TTL_HOURS", "2.5")
    monkeypatch.setenv("LAB_FAILED_JOBS_TTL_MINUTES", "5")
    monkeypatch.setenv("LAB_MODELS_PER_OWNER", "3")
    assert CleanupLimits.from_settings(Settings.load()) == CleanupLimits(10.0, 2.5, 5.0, 3)
    monkeypatch.delenv("LAB_USER_MODELS_MAX_MB")
    assert CleanupLimits.from_settings(Settings.load()).max_mb == CleanupLimits().max_mb
