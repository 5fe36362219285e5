"""Training on a Ray cluster (LAB_TRAIN_BACKEND=ray): a real local head (`ray start --head` in a temporary
folder), two visitors' jobs through the app's queue at once, and each failure: the task's worker killed,
the cluster gone mid-job, a cluster that cannot be reached at start, with and without LAB_TRAIN_FALLBACK=local.
The tests that leave their head as they found it share one with token authentication (a head's start is ~10 s;
tests/shared_fixtures.py's token_head); the test that ends a head starts its own, and both of its queues lose it
at once.
A cluster that cannot be used from the start: test_training_ray_refused.py."""

import os
import signal
import time
from pathlib import Path

import pytest
from lab_fixture import RAY_HEAD, RAY_TOKEN, Head
from test_user_training import reviews, wait_for, write_csv

from demo.i18n import CODES
from demo.tabs.train import status_text
from service.jobs import TrainRequest
from service.lab import ServedLab
from service.owners import owner_id
from service.settings import Settings
from web.training import TrainingQueue
from web.training_ray import RayTrainingQueue, training_queue

pytestmark = RAY_HEAD  # a real Ray head: its groups first in `make test`


def running_task(pid: int) -> bool:
    """Whether the Ray worker `pid` runs a job's task (an idle worker's title is ray::IDLE)."""
    try:
        return "train_remote" in Path(f"/proc/{pid}/cmdline").read_text()
    except FileNotFoundError:
        return False


def driver_started(queue: RayTrainingQueue, job_id: str) -> bool:
    with queue.lock:
        return job_id in queue.workers


def one_line_in_both(job: dict, english: str, code: str) -> None:
    """What the job page says: one line with the English, and the same code's Chinese."""
    en, zh = status_text(job, "en"), status_text(job, "zh")
    assert english in en and "\n" not in en and "\n" not in zh
    assert CODES["zh"]["jobs"][code].split("{")[0] in zh


