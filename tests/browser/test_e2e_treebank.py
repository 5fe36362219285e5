"""The Treebank tab in a real browser: pick a negation sentence, see its tree, choose a node,
land in the Lab tab with that phrase analysed.

The app runs on the tiny checkpoints with the tiny SST trees as its data (DATA_DIR); they have no
evaluation.json, so the dataset view must say which command builds it."""

import re

import pytest
from playwright.sync_api import expect

from tools.bench.browser import TREE


@pytest.fixture(scope="module")
def app_env(tiny_data):
    """The tiny SST trees as the app's data."""
    return {"DATA_DIR": str(tiny_data)}


def test_a_negation_node_opens_in_the_lab(open_page, url):
    page = open_page(url)
    page.get_by_role("tab", name="Treebank").click()
    expect(page.locator("#tb-data-summary")).to_contain_text("make evaluate-all")  # no evaluation.json
    page.locator("#tb-phenomenon input").click()
    page.get_by_role("option", name="Negation (not, n't, no, never…)").click()
    page.locator("#tb-search").click()
    expect(page.locator("#tb-hits")).to_contain_text("sentences found")
    expect(page.locator("#tb-sentence input")).to_have_value(re.compile(r"\bnot\b"))
    index = page.locator("#tb-sentence input").input_value().split(" ")[0]  # "#12 · 5 · it is not ..."
    expect(page.locator("#tb-tree-summary")).to_contain_text(f"test {index}")  # its tree
    expect(page.locator(TREE)).to_contain_text("not")
    page.locator("#tb-nodes tr[data-row='2'] button").click()  # the row of node 2
    node = page.locator("#tb-node input")
    expect(node).to_have_value(re.compile(r"^2: \S"))
    phrase = node.input_value().split(": ", 1)[1]  # the node menu names the node by its phrase
    page.locator("#tb-open-node").click()
    expect(page.locator("#sentence textarea")).to_have_value(phrase)
    assert f" {phrase} " in " " + page.locator("#tb-sentence input").input_value().split(" · ", 2)[2] + " "
    expect(page.locator("#summary")).to_contain_text("Majority label")


def test_a_node_tables_row_picks_its_node_by_mouse_and_by_keyboard(open_page, url):
    """The node table is a plain HTML table, captioned, with headed columns (a Gradio table drew a component per
    cell: docs/performance.md, "Treebank in the browser"): a click anywhere on a row, or Enter on the row's button,
    picks its node and draws its panel, one event each."""
    page = open_page(url)
    page.get_by_role("tab", name="Treebank").click()
    expect(page.locator("#tb-node-attr-summary")).to_contain_text("Node 0")
    expect(page.locator("#tb-nodes table > caption")).to_contain_text("Every node")
    expect(page.locator("#tb-node-attr table > caption")).to_contain_text("The chosen node")
    joins = []
    page.on("request", lambda request: joins.append(request.url) if "/queue/join" in request.url else None)
    page.locator("#tb-nodes tr[data-row='2'] td").last.click()  # the phrase's cell
    expect(page.locator("#tb-node input")).to_have_value(re.compile(r"^2: \S"))
    expect(page.locator("#tb-node-attr-summary")).to_contain_text("Node 2")
    page.get_by_role("button", name="Choose node 1", exact=True).focus()
    page.keyboard.press("Enter")
    expect(page.locator("#tb-node input")).to_have_value(re.compile(r"^1: \S"))
    expect(page.locator("#tb-node-attr-summary")).to_contain_text("Node 1")
    page.wait_for_timeout(500)
    assert len(joins) == 2
