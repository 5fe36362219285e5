"""The Treebank tab in a real browser: pick a negation sentence, see its tree, choose a node,
land in the Lab tab with that phrase analysed.

The app runs on the tiny checkpoints with the tiny SST trees as its data (DATA_DIR); they have no
evaluation.json, so the dataset view must say which command builds it."""

import re

import pytest
from playwright.sync_api import expect


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
    expect(page.locator("#tb-tree svg")).to_contain_text("not")
    page.locator("#tb-nodes [data-testid='cell-2-0']").click()  # the row of node 2
    node = page.locator("#tb-node input")
    expect(node).to_have_value(re.compile(r"^2: \S"))
    phrase = node.input_value().split(": ", 1)[1]  # the node menu names the node by its phrase
    page.locator("#tb-open-node").click()
    expect(page.locator("#sentence textarea")).to_have_value(phrase)
    assert f" {phrase} " in " " + page.locator("#tb-sentence input").input_value().split(" · ", 2)[2] + " "
    expect(page.locator("#summary")).to_contain_text("Majority label")
