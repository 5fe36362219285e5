"""Nothing stale on the page, in a real browser: the Treebank's node panel follows the sentence shown, a Copy link
says on a phone's screen that it copied (or that the link is there to copy by hand), and a probe link goes when
another run replaces what it named. The app runs on the tiny checkpoints with the tiny SST trees (DATA_DIR)."""

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tools.bench.browser import TREE

PHONE = {"width": 390, "height": 844}
# the menu shows another sentence than `first` ("#12 · 5 · it is ..."), and the tree's summary names the same one
MENU_AND_TREE_ON_ANOTHER = """first => {
  const shown = document.querySelector('#tb-sentence input').value;
  const summary = document.querySelector('#tb-tree-summary');
  return shown !== first && summary !== null && summary.textContent.includes('test ' + shown.split(' ')[0]);
}"""


@pytest.fixture(scope="module")
def app_env(tiny_data):
    return {"DATA_DIR": str(tiny_data)}


def _sentence_words(page) -> list[str]:
    return page.locator("#tb-sentence input").input_value().split(" · ", 2)[2].split()  # "#12 · 5 · it is ..."


def _expect_node_panel_of_sentence(page):
    """The chosen node's panel is node 0 of the sentence shown: its words, one row each."""
    expect(page.locator("#tb-node input")).to_have_value(re.compile(r"^0: "))
    expect(page.locator("#tb-node-attr-summary")).to_contain_text("Node 0")
    cells = page.locator("#tb-node-attr tbody th[scope='row']")
    expect(cells).to_have_text(_sentence_words(page))


def test_the_node_panel_follows_a_random_sentence(open_page, url):
    page = open_page(url)
    page.get_by_role("tab", name="Treebank").click()
    expect(page.locator(TREE)).to_have_count(1)
    _expect_node_panel_of_sentence(page)
    first = page.locator("#tb-sentence input").input_value()
    for _ in range(5):  # a random pick among 40 test sentences: another one within a few tries
        page.locator("#tb-random").click()
        try:  # the pick's one event sets the menu and the tree: both name the new sentence
            page.wait_for_function(MENU_AND_TREE_ON_ANOTHER, arg=first, timeout=10_000)
            break
        except PlaywrightTimeoutError:  # the same sentence again
            continue
    assert page.locator("#tb-sentence input").input_value() != first
    index = page.locator("#tb-sentence input").input_value().split(" ")[0]
    expect(page.locator("#tb-tree-summary")).to_contain_text(f"test {index}")
    _expect_node_panel_of_sentence(page)


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_copy_link_on_a_phone_shows_the_link_and_says_so(browser, url, locale):
    page = browser.new_context(locale=locale, viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    page.goto(url)
    page.locator("#sentence textarea").fill("not bad at all")
    page.locator("#copy-link").click()
    link = page.locator("#permalink")
    expect(link).to_contain_text("http")
    expect(link).to_be_in_viewport()
    note = link.evaluate("e => getComputedStyle(e, '::before').content")
    said = {"en-US": ("Copied to the clipboard", "Copy this link by hand"), "zh-CN": ("已复制到剪贴板", "请手动复制")}
    assert any(words in note for words in said[locale]), note


def test_a_probe_link_goes_when_my_cases_replace_the_suite(open_page, url):
    page = open_page(url)
    page.get_by_role("tab", name="Probes").click()
    page.locator("#probe-run").click()
    expect(page.locator("#probe-summary")).to_contain_text("cases")
    page.locator("#probe-copy-link").click()
    expect(page.locator("#probe-permalink")).to_contain_text("suite=")
    page.get_by_text("Run my cases").first.click()  # the accordion
    page.locator("#probe-user-text textarea").fill("a wonderful film,positive\na dreadful film,negative")
    page.locator("#probe-run-user").click()
    expect(page.locator("#probe-summary")).to_contain_text("2")
    expect(page.locator("#probe-permalink")).not_to_contain_text("http")
    assert page.locator("#probe-permalink").evaluate("e => getComputedStyle(e, '::before').content") == "none"
