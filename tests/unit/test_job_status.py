"""A job's status reads that job: a waiting one also counts the jobs before it, each job.json parsed again
only when it changed (issue: 100 jobs, every status call read every job.json)."""

import pytest

import service.jobs as jobs
from service.jobs import job_status, jobs_dir, update_job, write_job


@pytest.fixture
def hundred_jobs(tmp_path) -> list[str]:
    """98 finished jobs, then two queued ones; ids in creation order."""
    ids = []
    for i in range(100):
        job_id = f"20260101-0000{i:02d}-{i:06x}"
        (jobs_dir(tmp_path) / job_id).mkdir(parents=True)
        write_job(
            jobs_dir(tmp_path) / job_id,
            {
                "id": job_id,
                "status": "done" if i < 98 else "queued",
                "created": 1000.0 + i,
                "started": None,
                "progress": 0,
                "epochs": 1,
            },
        )
        ids.append(job_id)
    return ids


@pytest.fixture
def reads(monkeypatch) -> list:
    calls = []
    real = jobs.read_job

    def counting(folder):
        calls.append(folder)
        return real(folder)

    monkeypatch.setattr(jobs, "read_job", counting)
    return calls


def test_the_status_of_a_finished_job_reads_one_job_json(tmp_path, hundred_jobs, reads):
    (jobs_dir(tmp_path) / hundred_jobs[0] / "job.json").write_text("broken")  # never read for another job's status
    assert job_status(hundred_jobs[50], tmp_path)["queue_position"] is None
    assert len(reads) == 1


def test_a_waiting_job_counts_those_before_it_parsing_only_what_changed(tmp_path, hundred_jobs, reads):
    assert job_status(hundred_jobs[99], tmp_path)["queue_position"] == 2
    reads.clear()
    assert job_status(hundred_jobs[99], tmp_path)["queue_position"] == 2
    assert len(reads) == 1  # its own job.json; the other 99 are unchanged
    update_job(jobs_dir(tmp_path) / hundred_jobs[98], status="running")
    reads.clear()
    assert job_status(hundred_jobs[99], tmp_path)["queue_position"] == 1
    assert len(reads) == 2  # its own and the one that changed
