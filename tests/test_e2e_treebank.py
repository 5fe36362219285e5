"""The Treebank tab in a real browser (Debian chromium via Playwright, as tests/test_e2e.py): pick a
negation sentence, see its tree, choose a node, land in the Lab tab with that phrase analysed.

The app runs on the tiny checkpoints with the tiny SST trees as its data (DATA_DIR); they have no
evaluation.json, so the dataset view must say which command builds it."""

import re
from pathlib import Path

import pytest
from lab_fixture import build_checkpoints, serve_app
from playwright.sync_api import expect, sync_playwright


pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
TIMEOUT = 30_000  # ms, per expectation (a shared 2-core machine can be slow)


@pytest.fixture(scope="module")
def url(tiny_data, tmp_path_factory):
    assert Path(CHROMIUM).exists(), "Debian chromium is not installed (apt-get install chromium fonts-wqy-microhei)"
    root = build_checkpoints(tmp_path_factory.getbasetemp() / "lab" / "checkpoints", tiny_data)
    yield from serve_app(tmp_path_factory.mktemp("app") / "app.log", {"LAB_CHECKPOINTS": str(root), "DATA_DIR": str(tiny_data)},
                         timeout=60)


def test_a_negation_node_opens_in_the_lab(url):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 1000}).new_page()
        page.goto(url)
        page.get_by_role("tab", name="Treebank").click()
        expect(page.locator("#tb-data-summary")).to_contain_text("make evaluate-all", timeout=TIMEOUT)  # no evaluation.json
        page.locator("#tb-phenomenon input").click()
        page.get_by_role("option", name="Negation (not, n't, no, never…)").click()
        page.locator("#tb-search").click()
        expect(page.locator("#tb-hits")).to_contain_text("sentences found", timeout=TIMEOUT)
        expect(page.locator("#tb-sentence input")).to_have_value(re.compile(r"\bnot\b"), timeout=TIMEOUT)
        index = page.locator("#tb-sentence input").input_value().split(" ")[0]  # "#12 · 5 · it is not ..."
        expect(page.locator("#tb-tree-summary")).to_contain_text(f"test {index}", timeout=TIMEOUT)  # its tree
        expect(page.locator("#tb-tree svg")).to_contain_text("not", timeout=TIMEOUT)
        page.locator("#tb-nodes [data-testid='cell-2-0']").click()  # the row of node 2
        node = page.locator("#tb-node input")
        expect(node).to_have_value(re.compile(r"^2: \S"), timeout=TIMEOUT)
        phrase = node.input_value().split(": ", 1)[1]  # the node menu names the node by its phrase
        page.locator("#tb-open-node").click()
        expect(page.locator("#sentence textarea")).to_have_value(phrase, timeout=TIMEOUT)
        assert f" {phrase} " in " " + page.locator("#tb-sentence input").input_value().split(" · ", 2)[2] + " "
        expect(page.locator("#summary")).to_contain_text("Majority label", timeout=TIMEOUT)
        browser.close()
