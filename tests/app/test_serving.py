"""Issue 21: one long request never starves the others (two lanes: a short request is admitted while a long
one runs; a long request's models run in a worker process), and a request whose client has left stops its
work: while it waits for its lane, and between models once admitted (in the worker too: test_warm_model_worker)."""

import dataclasses
import io
import json
import os
import signal
import threading
import time

import httpx
import pytest
from lab_fixture import start_app

from core.answers import AnswerCache
from core.predict import Cancelled, Lab, ModelFailure, Prediction, Request
from core.views import Text
from service.serving import decode, encode, serve
from service.settings import DEFAULTS
from web.runner import LANES, LONG_WORDS, POLL_S, Lanes, ModelWorker, RequestGate


def test_a_short_request_is_admitted_while_a_long_one_runs():
    lanes = Lanes(long_words=10)
    entered = threading.Event()

    def second_long():
        with lanes.admit(long=True):
            entered.set()

    assert lanes.is_long(11) and not lanes.is_long(10) and lanes.is_long(3, on_demand=True)
    with lanes.admit(long=True):
        start = time.perf_counter()
        with lanes.admit(long=False):  # the short lane is free
            assert time.perf_counter() - start < POLL_S
        waiter = threading.Thread(target=second_long)
        waiter.start()
        assert not entered.wait(3 * POLL_S)  # the long lane is not: the second long request waits
    assert entered.wait(5)  # and enters once the first one leaves
    waiter.join()


def test_a_waiting_request_whose_client_left_gives_up():
    lanes = Lanes(long_words=10)
    with lanes.admit(long=True):
        with pytest.raises(Cancelled), lanes.admit(long=True, alive=lambda: False):
            pytest.fail("admitted although its client had left")
    with lanes.admit(long=True):  # the slot was not leaked
        pass


def test_a_lane_is_taken_in_arrival_order():
    """A request that leaves the long lane and asks again at once (a file export, chunk by chunk) goes behind the
    one already waiting: a plain semaphore let it take the slot again before the waiter woke."""
    lanes, order = Lanes(long_words=10), []

    def waiting():
        with lanes.admit(long=True):
            order.append("waiting")

    waiter = threading.Thread(target=waiting)
    with lanes.admit(long=True):
        waiter.start()
        time.sleep(3 * POLL_S)  # it waits
    with lanes.admit(long=True):
        order.append("again")
    waiter.join(5)
    assert order == ["waiting", "again"]


# -- the worker process ---------------------------------------------------------------------------------


def _job(lab, text: str, model: str):
    checked = lab.check_text(text, "sst5")
    return lab._job(checked, model, ("occlusion", "gradient_x_input"))


def _texts(value, path="") -> list[tuple[str, str, dict]]:
    """Every view Text inside `value` (keys included) as (where, code, params): equal strings are not enough,
    the Chinese page words a Text by its code."""
    if isinstance(value, Text):
        return [(path, value.code, value.params)]
    if dataclasses.is_dataclass(value):
        return [t for f in dataclasses.fields(value) for t in _texts(getattr(value, f.name), f"{path}.{f.name}")]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in _texts(k, f"{path}[key]") + _texts(v, f"{path}[{k}]")]
    if isinstance(value, (list, tuple)):
        return [t for i, v in enumerate(value) for t in _texts(v, f"{path}[{i}]")]
    return []


