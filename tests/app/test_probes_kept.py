"""The Probes tab's first run of a shipped suite is answered from the report kept at warm-up (demo/tabs/probes.py
kept_suites), not after every model has read the suite in the worker; a cell of its table shows its failures."""

import pytest

from core.analysis.probes import load_suite, run_suite, suite_names
from core.answers import AnswerCache
from core.predict import AUTO
from demo import build_demo
from demo.tabs.probes import cell_at, keep_suites_aside, kept_suites, run_probe_suite
from service.lab import ServedLab
from service.settings import Settings
from web import runner


class InProcess:
    """The model worker, run here on `lab`: the jobs it was given."""

    def __init__(self, lab: ServedLab):
        self.lab, self.jobs = lab, []

    def run(self, job, alive=lambda: True):
        self.jobs.append(job)
        return job.run_in(self.lab)


@pytest.fixture
def served(lab, monkeypatch) -> tuple[ServedLab, InProcess]:
    fresh = ServedLab(lab.checkpoints, lab.sources, answers=AnswerCache())
    worker = InProcess(fresh)
    monkeypatch.setattr(runner, "WORKER", worker)
    return fresh, worker


def test_the_shipped_suites_are_run_at_warm_up_and_a_visitors_first_run_reads_them(served, monkeypatch):
    lab, worker = served
    demo = build_demo(lab, "checkpoints", Settings.load())
    monkeypatch.setattr(runner, "WORKER", worker)  # build_demo chose the app's (choose_worker)
    warm_ups = [load for load in runner._WARM_UPS[demo] if getattr(load, "func", None) is keep_suites_aside]
    assert len(warm_ups) == 1
    warm_ups[0]().join()  # in a thread of its own: the warm-ups after it do not wait
    served_suites = [name for name in suite_names() if load_suite(name).task in lab.tasks()]
    assert served_suites and [job.suite for job in worker.jobs] == served_suites
    visitor = lab.visible_to("visitor-without-models")
    for name in served_suites:
        *_, report = run_probe_suite(visitor, name, AUTO, "en")
        assert (report.suite, report.task) == (name, load_suite(name).task)
    assert len(worker.jobs) == len(served_suites)  # every first run read the kept report


def test_a_suite_of_a_task_not_served_is_not_run(served):
    lab, worker = served
    sst_only = ServedLab({k: c for k, c in lab.checkpoints.items() if k[0] == "sst5"}, answers=lab.answers)
    kept_suites(sst_only)
    assert [job.suite for job in worker.jobs] == ["en"]


def test_a_cell_of_the_pass_rate_table(lab):
    report = run_suite(lab, "en")
    second = list(report.cells)[1]
    assert cell_at(report, 1, 2, "dcnn") == (second, report.models[1])
    assert cell_at(report, 1, 0, "dcnn") == (second, "dcnn")  # the capability's own column keeps the model
    assert cell_at(report, len(report.cells), 1, "dcnn") is None
    assert cell_at(None, 0, 1, "dcnn") is None
