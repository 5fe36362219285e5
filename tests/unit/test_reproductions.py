"""The best public reproduction beside each paper number (configs/papers.toml), and the Paper bars table of
reports/benchmarks.md that shows it: a number with its source, or an explicit "none found" with where we looked."""

import re

from core.models.papers import papers
from tools.bench.accuracy import paper_bars
from tools.bench.markdown import accuracy_markdown

PINNED = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+")


def test_every_paper_number_has_a_reproduction_or_says_where_none_was_found():
    for record in papers().values():
        for reported in record.reported:
            r, at = reported.reproduction, (record.model, reported.task, reported.phrases)
            if r.found:
                assert 0 < r.accuracy < 100 and r.source, at
                assert r.accuracy_max is None or r.accuracy < r.accuracy_max < 100, at
            else:
                assert r.searched and not r.source and r.accuracy_max is None, at
            assert not r.url or PINNED.fullmatch(r.url), at  # a repository file at the commit that was read


def test_a_papers_own_mean_and_std_sit_beside_its_best_run():
    for record in papers().values():
        for reported in record.reported:
            if reported.mean_std:
                mean, std = reported.mean_std
                assert 0 < std < 5 and abs(mean - reported.accuracy) < 2 * std + 1, record.model
    lei = {(r.task, r.phrases): r.mean_std for r in papers()["tensor_cnn"].reported}
    assert lei[("sst5", True)] == (51.4, 0.6) and lei[("sst5", False)] is None  # Table 2 is the phrase-label model


def test_a_paper_bar_records_its_reproduction():
    row = {"task": "trec", "phrases": False, "model": "dcnn", "variant": "", "n": 3, "seeds": [1, 2, 3]}
    [bar] = paper_bars([{**row, "folds": [0], "dev_mean": 86.0, "delta": -5.0}])
    assert bar["reproduction"]["accuracy"] is None and "DCNN" in bar["reproduction"]["searched"]


def test_the_paper_bars_table_reads_the_column_from_papers_toml():
    """A report stored before the column existed renders it too: the markdown reads configs/papers.toml."""
    entries = [("sst2", True, "dcnn"), ("sst5", True, "tensor_cnn"), ("mr", False, "adasent")]
    rows = [
        {"task": task, "phrases": phrases, "model": model, "variant": "", "n": 3, "seeds": [1, 2, 3], "folds": [0]}
        | {"mean": 50.0, "std": 1.0, "dev_mean": 50.0, "delta": -1.0}
        for task, phrases, model in entries
    ]
    bars = paper_bars(rows)
    for bar in bars:
        bar.pop("reproduction")
        bar.pop("mean_std")
    report = {"runs_dir": "runs", "accuracy": {"rows": rows, "bars": bars, "missing": [], "unfinished": []}}
    page = "\n".join(accuracy_markdown(report)).split("### Paper bars")[1].split("###")[0]
    header, _, *lines = [line for line in page.splitlines() if line.startswith("|")]
    assert "| paper | best public reproduction | ours (test) |" in header
    table = {tuple(line.split(" | ")[:3]): line for line in lines}
    assert len(table) == len(bars) == 3
    assert "| 86.8 | 85.0–86.0 |" in table[("| sst2", "phrases", "dcnn")]
    assert "| 51.2 (mean 51.4 ± 0.6) | 52.7 (the authors' re-run) |" in table[("| sst5", "phrases", "tensor_cnn")]
    assert "| 83.1 | none found |" in table[("| mr", "—", "adasent")]
    assert "- sst2 phrases dcnn: [FredericGodin/DynamicCNN README.md" in page
    assert "- mr — adasent: none found; searched: AdaSent re-implementations" in page
