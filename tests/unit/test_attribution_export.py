"""Attributions in bulk (core/analysis/export.py, `make attribute`): flat records a dataset loader reads, the
long CSV, the dataset card, and the size caps."""

import csv
import json

import pyarrow.json
import pytest
import yaml

from core.analysis.attribution import METHODS
from core.analysis.export import (
    CARD,
    CSV,
    JSONL,
    SENTENCES_CAP,
    UPLOAD_MAX_CHARS,
    UPLOAD_MAX_LINES,
    BudgetSpent,
    ExportError,
    Sentence,
    attribution_records,
    chunks,
    read_lines,
    text_records,
    write_export,
)
from core.data.sst import FINE_LABELS
from tools import attribute


def _run(lab_root, tiny_data, out, *args) -> int:
    return attribute.main(["--checkpoints", str(lab_root), "--data-dir", str(tiny_data), "--out", str(out), *args])


def test_make_attribute_writes_flat_records_a_csv_and_a_card(lab_root, tiny_data, tmp_path):
    assert (
        _run(
            lab_root, tiny_data, tmp_path, "--task", "sst5", "--split", "dev", "--limit", "6", "--models", "dcnn", "agt"
        )
        == 0
    )
    records = [json.loads(line) for line in (tmp_path / JSONL).read_text().splitlines()]
    assert {r["model"] for r in records} == {"dcnn", "agt"} and {r["id"] for r in records} <= set(range(6))
    for r in records:  # flat: the same keys, scalars or lists of scalars
        assert list(r) == list(records[0])
        assert all(
            not isinstance(v, dict) and not (isinstance(v, list) and any(isinstance(x, (list, dict)) for x in v))
            for v in r.values()
        )
        assert all(len(r[m]) == len(r["words"]) for m in METHODS) and r["gold"] in FINE_LABELS
        assert r["probs"][FINE_LABELS.index(r["label"])] == pytest.approx(max(r["probs"])) == r["confidence"]
        assert all(-1 <= r[f"aopc_{m}"] <= 1 for m in METHODS)
    table = pyarrow.json.read_json(tmp_path / JSONL)  # what datasets' json loader reads the file with
    assert table.num_rows == len(records) and str(table.schema.field("occlusion").type) == "list<item: double>"
    with open(tmp_path / CSV, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == sum(len(r["words"]) for r in records)
    assert float(rows[0]["smoothgrad"]) == pytest.approx(records[0]["smoothgrad"][0])
    front = yaml.safe_load((tmp_path / CARD).read_text().split("---")[1])
    assert [c["data_files"] for c in front["configs"]] == [JSONL, CSV] and front["language"] == ["en"]


def test_make_attribute_refuses_in_one_line(lab_root, tiny_data, tmp_path, capsys):
    assert _run(lab_root, tiny_data, tmp_path, "--limit", str(SENTENCES_CAP + 1)) == 2
    assert capsys.readouterr().err == (
        f"make attribute: --limit {SENTENCES_CAP + 1} is over the cap of "
        f"{SENTENCES_CAP} sentences; export at most {SENTENCES_CAP} at a time.\n"
    )
    for args in (["--limit", "0"], ["--task", "trec"], ["--models", "bert"], ["--split", "validation"]):
        assert _run(lab_root, tiny_data, tmp_path, *args) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / JSONL).exists()


def test_uploaded_lines_are_capped():
    assert read_lines("\ufeffa good film\n\n  dull  \n".encode()) == ["a good film", "dull"]
    for data, code in (
        (b"\xff\xfe", "not_text"),
        (b"\n \n", "empty_file"),
        (("x\n" * (UPLOAD_MAX_LINES + 1)).encode(), "too_many_lines"),
        (("x" * (UPLOAD_MAX_CHARS + 1)).encode(), "too_many_chars"),
    ):
        with pytest.raises(ExportError) as err:
            read_lines(data)
        assert err.value.code == code


def test_csv_cells_that_would_start_a_formula_are_neutralised(tmp_path):
    """The OWASP rule: a text cell starting with =, +, -, @, tab or carriage return gets a single quote in front in
    words.csv (a spreadsheet would run it); numbers stay numbers, and the JSONL keeps the text as it is."""
    hostile = ['=HYPERLINK("http://x","y")', "+1", "-cmd", "@SUM(A1)", "\tx", "\rx"]
    words = [*hostile, "fine", "'quoted"]
    record = {"id": 0, "model": "dcnn", "words": words, "label": "=1+1", "gold": "-2"}
    record |= {m: [-0.5] * len(words) for m in METHODS} | {f"aopc_{m}": -0.25 for m in METHODS}
    write_export([record], tmp_path, "card")
    with open(tmp_path / CSV, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["word"] for r in rows] == [f"'{w}" for w in hostile] + ["fine", "'quoted"]
    assert {r["label"] for r in rows} == {"'=1+1"} and {r["gold"] for r in rows} == {"'-2"}
    assert {r["occlusion"] for r in rows} == {"-0.5"} and {r["aopc_occlusion"] for r in rows} == {"-0.25"}
    assert json.loads((tmp_path / JSONL).read_text(encoding="utf-8"))["words"] == words


def test_the_work_goes_in_chunks_within_the_word_budget(lab):
    """Every model of a chunk before the next chunk; past the word budget the last chunks are left out, and said
    to be; a runner that spends its time stops the export there (BudgetSpent)."""
    lines = ["a good film", "the plot is not dull", "fun", " ".join(["good"] * 30), "the film is bad"]
    assert [[s.id for s in c] for c in chunks([Sentence(i, ["w"] * n, "") for i, n in enumerate([30, 9, 2, 41])])] == [
        [0, 1],
        [2],
        [3],
    ]
    ran = []

    def run(key, sentences):
        ran.append((key[1], [s.id for s in sentences]))
        return attribution_records(lab.checkpoints[key], sentences)

    models = lab.models("sst5")
    whole = text_records(lab, lines, "sst5", None, "all", run=run)
    assert whole.skipped == 1 and whole.pairs == 4 * len(models) == len(whole.records) and not whole.left
    assert ran[: len(models)] == [(m, [0, 1, 3]) for m in models]  # 3 + 5 + 30 words: one chunk
    assert ran[len(models) :] == [(m, [4]) for m in models] and not whole.stopped
    cut = text_records(lab, lines, "sst5", None, "all", max_words=38 * 2)
    assert (len(cut.records), cut.left, cut.stopped) == (3 * 2, 4 * len(models) - 3 * 2, "words")

    def spent(key, sentences):
        if ran:
            raise BudgetSpent()
        ran.append(key)
        return attribution_records(lab.checkpoints[key], sentences)

    ran.clear()
    timed = text_records(lab, lines, "sst5", None, "dcnn", run=spent)
    assert (len(timed.records), timed.left, timed.stopped) == (3, 1, "time")
