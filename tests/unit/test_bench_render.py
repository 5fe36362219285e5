"""tools.bench's markdown: the headline page (reports/benchmarks.md) apart from the every-entry table (reports/runs.md),
and `--render`, which redraws both from a stored benchmarks.json without reading a run."""

import json
import shutil

import pytest

from core.data import PROJECT_ROOT
from tools.bench.cli import main
from tools.bench.markdown import RUNS_FILE, render_markdown, render_runs


def test_every_entry_has_its_own_file_and_render_redraws_it_from_the_json(tmp_path):
    runs, docs = tmp_path / "runs", tmp_path / "docs"
    for model, seed, accuracy in (("dcnn", 1, 0.875), ("adasent", 1, 0.861)):
        (runs / "trec" / f"{model}-s{seed}").mkdir(parents=True)
        (runs / "trec" / f"{model}-s{seed}" / "metrics.json").write_text(
            json.dumps(
                {
                    "task": "trec",
                    "model": model,
                    "seed": seed,
                    "dev_accuracy": accuracy,
                    "test": {"accuracy": accuracy},
                    "train_config": {"model": model, "task": "trec"},
                }
            )
        )
    assert main(["--sections", "accuracy", "--runs", str(runs), "--out", str(docs)]) == 0
    headline, every = (docs / "benchmarks.md").read_text(), (docs / RUNS_FILE).read_text()
    assert "## Accuracy" in headline and "### Not run" in headline and f"[{RUNS_FILE}]({RUNS_FILE})" in headline
    assert "| A1 | trec |" not in headline and "- **A1** seeds [1]" not in headline
    assert "| A1 | trec |" in every and "| A2 | trec |" in every and "- **A1** seeds [1], accuracies [87.5]" in every
    assert "`python -m core.training.train --model dcnn --task trec" in every

    stored = (docs / "benchmarks.json").read_bytes()
    shutil.rmtree(runs)  # --render reads the JSON alone
    (docs / "benchmarks.md").unlink()
    (docs / RUNS_FILE).unlink()
    assert main(["--render", "--out", str(docs)]) == 0
    assert (docs / "benchmarks.md").read_text() == headline and (docs / RUNS_FILE).read_text() == every
    assert (docs / "benchmarks.json").read_bytes() == stored
    with pytest.raises(SystemExit, match="no .*benchmarks.json"):
        main(["--render", "--out", str(tmp_path / "empty")])


def test_the_committed_pages_are_the_render_of_their_json():
    """What `python -m tools.bench --render --out reports` writes, so a hand edit or a stale page fails here;
    the headline page stays short enough to read (the every-entry table is the long part)."""
    out = PROJECT_ROOT / "reports"
    report = json.loads((out / "benchmarks.json").read_text(encoding="utf-8"))
    assert (out / "benchmarks.md").read_text(encoding="utf-8") == render_markdown(report)
    assert (out / RUNS_FILE).read_text(encoding="utf-8") == render_runs(report)
    assert len((out / "benchmarks.md").read_bytes()) <= 40_000