def _same(a, b, path="") -> None:
    """a == b, floats to 1e-5, in view Texts' params and dict keys too: another process (or another Lab, or
    another CPU) may pick other BLAS kernels, which round the last float32 bits differently; every other value
    must be equal."""
    if isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-5, abs=1e-6), path
    elif isinstance(a, Text):
        assert isinstance(b, Text) and a.code == b.code, path
        _same(a.params, b.params, f"{path}.params")
    elif dataclasses.is_dataclass(a):
        assert type(a) is type(b), path
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, dict):
        assert isinstance(b, dict), path
        _same(list(a), list(b), f"{path}[keys]")
        for k, (x, y) in zip(a, zip(a.values(), b.values())):
            _same(x, y, f"{path}[{k}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    else:
        assert a == b, path


@pytest.fixture(scope="module")
def worker():
    """One model worker process for the tests that only send it jobs (each start imports torch: ~3 CPU-s)."""
    worker = ModelWorker(nice=0)
    yield worker
    worker.close()


def test_the_worker_answers_as_the_server_would(lab, worker):
    """service.serving in this process (the JSON-lines protocol), then the real process behind
    ModelWorker: the very Prediction the model gives here, views and all."""
    jobs = [_job(lab, "it is not a bad film", model) for model in lab.models("sst5")]
    here = [lab.attempt(job.checked, job.model, job.methods) for job in jobs]
    answers = io.StringIO()
    assert serve(io.StringIO("".join(encode(job) + "\n" for job in jobs)), answers) == len(jobs)
    for job, mine, line in zip(jobs, here, answers.getvalue().splitlines()):
        assert _texts(mine)  # titles, axes, legends
        for theirs in (decode(line), worker.run(job)):
            assert isinstance(theirs, Prediction)
            _same(_texts(theirs), _texts(mine))
            _same(theirs, mine)


def test_a_long_request_runs_its_models_in_the_worker(lab, worker, monkeypatch):
    ran_here = []
    attempt = lab.attempt
    monkeypatch.setattr(
        lab, "attempt", lambda checked, model, *rest: ran_here.append(model) or attempt(checked, model, *rest)
    )
    long_text = " ".join(["good"] * (LONG_WORDS + 1))
    result = RequestGate(worker=worker).run(lab.plan_compare(Request(long_text, task="sst5")))
    assert [p.model for p in result.predictions] == lab.models("sst5") and ran_here == []
    short = RequestGate(worker=worker).run(lab.plan_compare(Request("a good film", task="sst5")))
    assert ran_here == lab.models("sst5") and len(short.predictions) == len(ran_here)
    long = RequestGate(worker=worker).run(lab.plan_predict(Request(long_text, models=("dcnn",), task="sst5")))
    assert long.predictions[0].model == "dcnn"
    assert ran_here == lab.models("sst5")


def _stopped(worker: ModelWorker):
    """The worker's process, stopped (SIGSTOP): a job sent now is certainly still running when looked at."""
    process = worker._process
    os.kill(process.pid, signal.SIGSTOP)
    return process


def test_the_worker_is_replaced_after_its_jobs_and_when_it_dies(lab):
    """Three worker processes: one killed between jobs, one killed in the middle of a job, and the one after it,
    retired after its two jobs."""
    worker = ModelWorker(jobs_per_process=2, nice=0)
    job = _job(lab, "a good film", "tensor_cnn")
    try:
        assert isinstance(worker.run(job), Prediction)
        worker._process.kill()
        worker._process.wait()
        assert isinstance(worker.run(job), Prediction)  # a dead worker is noticed before a job is sent
        process = _stopped(worker)
        threading.Timer(3 * POLL_S, process.kill).start()  # it dies in the middle of the job (stopped: no answer)
        outcome = worker.run(job)
        assert isinstance(outcome, ModelFailure) and outcome.code == "worker_ended" and "exit status" in outcome.error
        assert process.wait(10) == -signal.SIGKILL and worker._process is None
        assert isinstance(worker.run(job), Prediction)  # and the next job gets a new worker
        last = worker._process
        assert isinstance(worker.run(job), Prediction) and worker._process is None  # two jobs: retired
        assert last.wait(10) == 0  # it ended at the end of its input
    finally:
        worker.close()


def test_compare_stops_between_models_when_its_client_leaves(lab, monkeypatch):
    ran = []
    attempt = lab.attempt
    monkeypatch.setattr(
        lab, "attempt", lambda checked, model, *rest: ran.append(model) or attempt(checked, model, *rest)
    )
    gate = RequestGate(lanes=Lanes())
    gate.alive = lambda: not ran  # the client leaves once the first model has run
    plan = lab.plan_compare(Request("a good film", task="sst5"))
    with pytest.raises(Cancelled):
        gate.run(plan)
    assert (plan.words, plan.on_demand, gate.long) == (3, False, False) and ran == lab.models("sst5")[:1]


def test_kept_answers_take_no_lane_and_only_the_other_models_run(lab):
    """A plan runs the models without a kept answer; one whose answers are all kept is finished without its lane
    (here the short lane is held and the client gone: asking for the lane would raise Cancelled)."""
    cached = Lab(lab.checkpoints, lab.sources, answers=AnswerCache())
    lanes = Lanes()
    one = (
        RequestGate(lanes=lanes)
        .run(cached.plan_predict(Request("a good film", models=("dcnn",), task="sst5")))
        .predictions[0]
    )
    plan = cached.plan_compare(Request("a good film", task="sst5"))
    assert plan.kept == {"dcnn": one} and [job.model for job in plan.jobs] == [
        m for m in lab.models("sst5") if m != "dcnn"
    ]
    every = RequestGate(lanes=lanes).run(plan).predictions
    again = cached.plan_compare(Request("a good film", task="sst5"))
    assert again.jobs == [] and list(again.kept.values()) == every
    gate = RequestGate(lanes=lanes)
    gate.alive = lambda: False
    with lanes.admit(long=False):
        assert gate.run(again).predictions == every


def _api_index(demo, name: str) -> int:
    return next(i for i, fn in demo.fns.items() if fn.api_name == name)


def test_a_disconnected_request_stops_waiting_and_runs_no_model(lab, monkeypatch, tmp_path):
    """Through the real server: a long /compare waits for the long lane (held here); its client closes the
    event stream; once the lane is free again, the abandoned request runs no model."""
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    ran = []
    monkeypatch.setattr(lab, "attempt", lambda checked, model, *rest: ran.append(model))
    demo, url = start_app(lab, concurrency=DEFAULTS.model_concurrency)
    try:
        session = "disconnecting-client"
        with LANES.admit(long=True):  # a long request is running
            with httpx.Client(base_url=url, timeout=60) as http:
                joined = http.post(
                    "gradio_api/queue/join",
                    json={
                        "data": [" ".join(["good"] * (LONG_WORDS + 5)), "sst5", "auto"],
                        "fn_index": _api_index(demo, "compare"),
                        "session_hash": session,
                        "event_data": None,
                        "trigger_id": None,
                    },
                )
                assert joined.status_code == 200, joined.text
                with http.stream("GET", "gradio_api/queue/data", params={"session_hash": session}) as stream:
                    for line in stream.iter_lines():  # until the handler runs (and waits for its lane)
                        if line.startswith("data:") and json.loads(line[5:]).get("msg") == "process_starts":
                            break
                    time.sleep(3 * POLL_S)
            time.sleep(5 * POLL_S)  # the client is gone; the handler notices within POLL_S
        time.sleep(5 * POLL_S)  # the lane is free: a request still waiting would run its models now
        assert ran == []
    finally:
        demo.close()


def test_a_request_waiting_for_its_turn_takes_the_answer_another_kept_meanwhile(lab):
    """A lecture hall asks for one link at once: each request waits in its own client's turn (never behind another
    client's request for the same thing), and one whose answer another kept meanwhile runs no model."""
    cached = Lab(lab.checkpoints, lab.sources, answers=AnswerCache())
    lanes = Lanes(long_words=10)
    waiting = cached.plan_compare(Request("a moving film with a dull end", task="sst5"))
    assert waiting.jobs  # nothing kept when it was planned
    ran: list[str] = []
    waiting.here = lambda job: ran.append(job.model)  # type: ignore[assignment,return-value]
    with lanes.admit(long=False):  # the lane busy: meanwhile another request answers the same
        first = cached.compare("a moving film with a dull end", task="sst5")
        done: list = []
        gate = threading.Thread(target=lambda: done.append(RequestGate(lanes).run(waiting)))
        gate.start()
    gate.join(10)
    assert not ran and [p.to_dict() for p in done[0].predictions] == [p.to_dict() for p in first.predictions]