def wait_epochs(queue: TrainingQueue, job_id: str, epochs: int) -> dict:
    """The job running on the cluster with at least `epochs` epochs copied back, and its worker known."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        job = queue.status(job_id)
        assert job["status"] in ("queued", "running"), job
        if len(job["history"]) >= epochs and job.get("ray_worker"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id}: {epochs} epochs not reached")


@pytest.fixture
def big_csv(tmp_path):
    return write_csv(tmp_path / "many_reviews.csv", reviews(3000))  # a few seconds an epoch: time to act mid-job


def test_two_visitors_train_at_once_on_the_cluster(token_head, on_ray, tmp_path):
    on_ray(token_head.address)
    queue = training_queue(ServedLab({}), Settings.load(), tmp_path / "um")
    assert isinstance(queue, RayTrainingQueue)
    path = write_csv(tmp_path / "class_reviews.csv", reviews(400))
    a, b = owner_id("key", "visitor-a"), owner_id("key", "visitor-b")
    job_a = queue.submit(TrainRequest(path, "dcnn", "review", "stars", epochs=2, minutes=1), owner=a)
    job_b = queue.submit(TrainRequest(path, "dcnn", "review", "stars", epochs=2, minutes=1), owner=b)
    done_a, done_b = wait_for(queue, job_a["id"]), wait_for(queue, job_b["id"])
    assert done_a["status"] == done_b["status"] == "done", (done_a, done_b)
    # both ran on the cluster, in two workers, each from the other's start to its end
    assert done_a["backend"] == done_b["backend"] == "ray"
    assert done_a["ray_worker"]["pid"] != done_b["ray_worker"]["pid"]
    assert done_a["ray_worker"]["started"] < done_b["finished"] and done_b["ray_worker"]["started"] < done_a["finished"]
    assert [r["epoch"] for r in done_a["history"]] == [1, 2] and done_a["loss"] and done_a["metrics"]["test_examples"]
    # the best checkpoint came back and is installed and served, each model to its owner alone
    seen_a, seen_b = queue.lab.visible_to(a).tasks(), queue.lab.visible_to(b).tasks()
    assert done_a["task"] in seen_a and done_a["task"] not in seen_b
    assert done_b["task"] in seen_b and done_b["task"] not in seen_a
    assert (tmp_path / "um" / "checkpoints" / done_a["task"] / "dcnn" / "model.safetensors").is_file()
    assert queue.lab.visible_to(a).predict("a fun film", "dcnn", task=done_a["task"]).label in ("1", "5")
    assert status_text(done_a, "en").startswith("Done") and "notice" not in done_a
    queue.stopped.set()


def test_a_killed_worker_resumes_on_the_cluster_and_a_cancel_ends_the_task(token_head, on_ray, tmp_path, big_csv):
    on_ray(token_head.address)
    queue = training_queue(ServedLab({}), Settings.load(), tmp_path / "um")
    job = queue.submit(TrainRequest(big_csv, "dcnn", epochs=2, minutes=5))
    running = wait_epochs(queue, job["id"], 1)
    os.kill(running["ray_worker"]["pid"], signal.SIGKILL)
    done = wait_for(queue, job["id"])
    assert done["status"] == "done" and done["resumes"] == 1, done
    assert done["notice"]["code"] == "ray_resumed" and done["notice"]["params"]["epoch"] >= 1
    # resumed after its last epoch, not from the start: epoch 1 is the one logged before the kill (its timing too)
    assert [r["epoch"] for r in done["history"]] == [1, 2] and done["history"][0] == running["history"][0]
    assert done["ray_worker"]["pid"] != running["ray_worker"]["pid"] and (done["task"], "dcnn") in queue.lab.checkpoints
    one_line_in_both(done, "resumed there after epoch", "ray_resumed")

    second = queue.submit(TrainRequest(big_csv, "mrnn", epochs=3, minutes=5))
    worker = wait_epochs(queue, second["id"], 0)["ray_worker"]["pid"]
    assert running_task(worker)
    queue.cancel(second["id"])
    assert wait_for(queue, second["id"])["status"] == "cancelled"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and running_task(worker):
        time.sleep(0.2)
    assert time.monotonic() < deadline, "the cancelled task still runs on the cluster"
    queue.stopped.set()


def test_a_cluster_that_goes_away_mid_job(on_ray, tmp_path, big_csv):
    """Two apps on one head, one without a fallback and one with LAB_TRAIN_FALLBACK=local, each with a job past its
    first epoch when the whole cluster goes at once."""
    head, queues, jobs = Head(token=RAY_TOKEN), {}, {}
    try:
        for fallback in ("", "local"):
            on_ray(head.address, fallback)
            queues[fallback] = training_queue(ServedLab({}), Settings.load(), tmp_path / f"um{fallback}")
            jobs[fallback] = queues[fallback].submit(TrainRequest(big_csv, "dcnn", epochs=3, minutes=5))["id"]
            while not driver_started(queues[fallback], jobs[fallback]):  # then it has read its fallback
                time.sleep(0.1)
        for fallback, queue in queues.items():
            wait_epochs(queue, jobs[fallback], 1)
    finally:
        head.stop()
    for fallback, queue in queues.items():
        ended = wait_for(queue, jobs[fallback])
        epoch = (ended["error"] or ended["notice"])["params"]["epoch"]
        assert epoch >= 1
        if fallback:  # went on here from the epochs the cluster had sent back
            assert ended["status"] == "done" and ended["notice"]["code"] == "ray_lost_local", ended
            assert [r["epoch"] for r in ended["history"]] == [1, 2, 3] and (
                ended["task"],
                "dcnn",
            ) in queue.lab.checkpoints
            assert f"resumed {tmp_path}" in (tmp_path / "umlocal" / "jobs" / jobs[fallback] / "worker.log").read_text()
            one_line_in_both(ended, "went away: went on on this machine after epoch", "ray_lost_local")
        else:
            assert ended["status"] == "failed" and ended["error"]["code"] == "ray_lost", ended
            one_line_in_both(
                ended, f"the training cluster at {head.address} went away after epoch {epoch} of 3", "ray_lost"
            )
            assert not queue.lab.checkpoints
        # the app goes on: the next job is taken, and says what it meets (a local fallback's training is
        # test_training_ray_refused.py's: cancelled here once said)
        on_ray(head.address, fallback)
        small = write_csv(tmp_path / "reviews.csv", reviews(60))
        after = queue.submit(TrainRequest(small, "dcnn", epochs=1, minutes=1))["id"]
        if fallback:
            deadline = time.monotonic() + 60
            while not (said := queue.status(after).get("notice")) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert said and said["code"] == "ray_local", said
            queue.cancel(after)
            assert wait_for(queue, after)["status"] == "cancelled"
        else:
            assert wait_for(queue, after)["error"]["code"] == "ray_unreachable"
        queue.stopped.set()
