"""The model worker as a Ray Serve deployment (LAB_SERVE_BACKEND=ray, service/serve_ray.py) on a real local head
(tests/shared_fixtures.py's token_head, no PYTHONPATH: the project reaches it through the runtime_env): the same
answers as the local worker for every model and a probe suite, and the fallback to the local worker, said, when the
cluster cannot be reached or refuses the app (token auth). The app itself is no Ray driver: a driver process of its
own is."""

import pytest
from lab_fixture import RAY_BESIDE_JOBS, RAY_HEAD, closed_port

from core.predict import Lab, Request
from service.serve_ray import DEPLOYMENT, ServeWorker, worker
from service.serving import encode
from service.settings import Settings
from web.runner import ModelWorker, RequestGate

pytestmark = [*RAY_HEAD, RAY_BESIDE_JOBS]  # a real Ray head: its groups first in `make test`

SENTENCES = ["It is not a bad film at all .", "A dull , slow and predictable story ."]


@pytest.fixture
def local():
    worker = ModelWorker(nice=0)
    yield worker
    worker.close()


@pytest.fixture(scope="module")
def local_answers(lab):
    """What the app's own worker answers: the reference the deployment and the fallback are held to."""
    worker = ModelWorker(nice=0)
    yield answers(lab, worker)
    worker.close()


def answers(lab: Lab, model_worker) -> list[str]:
    """Every model of sst5 on each sentence, run by `model_worker` as a long request's models are, and the English
    probe suite: their wire lines, to compare byte for byte. A Lab of its own: none of the kept answers."""
    lab, lines = Lab(lab.checkpoints, lab.sources), []
    for text in SENTENCES:
        for model in lab.models("sst5"):
            prediction = RequestGate(worker=model_worker, long=True).run(
                lab.plan_predict(Request(text, models=(model,), task="sst5"))
            )
            lines.append(encode(prediction.predictions[0]))
    report = RequestGate(worker=model_worker).probes(lab, "sst5", suite="en").to_dict()
    return lines + [encode({**report, "seconds": 0})]


def test_the_deployment_answers_as_the_local_worker(lab, local_answers, token_head, with_token):
    served = ServeWorker(ModelWorker(nice=0), token_head.address)
    assert answers(lab, served) == local_answers
    assert served.status().code == "serve_ray" and served.status().params["deployment"] == DEPLOYMENT
    assert served.local._process is None  # nothing went to the app's own worker
    served.close()


def test_a_cluster_out_of_reach_leaves_the_local_worker_saying_so(lab, local, local_answers, caplog):
    served = ServeWorker(local, closed_port())
    assert answers(lab, served) == local_answers
    assert served.status().code == "serve_unreachable" and served.status().params["address"] == served.address
    assert "model work goes to the app's own worker" in caplog.text


def test_a_head_with_a_token_refuses_an_app_without_it(lab, local, token_head, refused_fast, monkeypatch):
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    served = ServeWorker(local, token_head.address)
    assert answers(lab, served)
    assert served.status().code == "ray_no_token"


def test_the_backend_is_a_setting(monkeypatch, local):
    monkeypatch.delenv("LAB_SERVE_BACKEND", raising=False)
    assert Settings.load().serve_backend == "local" and worker(local, Settings.load()) is local
    monkeypatch.setenv("LAB_SERVE_BACKEND", "ray")
    assert isinstance(worker(local, Settings.load()), ServeWorker)
    monkeypatch.setenv("LAB_SERVE_BACKEND", "rya")
    with pytest.raises(ValueError, match="'local' or 'ray'"):
        Settings.load()
