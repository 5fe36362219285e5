"""Issue 21: one long request never starves the others (two lanes: a short request is admitted while a long
one runs), and a request whose client has left stops its work: while it waits for its lane, and between
models once admitted."""

import json
import threading
import time
from contextlib import nullcontext

import httpx
import pytest

from core.predict import Cancelled
from demo.runner import LANES, LONG_WORDS, MODEL_CONCURRENCY, POLL_S, Lanes


def test_a_short_request_is_admitted_while_a_long_one_runs():
    lanes = Lanes(long_words=10)
    entered = threading.Event()

    def second_long():
        with lanes.admit(50):
            entered.set()

    with lanes.admit(50):
        start = time.perf_counter()
        with lanes.admit(5):  # the short lane is free
            assert time.perf_counter() - start < POLL_S
        waiter = threading.Thread(target=second_long)
        waiter.start()
        assert not entered.wait(3 * POLL_S)  # the long lane is not: the second long request waits
    assert entered.wait(5)  # and enters once the first one leaves
    waiter.join()


def test_a_long_request_steps_aside_while_short_ones_are_in():
    lanes = Lanes(long_words=10)
    went_on = threading.Event()

    def next_long_model():
        lanes.yield_to_short(limit_s=30)
        went_on.set()

    with lanes.admit(5):  # a short request is in
        start = time.perf_counter()
        lanes.yield_to_short(limit_s=3 * POLL_S)  # never held longer than its limit
        assert time.perf_counter() - start >= 3 * POLL_S
        waiter = threading.Thread(target=next_long_model)
        waiter.start()
        assert not went_on.wait(3 * POLL_S)
        with pytest.raises(Cancelled):
            lanes.yield_to_short(alive=lambda: False)
    assert went_on.wait(5)  # the short one left: the long one goes on at once
    waiter.join()
    start = time.perf_counter()
    lanes.yield_to_short(limit_s=30)  # nothing short in: no wait
    assert time.perf_counter() - start < POLL_S


def test_a_waiting_request_whose_client_left_gives_up():
    lanes = Lanes(long_words=10)
    with lanes.admit(50):
        with pytest.raises(Cancelled), lanes.admit(50, alive=lambda: False):
            pytest.fail("admitted although its client had left")
    with lanes.admit(50):  # the slot was not leaked
        pass


class StopAfterOneModel:
    """A core.predict.Gate whose client leaves once the first model has run."""

    def __init__(self):
        self.words, self.models = [], 0

    def admit(self, words: int, on_demand: bool):
        self.words.append((words, on_demand))
        return nullcontext(False)

    def before_model(self) -> None:
        self.models += 1
        if self.models > 1:
            raise Cancelled()


def test_compare_stops_between_models_when_its_client_leaves(lab, monkeypatch):
    ran = []
    attempt = lab._attempt
    monkeypatch.setattr(lab, "_attempt", lambda checked, model, *rest: ran.append(model) or attempt(checked, model, *rest))
    gate = StopAfterOneModel()
    with pytest.raises(Cancelled):
        lab.compare("a good film", "sst5", gate=gate)
    assert gate.words == [(3, False)] and ran == lab.models("sst5")[:1]


def _api_index(demo, name: str) -> int:
    return next(i for i, fn in demo.fns.items() if fn.api_name == name)


def test_a_disconnected_request_stops_waiting_and_runs_no_model(lab, monkeypatch, tmp_path):
    """Through the real server: a long /compare waits for the long lane (held here); its client closes the
    event stream; once the lane is free again, the abandoned request runs no model."""
    from demo import build_demo

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    ran = []
    monkeypatch.setattr(lab, "_attempt", lambda checked, model, *rest: ran.append(model))
    demo = build_demo(lab)
    demo.queue(default_concurrency_limit=MODEL_CONCURRENCY)
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    try:
        session = "disconnecting-client"
        with LANES.admit(LONG_WORDS + 1):  # a long request is running
            with httpx.Client(base_url=url, timeout=60) as http:
                joined = http.post("gradio_api/queue/join", json={
                    "data": [" ".join(["good"] * (LONG_WORDS + 5)), "sst5", "auto"],
                    "fn_index": _api_index(demo, "compare"), "session_hash": session, "event_data": None,
                    "trigger_id": None})
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
