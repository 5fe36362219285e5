"""A client that leaves never costs the model worker (issue 41, item 7): its request stops at the next model
boundary and the worker process stays warm, where it was once killed and the next visitor waited ~5 s for a new
one."""

import json
import logging
import os
import signal
import threading
import time

import httpx
import pytest
from lab_fixture import start_app

from core.predict import Cancelled, Prediction
from service.settings import DEFAULTS
from web import runner
from web.runner import LONG_WORDS, POLL_S, ModelWorker


def _job(lab, text: str, model: str):
    return lab._job(lab.check_text(text, "sst5"), model, ("occlusion",))


def test_a_client_that_leaves_stops_after_the_model_and_the_worker_stays(lab, caplog):
    worker = ModelWorker(nice=0)
    job = _job(lab, "a good film", "adasent")
    caplog.set_level(logging.INFO, logger=runner.__name__)
    try:
        assert isinstance(worker.run(job), Prediction)
        process = worker._process
        os.kill(process.pid, signal.SIGSTOP)  # the model is certainly still running when the client is looked at
        threading.Timer(3 * POLL_S, os.kill, (process.pid, signal.SIGCONT)).start()
        with pytest.raises(Cancelled):
            worker.run(job, alive=lambda: False)
        assert worker._process is process and process.poll() is None
        assert isinstance(worker.run(job), Prediction) and worker._process is process  # the same process answers
        assert [r.message for r in caplog.records].count(f"model worker started (pid {process.pid})") == 1
    finally:
        worker.close()


def _api_index(demo, name: str) -> int:
    return next(i for i, fn in demo.fns.items() if fn.api_name == name)


def test_a_disconnect_in_the_middle_of_a_long_compare_keeps_the_worker(lab, monkeypatch, tmp_path):
    """Through the real server: the worker runs a long /compare's first model (held stopped here) when the
    client closes its event stream; the worker then finishes that model, the request runs no other, and the
    next long /compare is answered by the same process."""
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    sent = []  # the models the app's worker was given
    run = runner.WORKER.run
    monkeypatch.setattr(runner.WORKER, "run", lambda job, *rest: sent.append(job.model) or run(job, *rest))
    demo, url = start_app(lab, concurrency=DEFAULTS.model_concurrency)
    long_text = " ".join(["good"] * (LONG_WORDS + 5))
    try:
        with httpx.Client(base_url=url, timeout=60) as http:

            def compare(session: str, until: str, then=lambda: None):
                """A long /compare through the queue, its stream read until the message `until`; `then()` runs while
                the stream is still open."""
                joined = http.post(
                    "gradio_api/queue/join",
                    json={
                        "data": [long_text, "sst5", "auto"],
                        "fn_index": _api_index(demo, "compare"),
                        "session_hash": session,
                        "event_data": None,
                        "trigger_id": None,
                    },
                )
                assert joined.status_code == 200, joined.text
                with http.stream("GET", "gradio_api/queue/data", params={"session_hash": session}) as stream:
                    for line in stream.iter_lines():
                        if line.startswith("data:") and json.loads(line[5:]).get("msg") == until:
                            then()
                            return json.loads(line[5:])

            def first_model_in_worker():  # the client leaves only then: a disconnect seen sooner sends no model
                deadline = time.monotonic() + 30
                while not sent and time.monotonic() < deadline:
                    time.sleep(POLL_S)

            assert compare("warm", "process_completed")["success"]  # the worker is started and warm
            process = runner.WORKER._process
            sent.clear()
            os.kill(process.pid, signal.SIGSTOP)
            try:
                compare("leaving", "process_starts", then=first_model_in_worker)
                time.sleep(3 * POLL_S)
            finally:
                os.kill(process.pid, signal.SIGCONT)  # the client is gone; the model ends
            time.sleep(10 * POLL_S)
            assert len(sent) == 1 and runner.WORKER._process is process and process.poll() is None
            assert compare("next", "process_completed")["success"] and runner.WORKER._process is process
    finally:
        demo.close()
