"""The Lab's upload of a text file (demo/attribution_export.py): every line explained, the files returned, and
one clear line, in English or Chinese, for a file it refuses."""

import json
from pathlib import Path

import gradio as gr
import pytest

from core.analysis.attribution import METHODS
from core.analysis.export import CARD, CSV, JSONL, UPLOAD_MAX_LINES
from demo import build_demo
from demo.attribution_export import export_file


def test_every_line_is_explained_by_every_model_of_its_task(lab, tmp_path):
    upload = tmp_path / "mine.txt"
    upload.write_text("the film is not good\n\nfun\na great and moving plot\n", encoding="utf-8")
    progress = []
    files, summary = export_file(
        lab, str(upload), "all", "sst5", "auto", "en", lambda done, total: progress.append((done, total))
    )
    assert [f.rsplit("/", 1)[1] for f in files] == [JSONL, CSV, CARD]
    records = [json.loads(line) for line in Path(files[0]).read_text(encoding="utf-8").splitlines()]
    models = lab.models("sst5")
    assert len(records) == 2 * len(models) and {r["id"] for r in records} == {0, 2}  # "fun" is one word
    assert {r["model"] for r in records} == set(models) and all(r["gold"] is None for r in records)
    assert all(len(r[m]) == len(r["words"]) for r in records for m in METHODS)
    assert progress[-1] == (2 * len(models), 2 * len(models))
    assert (
        summary == f"{len(records)} (sentence, model) pairs from 3 lines; 1 lines left out (refused, or outside "
        "2 to 60 words)."
    )


def _refusal(*args) -> str:
    with pytest.raises(gr.Error) as err:
        export_file(*args)
    return err.value.message


def test_a_refused_file_gets_one_line(lab, tmp_path):
    upload = tmp_path / "long.txt"
    upload.write_text("a good film\n" * (UPLOAD_MAX_LINES + 1), encoding="utf-8")
    assert (
        _refusal(lab, str(upload), "dcnn", "sst5", "auto", "en")
        == f"The file has {UPLOAD_MAX_LINES + 1} sentences; the upload takes at most {UPLOAD_MAX_LINES}, one per line."
    )
    assert _refusal(lab, str(upload), "dcnn", "sst5", "auto", "zh").startswith(f"文件有 {UPLOAD_MAX_LINES + 1} 句")
    upload.write_text("fun\n", encoding="utf-8")
    assert _refusal(lab, str(upload), "dcnn", "sst5", "auto", "en").startswith("No sentence has 2 to 60 words")
    assert _refusal(lab, None, "dcnn", "sst5", "auto", "en") == "Choose a text file first."
    assert _refusal(lab, None, "dcnn", "sst5", "auto", "zh") == "请先选择一个文本文件。"


def test_the_lab_tab_holds_the_upload(lab):
    ids = {c.get("props", {}).get("elem_id") for c in build_demo(lab).config["components"]}
    assert {"attr-export-file", "attr-export-run", "attr-export-files", "result", "attr-hint"} <= ids
