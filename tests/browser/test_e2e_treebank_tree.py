"""The Treebank's gold tree in a real browser (Debian chromium via Playwright, as tests/test_e2e_treebank.py):
the tree renders as the lab's own SVG, rows of nodes over horizontal words, its gold symbols not underlined,
and a click on a node (or Enter on it) opens the Lab tab of the same page with that node's phrase analysed, the
tree kept in its tab; a Ctrl-click opens the phrase's link in a new tab."""

import pytest
from playwright.sync_api import expect

from tools.bench.browser import TREE


@pytest.fixture(scope="module")
def app_env(tiny_data):
    """The tiny SST trees as the app's data (DATA_DIR): the Treebank tab reads them."""
    return {"DATA_DIR": str(tiny_data)}


def test_the_tree_renders_and_a_node_click_opens_the_lab(url, open_page):
    page = open_page(url)
    page.get_by_role("tab", name="Treebank").click()
    nodes = page.locator("#tb-tree svg a.tree-node")
    expect(nodes.first).to_be_visible()
    tree = page.locator(TREE)
    box = tree.bounding_box()
    assert box["width"] <= 1280 and box["height"] > 100  # within the page, with rows
    rows = {round(nodes.nth(i).locator("circle").bounding_box()["y"]) for i in range(nodes.count())}
    assert len(rows) >= 2  # depth: not a flat line
    assert page.locator("#tb-tree svg text[transform]").count() == 0  # the words are horizontal
    last = nodes.count() - 1  # a leaf: one word
    phrase = nodes.nth(last).locator("title").text_content().split("\n")[0]
    assert nodes.first.locator("text").evaluate("t => getComputedStyle(t).textDecorationLine") == "none"
    others: list = []
    page.context.on("page", lambda other: others.append(other.url))
    nodes.nth(last).locator("circle").click()
    expect(page.get_by_role("tab", name="Lab")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#sentence textarea")).to_have_value(phrase)
    expect(page.locator(".lab-result")).to_have_attribute("data-text", phrase)
    expect(page.locator("#summary")).to_contain_text("models")  # every model, on the phrase
    page.get_by_role("tab", name="Treebank").click()
    expect(tree).to_be_visible()  # the tree's tab is as it was
    root = nodes.first  # by keyboard: Enter on a focused node
    root_phrase = root.locator("title").text_content().split("\n")[0]
    root.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#sentence textarea")).to_have_value(root_phrase)
    expect(page.locator(".lab-result")).to_have_attribute("data-text", root_phrase)
    assert not others, others  # neither opened a page


def test_a_ctrl_click_on_a_node_opens_its_link_in_a_new_tab(url, open_page):
    page = open_page(url)
    page.get_by_role("tab", name="Treebank").click()
    node = page.locator("#tb-tree svg a.tree-node").last
    expect(node).to_be_visible()
    phrase = node.locator("title").text_content().split("\n")[0]
    with page.context.expect_page() as opened:
        node.locator("circle").click(modifiers=["ControlOrMeta"])
    lab = opened.value
    expect(lab.locator("#sentence textarea")).to_have_value(phrase)
    assert f"text={phrase}" in lab.url.replace("+", " ") and "task=" in lab.url
    expect(lab.locator("#summary")).to_contain_text("models")
    expect(page.locator(TREE)).to_be_visible()  # the tree's page is as it was
