"""The Lab's upload of a text file (demo/attribution_export.py): every line explained, the files returned, and
one clear line, in English or Chinese, for a file it refuses."""

import json
import shutil
import tempfile
from pathlib import Path

import gradio as gr
import pytest
from test_serving import _same

from core.analysis.attribution import METHODS
from core.analysis.export import CARD, CSV, JSONL, UPLOAD_MAX_LINES
from demo import build_demo
from demo.attribution_export import export_file
from service.settings import Settings
from web.runner import ModelWorker, RequestGate


def keeper(folder: Path):
    """export_file's `keep`: a copy in `folder` (the app's: Gradio's cache)."""
    folder.mkdir(exist_ok=True)
    return lambda path: shutil.copy(path, folder)


def test_every_line_is_explained_by_every_model_of_its_task(lab, tmp_path, monkeypatch):
    upload = tmp_path / "mine.txt"
    upload.write_text("the film is not good\n\nfun\na great and moving plot\n", encoding="utf-8")
    progress = []
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    files, summary = export_file(
        lab,
        str(upload),
        "all",
        "sst5",
        "auto",
        "en",
        keeper(tmp_path / "kept"),
        lambda done, total: progress.append((done, total)),
    )
    assert [f.rsplit("/", 1)[1] for f in files] == [JSONL, CSV, CARD]
    assert all(Path(f).parent == tmp_path / "kept" for f in files)
    assert not list((tmp_path / "tmp").iterdir())  # the folder the files were written in is gone
    records = [json.loads(line) for line in Path(files[0]).read_text(encoding="utf-8").splitlines()]
    models = lab.models("sst5")
    assert len(records) == 2 * len(models) and {r["id"] for r in records} == {0, 2}  # "fun" is one word
    assert {r["model"] for r in records} == set(models) and all(r["gold"] is None for r in records)
    assert all(len(r[m]) == len(r["words"]) for r in records for m in METHODS)
    assert progress[-1] == (len(models), len(models))  # the two sentences make one chunk per model
    assert (
        summary == f"{len(records)} (sentence, model) pairs from 3 lines; 1 lines left out (refused, or outside "
        "2 to 60 words)."
    )


def _records(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def test_in_the_worker_the_records_are_the_same_and_the_time_budget_stops_it(lab, tmp_path):
    """Through the app's gate (the long lane, the worker process) an export gives the records it gives here; with
    a time budget spent after its first chunk, the rest is left out and the summary says so."""
    upload = tmp_path / "mine.txt"
    upload.write_text("the film is not good\na great and moving plot\n" + " ".join(["dull"] * 39) + "\n")
    here, _ = export_file(lab, str(upload), "all", "sst5", "auto", "en", keeper(tmp_path / "here"))
    worker = ModelWorker(nice=0)
    try:
        gate = RequestGate(worker=worker)
        there, summary = export_file(
            lab, str(upload), "all", "sst5", "auto", "en", keeper(tmp_path / "there"), None, gate
        )
        _same(_records(there[0]), _records(here[0]))  # floats to 1e-5: another process may round otherwise
        _, summary = export_file(
            lab, str(upload), "dcnn", "sst5", "auto", "en", keeper(tmp_path / "cut"), None, gate, seconds=1e-6
        )
    finally:
        worker.close()
    assert summary == (
        "2 (sentence, model) pairs from 3 lines; 0 lines left out (refused, or outside 2 to 60 words). The export "
        "stops after 1e-06 s of model time: 1 of 3 (sentence, model) pairs are left out. Export the rest in another "
        "file, or choose one model."
    )


def _refusal(*args) -> str:
    with pytest.raises(gr.Error) as err:
        export_file(*args[:6], lambda path: path, *args[6:])
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
    page = build_demo(lab, "checkpoints", Settings.load())
    ids = {c.get("props", {}).get("elem_id") for c in page.config["components"]}
    assert {"attr-export-file", "attr-export-run", "attr-export-files", "result", "attr-hint"} <= ids
