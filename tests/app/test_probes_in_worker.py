"""Probe suites and a visitor's own cases run in the model worker process, not in the app (RequestGate.probes):
the same report as in the app, the same errors raised in the app, nothing of another visitor's in them, and the
worker stays up after a refused job."""

import json
import os
import shutil

import pytest

import core.analysis.probes as probes
from core.analysis.probes import ProbeInputError, SuiteError, run_suite, run_text_cases
from core.answers import AnswerCache
from core.predict import Lab
from service.lab import ServedLab
from web.runner import ModelWorker, RequestGate

CASES = "A fine film .\tpositive\nIt is good .\tIt is not good .\tdown\n"


def _same(theirs: probes.ProbeReport, mine: probes.ProbeReport) -> None:
    assert {**theirs.to_dict(), "seconds": 0} == {**mine.to_dict(), "seconds": 0}  # failures and all; not the time


@pytest.fixture(scope="module")
def worker():
    """One worker process for the module, as the app keeps one warm (each start imports torch: ~3 CPU-s)."""
    worker = ModelWorker(nice=0)
    yield worker
    worker.close()


def test_a_suite_and_own_cases_run_in_the_worker_with_the_apps_answer(lab, worker, monkeypatch):
    suite, cases = run_suite(lab, "en", "sst5"), run_text_cases(lab, CASES, "sst5")

    def not_here(*args, **kwargs):
        raise AssertionError("a probe ran in the app process")

    monkeypatch.setattr(probes, "class_probabilities", not_here)
    _same(RequestGate(worker=worker).probes(lab, "sst5", suite="en"), suite)
    _same(RequestGate(worker=worker).probes(lab, "sst5", text=CASES), cases)
    assert worker._process.pid != os.getpid() and worker._process.poll() is None


def test_errors_come_back_as_in_the_app_and_name_only_what_the_visitor_sees(lab, worker):
    gate = RequestGate(worker=worker)
    gate.probes(lab, None, suite="en")  # the worker has every task loaded now
    process = worker._process
    with pytest.raises(SuiteError) as here:
        run_suite(lab, "no-such-suite")
    with pytest.raises(SuiteError) as there:
        gate.probes(lab, None, suite="no-such-suite")
    assert str(there.value) == str(here.value)
    visitor = Lab({key: ckpt for key, ckpt in lab.checkpoints.items() if key[0] == "sst5"})  # sees sst5 alone
    with pytest.raises(ProbeInputError) as err:
        gate.probes(visitor, "sst2", suite="en")
    assert err.value.code == "unknown_task" and err.value.params["available"] == ["sst5"]
    with pytest.raises(ProbeInputError) as err:
        gate.probes(lab, "sst5", text="only a sentence")
    assert err.value.code == "bad_columns"
    assert worker._process is process and process.poll() is None  # refusals leave the worker warm


def test_a_suite_asked_again_is_the_kept_report_and_a_visitors_model_is_another_key(
    lab_root, worker, tmp_path, monkeypatch
):
    lab = ServedLab.load(lab_root)
    lab.answers = AnswerCache()
    runs = []
    real_run = worker.run
    monkeypatch.setattr(worker, "run", lambda job, alive: runs.append(job) or real_run(job, alive))
    first = RequestGate(worker=worker).probes(lab, None, suite="en")
    assert RequestGate(worker=worker).probes(lab, None, suite="en") is first and len(runs) == 1
    RequestGate(worker=worker).probes(lab, "sst5", text=CASES)  # a visitor's own cases are never kept
    RequestGate(worker=worker).probes(lab, "sst5", text=CASES)
    assert len(runs) == 3
    # a visitor who trained a model of its own: the suite on every task it sees is its own report
    mine = shutil.copytree(lab_root / "sst5" / "dcnn", tmp_path / "mine")
    config = json.loads((mine / "config.json").read_text())
    (mine / "config.json").write_text(json.dumps({**config, "task": "mine"}))
    lab.add_checkpoint(mine, owner="key:visitor")
    assert RequestGate(worker=worker).probes(lab.visible_to("key:visitor"), None, suite="en") is not first
    assert RequestGate(worker=worker).probes(lab.visible_to("key:other"), None, suite="en") is first
    assert len(runs) == 4
