"""The Treebank's gold tree in a real browser (Debian chromium via Playwright, as tests/test_e2e_treebank.py):
the tree renders as the lab's own SVG, rows of nodes over horizontal words, its gold symbols not underlined,
and one click on a node opens the Lab with that node's phrase analysed in a new tab, the tree kept."""

import pytest
from playwright.sync_api import expect


@pytest.fixture(scope="module")
def app_env(tiny_data):
    """The tiny SST trees as the app's data (DATA_DIR): the Treebank tab reads them."""
    return {"DATA_DIR": str(tiny_data)}


def test_the_tree_renders_and_a_node_click_opens_the_lab(url, open_page):
    page = open_page(url)
    page.get_by_role("tab", name="Treebank").click()
    nodes = page.locator("#tb-tree svg a.tree-node")
    expect(nodes.first).to_be_visible()
    tree = page.locator("#tb-tree svg")
    box = tree.bounding_box()
    assert box["width"] <= 1280 and box["height"] > 100  # within the page, with rows
    rows = {round(nodes.nth(i).locator("circle").bounding_box()["y"]) for i in range(nodes.count())}
    assert len(rows) >= 2  # depth: not a flat line
    assert page.locator("#tb-tree svg text[transform]").count() == 0  # the words are horizontal
    last = nodes.count() - 1  # a leaf: one word
    phrase = nodes.nth(last).locator("title").text_content().split("\n")[0]
    assert nodes.first.locator("text").evaluate("t => getComputedStyle(t).textDecorationLine") == "none"
    with page.context.expect_page() as opened:
        nodes.nth(last).locator("circle").click()
    lab = opened.value
    expect(lab.locator("#sentence textarea")).to_have_value(phrase)
    assert f"text={phrase}" in lab.url.replace("+", " ") and "task=" in lab.url
    expect(lab.locator("#summary")).to_contain_text("models")  # every model, on the phrase
    expect(tree).to_be_visible()  # the tree's page is as it was
