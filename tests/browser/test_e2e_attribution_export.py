"""The attribution upload in the Lab and a node's attributions in the Treebank tab, in a real browser (Debian
chromium via Playwright, as tests/test_e2e_treebank.py), on the tiny checkpoints and trees."""

from pathlib import Path

import pytest
from lab_fixture import build_checkpoints, serve_app
from playwright.sync_api import expect, sync_playwright

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
TIMEOUT = 60_000  # ms, per expectation (a shared 2-core machine can be slow)


@pytest.fixture(scope="module")
def url(tiny_data, tmp_path_factory):
    assert Path(CHROMIUM).exists(), "Debian chromium is not installed (apt-get install chromium fonts-wqy-microhei)"
    root = build_checkpoints(tmp_path_factory.getbasetemp() / "lab" / "checkpoints", tiny_data)
    yield from serve_app(
        tmp_path_factory.mktemp("app") / "app.log",
        {"LAB_CHECKPOINTS": str(root), "DATA_DIR": str(tiny_data)},
        timeout=60,
    )


def test_an_uploaded_file_comes_back_explained_and_a_node_shows_its_scores(url, tmp_path):
    upload = tmp_path / "mine.txt"
    upload.write_text("the film is not good\na great and moving plot\n", encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 1000}).new_page()
        page.goto(url)
        page.get_by_text("Attributions of a file").click()
        page.locator("#attr-export-file input[type=file]").set_input_files(str(upload))
        page.locator("#attr-export-run").click()
        # the three files, named "words .csv" and so on in the list
        expect(page.locator("#attr-export-files")).to_contain_text("words", timeout=TIMEOUT)
        expect(page.locator("#attr-export")).to_contain_text("(sentence, model) pairs from 2 lines", timeout=TIMEOUT)
        page.get_by_role("tab", name="Treebank").click()
        expect(page.locator("#tb-node-attr-summary")).to_contain_text("Node 0", timeout=TIMEOUT)
        expect(page.locator("#tb-node-attr")).to_contain_text("word", timeout=TIMEOUT)
        browser.close()
