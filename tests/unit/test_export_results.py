"""make export-results: the shipped checkpoints' predictions on a split and their probe results, as flat JSONL
records (what datasets' JSON loader reads) with a dataset card."""

import json

import pyarrow.json

from tools.export_results import CARD, CELLS, FAILURES, PREDICTIONS, main


def test_predictions_and_probe_results_are_flat_datasets_with_a_card(lab_root, tiny_data, tmp_path):
    assert (
        main(
            [
                "--task",
                "sst5",
                "--split",
                "test",
                "--checkpoints",
                str(lab_root),
                "--data-dir",
                str(tiny_data),
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    predictions = [json.loads(line) for line in (tmp_path / PREDICTIONS).read_text().splitlines()]
    models = {r["model"] for r in predictions}
    assert len(models) == 5 and len(predictions) == 40 * len(models)  # every test sentence of the tiny data
    assert all(r["correct"] == (r["label"] == r["gold"]) and abs(sum(r["probs"]) - 1) < 1e-4 for r in predictions)
    cells = [json.loads(line) for line in (tmp_path / CELLS).read_text().splitlines()]
    assert {c["model"] for c in cells} == models and all(0 <= c["passed"] <= c["total"] for c in cells)
    failures = [json.loads(line) for line in (tmp_path / FAILURES).read_text().splitlines()]
    assert len(failures) == sum(c["total"] - c["passed"] for c in cells)
    for name in (PREDICTIONS, CELLS):  # pyarrow's JSON reader is what datasets' "json" builder uses
        assert pyarrow.json.read_json(tmp_path / name).num_rows == len((tmp_path / name).read_text().splitlines())
    assert f"data_files: {PREDICTIONS}" in (tmp_path / CARD).read_text()


def test_a_split_that_does_not_exist_is_one_line(lab_root, tiny_data, tmp_path, capsys):
    assert (
        main(
            [
                "--task",
                "sst5",
                "--split",
                "validation",
                "--checkpoints",
                str(lab_root),
                "--data-dir",
                str(tiny_data),
                "--out",
                str(tmp_path),
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.count("\n") == 1
