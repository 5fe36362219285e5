"""Issue 48, item 8, in a real browser: a task trained on a file named like a Markdown link, with labels a
spreadsheet would run as formulas, shows them as typed in the Lab (no link, no formula), and its attribution
export's CSV quotes them; "All five" chosen and Analyse clicked at once, after an intervention, answers without
Gradio's "not in the list of choices". Two pages, two visitors, of one app (served here, on the tiny models)."""

import csv
import io
import json
import shutil

import pytest
from lab_fixture import start_app
from playwright.sync_api import expect

from demo.i18n import t

TITLE = "x[a](javascript:alert(8)).csv · 2026-11-26 12:00"
LABELS = ['=HYPERLINK("http://example.com","[b](javascript:alert(9))")', "+1", "-1", "@x <img src=x>", "=1+1"]
RESULT_TIMEOUT = 60_000  # ms


@pytest.fixture(scope="module")
def url(lab, lab_root, tmp_path_factory, monkeypatch_module):
    """The app served in this process, with one more public task: the tiny DCNN renamed, its file and labels
    hostile (a visitor's own task shows the same way to its owner)."""
    from service.settings import DEFAULTS

    task = "user_x_a_javascript_alert_8_0a1b2c"
    folder = tmp_path_factory.mktemp("user") / task / "dcnn"
    shutil.copytree(lab_root / "sst5" / "dcnn", folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"task": task, "labels": LABELS}))
    lab.add_checkpoint(folder, title=TITLE)
    monkeypatch_module.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
    demo, address = start_app(lab, concurrency=DEFAULTS.model_concurrency, max_size=64)
    yield address
    demo.close()


def choose(page, dropdown: str, option: str) -> None:
    page.locator(f"{dropdown} input").click()
    page.get_by_role("option", name=option, exact=True).click()


def test_a_hostile_file_name_and_labels_show_as_typed_and_export_quoted(url, open_page, tmp_path):
    page = open_page(url)
    choose(page, "#task", TITLE)
    choose(page, "#model", "DCNN (Kalchbrenner et al. 2014)")
    page.locator("#sentence textarea").fill("a good film")
    page.locator("#run").click()
    summary = page.locator("#summary")
    expect(summary).to_contain_text(TITLE, timeout=RESULT_TIMEOUT)  # the file name as typed
    shown = summary.inner_text()
    assert any(label in shown for label in LABELS), shown  # the predicted label as typed
    assert summary.locator("a, img").count() == 0 and page.locator('a[href^="javascript"]').count() == 0

    upload = tmp_path / "mine.txt"
    upload.write_text("a good film\nthe plot is not dull\n", encoding="utf-8")
    page.get_by_text("Attributions of a file").click()
    page.locator("#attr-export-file input[type=file]").set_input_files(str(upload))
    page.locator("#attr-export-run").click()
    link = page.locator('#attr-export-files a[href*="words"]')
    expect(link).to_have_count(1, timeout=RESULT_TIMEOUT)
    rows = list(csv.DictReader(io.StringIO(page.request.get(link.get_attribute("href")).text())))
    assert len(rows) == 3 + 5 and {r["label"] for r in rows} <= {f"'{label}" for label in LABELS}  # all quoted


def test_all_five_and_analyse_at_once_after_an_intervention_answer(url, open_page):
    """The race of the issue, on a second page while the first visitor's page stays open."""
    first, page = open_page(url), open_page(url)
    first.locator("#sentence textarea").fill("a good film")
    page.locator("#sentence textarea").fill("the film is not good")
    choose(page, "#model", "Tensor CNN (Lei et al. 2015)")
    choose(page, "#intervention", t("intervention_name_consecutive", "en"))  # analyses with it
    expect(page.locator("#result details.model-panel")).to_have_count(2, timeout=RESULT_TIMEOUT)
    # a Space's round trip: the reset of the menu reaches the server before the click's run does, and the page only
    # after the click (the "within ~0.3 s")
    network = page.context.new_cdp_session(page)
    network.send("Network.enable")
    network.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 500, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    choose(page, "#model", "All five")
    page.locator("#run").click()
    first.locator("#run").click()
    expect(page.locator("#result details.model-panel")).to_have_count(5, timeout=RESULT_TIMEOUT)
    expect(first.locator("#result details.model-panel")).to_have_count(5, timeout=RESULT_TIMEOUT)
    for shown in (page, first):
        assert shown.get_by_text("not in the list of choices").count() == 0
        assert shown.locator(".toast-body").count() == 0, shown.locator(".toast-body").all_inner_texts()
