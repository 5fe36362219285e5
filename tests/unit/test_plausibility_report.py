"""Plausibility where it is reported: `make attribution`'s JSON and Markdown (with a task left out keeping its
previous rows) and the Lab's faithfulness hint."""

import json
import shutil

from core.analysis.attribution import METHODS, most_faithful
from core.checkpoints.checkpoint import load_checkpoint
from core.checkpoints.manifest import FAITHFULNESS, read_manifest
from demo import attribution_view
from tools.research import attribution as report_tool


def test_make_attribution_scores_plausibility_on_sst_and_keeps_other_tasks(lab_root, tiny_data, tmp_path):
    checkpoints = shutil.copytree(lab_root, tmp_path / "checkpoints")  # the tool writes into the checkpoints
    kept = {
        "sentences": 9,
        "aopc": dict.fromkeys(METHODS, 0.2),
        "random": 0.1,
        "weights_sha256": "old",
        "ig_completeness": {
            "median": 0.01,
            "max": 0.02,
            "share_under_target": 1.0,
            "median_steps": 32,
            "max_steps": 32,
        },
        "ms_per_sentence": dict.fromkeys(METHODS, 1.0),
    }
    (tmp_path / "attribution.json").write_text(
        json.dumps(
            {  # a report written before per-task runs
                "date": "2026-01-01 00:00 UTC",
                "sample": 9,
                "seed": 5,
                "machine": {"commit": "abc"},
                "results": {"zh_sentiment": {"dcnn": kept}, "sst5": {"dcnn": kept}},
            }
        )
    )
    assert (
        report_tool.main(
            [
                "--checkpoints",
                str(checkpoints),
                "--data-dir",
                str(tiny_data),
                "--tasks",
                "sst5",
                "--sample",
                "4",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    report = json.loads((tmp_path / "attribution.json").read_text())
    assert list(report["results"]) == ["sst5", "zh_sentiment"] and report["results"]["zh_sentiment"]["dcnn"] == kept
    assert report["runs"]["zh_sentiment"] == {"date": "2026-01-01 00:00 UTC", "commit": "abc", "sample": 9, "seed": 5}
    assert report["runs"]["sst5"]["sample"] == 4
    for entry in report["results"]["sst5"].values():
        assert set(entry["plausibility"]) == set(METHODS)
        for found in entry["plausibility"].values():
            assert found["precision_sentences"] <= 4
            assert found["rank_agreement"] is None or -1 <= found["rank_agreement"] <= 1
    # each measured checkpoint holds its own result, listed in the manifest; the others none
    listed = read_manifest(checkpoints)
    for model, entry in report["results"]["sst5"].items():
        assert f"sst5/{model}/{FAITHFULNESS}" in listed
        found = most_faithful(load_checkpoint(checkpoints / "sst5" / model))
        assert found["aopc"] == entry["aopc"] and found["plausibility"] == entry["plausibility"]
    assert not list(checkpoints.glob(f"zh_sentiment/*/{FAITHFULNESS}"))
    markdown = (tmp_path / "attribution.md").read_text()
    assert "## Plausibility" in markdown and "| sst5 | dcnn |" in markdown.split("## Plausibility")[1]
    assert "- zh_sentiment: 2026-01-01 00:00 UTC, commit `abc`, 9 test sentences" in markdown


def test_the_hint_names_the_method_closest_to_the_annotators(lab, measured):
    ckpt = lab.checkpoints[("sst5", "dcnn")]
    plausible = {
        m: {"rank_agreement": tau, "precision": 0.5, "chance": 0.4, "rank_sentences": 3, "precision_sentences": 4}
        for m, tau in zip(METHODS, (0.1, 0.3, None, -0.2))
    }
    entry = {"sentences": 7, "aopc": dict(zip(METHODS, (0.2, 0.1, 0.3, 0.05))), "random": 0.01}
    measured("sst5", "dcnn", entry | {"plausibility": plausible})
    measured("zh_sentiment", "dcnn", entry | {"sentences": 200})
    assert most_faithful(ckpt)["plausibility"] == plausible
    hint = attribution_view.faithfulness_hint(lab, "dcnn", "sst5", "en")
    assert (
        "**integrated gradients** 0.300 (random order 0.010)<br>closest to the annotators: "
        "**gradient × input** τ 0.30, P@3 0.50 (chance 0.40)"
    ) in hint
    assert hint.endswith("inside a gold phrase of the predicted side.")
    assert "reports/attribution.md, 7–200 test sentences per task" in attribution_view.faithfulness_hint(
        lab, "dcnn", "auto", "en"
    )
    assert "最接近标注者：**梯度 × 输入**" in attribution_view.faithfulness_hint(lab, "dcnn", "sst5", "zh")
    measured("sst5", "dcnn", entry)  # measured before plausibility
    assert "annotators" not in attribution_view.faithfulness_hint(lab, "dcnn", "sst5", "en")
