"""Training on a Ray cluster that cannot be used from the start: the backend's settings checked, a head out of reach
(with and without LAB_TRAIN_FALLBACK=local) and a head that refuses a driver without its token. A file apart from
test_training_ray.py's jobs on a live cluster: with Ray Serve's tests it takes one of `make test`'s two workers while
those take the other (lab_fixture.RAY_BESIDE_JOBS)."""

import pytest
from lab_fixture import RAY_BESIDE_JOBS, RAY_HEAD, closed_port
from test_training_ray import one_line_in_both
from test_user_training import reviews, wait_for, write_csv

from service.jobs import TrainRequest, read_job
from service.lab import ServedLab
from service.settings import Settings
from web.training import TrainingQueue
from web.training_ray import training_queue

pytestmark = [*RAY_HEAD, RAY_BESIDE_JOBS]  # a real Ray head: its groups first in `make test`


def test_the_backend_is_a_setting(monkeypatch, on_ray, tmp_path):
    monkeypatch.delenv("LAB_TRAIN_BACKEND", raising=False)
    local = training_queue(ServedLab({}), Settings.load(), tmp_path / "um")
    assert type(local) is TrainingQueue
    local.stopped.set()
    for backend, address, fallback in (
        ("spark", "h:1", ""),
        ("ray", "", ""),
        ("ray", "ray://h:10001", ""),
        ("ray", "h:1", "cloud"),
    ):
        on_ray(address, fallback)
        monkeypatch.setenv("LAB_TRAIN_BACKEND", backend)
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
        with pytest.raises(ValueError, match="LAB_"):
            training_queue(ServedLab({}), Settings.load(), tmp_path / "um")


@pytest.mark.parametrize("fallback", ["", "local"])
def test_a_cluster_that_cannot_be_reached_at_start(on_ray, tmp_path, fallback):
    address = closed_port()
    on_ray(address, fallback)
    queue = training_queue(ServedLab({}), Settings.load(), tmp_path / "um")
    job = queue.submit(TrainRequest(write_csv(tmp_path / "reviews.csv", reviews(60)), "dcnn", epochs=1, minutes=1))
    ended = wait_for(queue, job["id"], seconds=120)
    if fallback:  # never silent: the job says where it trained
        assert ended["status"] == "done" and ended["notice"]["code"] == "ray_local", ended
        one_line_in_both(
            ended, f"the training cluster at {address} cannot be reached: trained on this machine", "ray_local"
        )
        assert (ended["task"], "dcnn") in queue.lab.checkpoints
    else:
        assert ended["status"] == "failed" and ended["error"]["code"] == "ray_unreachable", ended
        one_line_in_both(
            ended, f"the training cluster at {address} cannot be reached; try again later", "ray_unreachable"
        )
        assert read_job(tmp_path / "um" / "jobs" / job["id"])["finished"] and not queue.lab.checkpoints
    queue.stopped.set()


def test_a_head_with_token_authentication_refuses_a_driver_without_its_token_and_says_so(
    token_head, refused_fast, on_ray, tmp_path, monkeypatch
):
    """Ray 2.60 heads use token authentication by default: without the token the driver only hears "failed to
    connect", and the job says what to set (with it, the other tests of this file train on this head)."""
    on_ray(token_head.address)
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    queue = training_queue(ServedLab({}), Settings.load(), tmp_path / "um")
    data = write_csv(tmp_path / "reviews.csv", reviews(60))
    refused = wait_for(queue, queue.submit(TrainRequest(data, "dcnn", epochs=1, minutes=1))["id"], seconds=180)
    assert refused["status"] == "failed" and refused["error"]["code"] == "ray_no_token", refused
    one_line_in_both(refused, f"the training cluster at {token_head.address} refused this app", "ray_no_token")
    queue.stopped.set()
