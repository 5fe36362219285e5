"""The Treebank's gold tree in a real browser (Debian chromium via Playwright, as tests/test_e2e_treebank.py):
the tree renders as the lab's own SVG, rows of nodes over horizontal words, and one click on a node opens
the Lab with that node's phrase analysed."""

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
    yield from serve_app(
        tmp_path_factory.mktemp("app") / "app.log",
        {"LAB_CHECKPOINTS": str(root), "DATA_DIR": str(tiny_data)},
        timeout=60,
    )


def test_the_tree_renders_and_a_node_click_opens_the_lab(url):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 1000}).new_page()
        page.goto(url)
        page.get_by_role("tab", name="Treebank").click()
        nodes = page.locator("#tb-tree svg a.tree-node")
        expect(nodes.first).to_be_visible(timeout=TIMEOUT)
        tree = page.locator("#tb-tree svg")
        box = tree.bounding_box()
        assert box["width"] <= 1280 and box["height"] > 100  # within the page, with rows
        rows = {round(nodes.nth(i).locator("circle").bounding_box()["y"]) for i in range(nodes.count())}
        assert len(rows) >= 2  # depth: not a flat line
        assert page.locator("#tb-tree svg text[transform]").count() == 0  # the words are horizontal
        last = nodes.count() - 1  # a leaf: one word
        phrase = nodes.nth(last).locator("title").text_content().split("\n")[0]
        nodes.nth(last).locator("circle").click()
        expect(page.locator("#sentence textarea")).to_have_value(phrase, timeout=TIMEOUT)
        assert f"text={phrase}" in page.url.replace("+", " ") and "task=" in page.url
        expect(page.locator("#summary")).to_contain_text("models", timeout=TIMEOUT)  # every model, on the phrase
        browser.close()
