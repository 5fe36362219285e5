"""A slow attribution method in the Lab says how far it is (demo/lab_analysis.py: streamed, CountingGate): status
lines for #analysing while the analysis runs in a thread with the request's context, then the outputs."""

import contextvars
import threading

from demo.lab_analysis import CountingGate, analyse, streamed
from demo.tabs.checkpoints import facts

EN = "the film is not good but the acting is great"
REQUEST = contextvars.ContextVar("request", default="none")


def test_status_lines_come_while_the_analysis_runs_then_its_outputs():
    finish = threading.Event()
    REQUEST.set("mine")

    def work():
        finish.wait(30)
        return f"summary for {REQUEST.get()}", "notices", "result"

    seconds = []
    updates = streamed(work, lambda s: seconds.append(s) or f"{s} s", "done", poll=0.01)
    first, second = next(updates), next(updates)  # the work waits: status lines only
    assert (first[0], second[0]) == tuple(f"{s} s" for s in seconds) and 0.01 <= seconds[0] < seconds[1]
    assert all(u[1:] == first[1:] for u in (first, second)) and len(first) == 4  # the other outputs unchanged
    finish.set()
    *_, last = updates
    assert last == ("done", "summary for mine", "notices", "result")  # the work saw the request's context


def test_the_gate_counts_the_models_that_answered(lab):
    gate = CountingGate()
    summary, _, result = analyse(lab, facts(lab), EN, "all", "sst5", "en", "en", "occlusion", gate=gate)
    assert gate.answered == len(lab.models("sst5")) == 5 and "<svg" in result
    gate = CountingGate()
    analyse(lab, facts(lab), EN, "mrnn", "sst5", "en", "zh", "integrated_gradients", gate=gate)
    assert gate.answered == 1
