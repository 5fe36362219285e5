"""Issue 48, items 2, 7 and 8, against one real app with several clients (tools/bench/redteam_content.py's cases, on
the tiny models): file exports run beside /predict without taking its slots and leave no folder behind, and
export only the visitor's own tasks; a killed model worker is named in /compare's answer; exported CSV cells
never start a formula; a visitor's file name and labels reach the Lab's Markdown escaped; an Analyse that
arrives with an intervention the server has just reset is answered."""

import json
import shutil
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from lab_fixture import start_app

from demo.plots import md
from service.owners import KEY, owner_id
from service.settings import DEFAULTS
from tools.bench import redteam_content
from tools.bench.loadtest import app_client, percentile
from tools.bench.redteam_content import (
    EXPORT_LINES,
    PAGE_WIDTH,
    PREDICT_ARGS,
    QueueError,
    _cells,
    case_export_csv_has_no_formulas,
    case_reset_intervention_is_no_error,
    case_worker_crash_is_named_on_the_lab_page,
    case_worker_crash_names_the_model,
    event_index,
    export_files,
    queue_call,
    upload,
)
from web.runner import WORKER

TITLE = "x[a](javascript:alert(8)).csv · 2026-11-26 12:00"
LABELS = ['=HYPERLINK("http://example.com","[b](javascript:alert(9))")', "+1", "-1", "@x", "\tx"]


@pytest.fixture(scope="module")
def app(lab, tmp_path_factory, monkeypatch_module):
    """The app on the tiny checkpoints as app.py queues it; its temporary files in a folder of their own."""
    monkeypatch_module.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
    monkeypatch_module.setenv("LAB_EXPORT_SECONDS", "2")  # read as the app is built (service.settings)
    monkeypatch_module.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("tmp")))
    demo, url = start_app(lab, concurrency=DEFAULTS.model_concurrency, max_size=64)
    yield url.rstrip("/")
    demo.close()


@pytest.fixture(scope="module")
def private_task(lab, lab_root, tmp_path_factory) -> tuple[str, str]:
    """(task, session): a visitor's own task, trained on a file named like a Markdown link, whose labels would be
    formulas in a spreadsheet (the tiny DCNN, renamed)."""
    session, task = uuid.uuid4().hex, "user_x_a_javascript_alert_8_0a1b2c"
    folder = tmp_path_factory.mktemp("user") / task / "dcnn"
    shutil.copytree(lab_root / "sst5" / "dcnn", folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"task": task, "labels": LABELS}))
    lab.add_checkpoint(folder, owner=owner_id(KEY, session), title=TITLE)
    return task, session


def test_file_exports_leave_predict_alone_and_their_folders_go(app, monkeypatch):
    """Four 57-line exports with every model at once, on a 2 s time budget each (the redteam case runs sixteen on
    the shipped models and the app's budget): a second client's /predict keeps p95 <= 1 s; each export stops at
    its budget, saying what it left out; no `attributions-*` folder stays behind."""
    found = export_files(app, EXPORT_LINES, "all", n=4, seconds=240)
    assert found["done"] == 4 and not found["failed"] and not found["predict_failed"], found["failed"]
    assert percentile(found["predict"], 0.95) <= 1.0, sorted(found["predict"])[-3:]
    for files, summary in found["outputs"]:
        assert [f["orig_name"] for f in files] == ["attributions.jsonl", "words.csv", "README.md"]
        assert "The export stops after 2 s of model time" in summary, summary
    assert not list(Path(tempfile.gettempdir()).glob("attributions-*"))


def test_an_export_uses_the_visitors_own_tasks_only_and_its_csv_has_no_formulas(app, private_task):
    task, owner_session = private_task
    with httpx.Client(timeout=120) as http:
        index = event_index(http.get(f"{app}/config").json(), "attr-export-run", "click")
        sent = upload(http, app, "mine.txt", b"a good film\nthe plot is not dull\n")
        with pytest.raises(QueueError) as refused:  # B: as if the task did not exist
            queue_call(http, app, index, [sent, "dcnn", task, "auto"], uuid.uuid4().hex)
        assert f"no model is loaded for task '{task}'" in str(refused.value), refused.value
        files, summary = queue_call(http, app, index, [sent, "dcnn", task, "auto"], owner_session)
        cells = _cells(http.get(next(f["url"] for f in files if f["orig_name"] == "words.csv")).text)
    assert summary.startswith("2 (sentence, model) pairs from 2 lines")
    assert {c for c in cells if c in {f"'{label}" for label in LABELS}}  # the labels, quoted
    assert not [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))]
    held, figure = case_export_csv_has_no_formulas(app)
    assert held, figure


def test_a_visitors_file_name_and_labels_reach_the_lab_escaped(app, private_task):
    task, owner_session = private_task
    with httpx.Client(timeout=120) as http:
        run = event_index(http.get(f"{app}/config").json(), "run", "click")
        summary = queue_call(
            http, app, run, ["a good film", "dcnn", task, "auto", "occlusion", "none", 1, PAGE_WIDTH], owner_session
        )
    text = summary[1]["value"] if isinstance(summary[1], dict) else summary[1]
    assert md(TITLE) in text and "](javascript" not in text, text
    assert any(f"**{md(label)}**" in text for label in LABELS), text  # the predicted label, as typed


def test_a_killed_model_worker_is_named_in_the_answer(app, monkeypatch):
    """One client's long /compare, then its Lab analysis, loses a model to a SIGKILL of the worker: the JSON answer
    and the page's notices name the model and why; another client's short /predict calls meanwhile all answer."""
    # the app's own worker (other tests of this process may have left a worker of their own running)
    monkeypatch.setattr(redteam_content, "worker_pids", lambda url: [WORKER._process.pid])
    other, answered, failed = app_client(app + "/"), [], []
    stop = threading.Event()

    def predicting():  # a call every half second: each case stops the worker for a second before its SIGKILL
        while not stop.is_set():
            try:
                answered.append(other.predict(*PREDICT_ARGS, api_name="/predict")["label"])
            except Exception as err:  # counted: every call must answer
                failed.append(str(err))
            time.sleep(0.5)

    thread = threading.Thread(target=predicting)
    thread.start()
    try:
        outcomes = [case_worker_crash_names_the_model(app), case_worker_crash_is_named_on_the_lab_page(app)]
    finally:
        stop.set()
        thread.join(60)
        other.close()
    assert all(held for held, _ in outcomes), outcomes
    assert answered and not failed, failed


def test_an_analyse_with_a_reset_intervention_is_answered(app):
    """Two visitors at once: each picks an intervention, then "All five", and its Analyse arrives with the
    intervention the server has just reset: all five answer, no Gradio error."""
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda _: case_reset_intervention_is_no_error(app), range(2)))
    assert all(held for held, _ in outcomes), outcomes
