"""A probe verdict shows its rule: the page states each test type's threshold, a directional failure that
moved the expected way by no more than the threshold says so, and a failure opens in the Lab with the
model that failed."""

from core.analysis.probes import Case, run_cases
from demo.tabs.probes import failure_reason, failure_table, open_failure, show


def both_ways(lab, margin: float):
    """One directional case expected up and the same one expected down: one of them moves the expected way."""
    cases = [Case("t", "c", "dir", "a good film", "a very good film", way) for way in ("up", "down")]
    return run_cases(lab, cases, "sst5", ["mrnn"], dir_margin=margin, capabilities={"c": {"en": "c", "zh": "c"}})


def test_the_summary_states_the_threshold_in_the_scores_units(lab):
    report = both_ways(lab, 0.25)
    low_high = report.margin / 0.25
    assert report.margin > 0 and abs(low_high - round(low_high)) < 1e-9  # a share of the score's range
    summary = show(report, "en")[0]
    assert f"by more than {report.margin:.3f}" in summary and "invariance, the label stays the same" in summary
    assert f"超过 {report.margin:.3f}" in show(report, "zh")[0]
    assert report.to_dict()["dir_threshold"] == round(report.margin, 6)  # the API states it too


def test_a_small_change_the_expected_way_fails_by_the_threshold_not_the_direction(lab):
    report = both_ways(lab, 0.9)  # no change of a tiny model comes near 0.9 of the range: both fail
    failures = report.cells["c"]["mrnn"].failures
    assert len(failures) == 2
    change = failures[0].variant_score - failures[0].score
    right, wrong = sorted(failures, key=lambda f: (f.case.expect == "up") != (change > 0))
    assert failure_reason(right, report.margin, "en") == (
        f"moved the expected way, {right.variant_score - right.score:+.3f}, but not by more than the threshold "
        f"{report.margin:.3f}"
    )
    assert failure_reason(wrong, report.margin, "en").startswith("moved the wrong way")
    _, table = failure_table(report, "c", "mrnn", "en")
    assert table.columns[-1] == "why it failed" and table.iloc[:, -1].str.contains("threshold").all()


def test_a_failure_opens_in_the_lab_with_its_model(lab):
    report = both_ways(lab, 0.9)
    opened = open_failure(report, "c", "mrnn", 0, "en")
    assert (opened.task, bool(opened.b), opened.model) == ("sst5", True, "mrnn")
