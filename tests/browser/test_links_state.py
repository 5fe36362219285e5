"""Links that carry the page's state (demo/links.py) in a real browser: a link opens exactly what it names (the
tab, the Lab's method, DCNN map and sentence B, a treebank sentence and node, a probe cell), and a link copied
after changing that state reopens it. The app runs on the tiny checkpoints with the tiny SST trees (DATA_DIR)."""

import re
import urllib.parse

import pytest
from playwright.sync_api import expect

from core.views import KMaxGraph
from demo.i18n import model_name
from demo.ui import OWNER_STORAGE

TEXT = "It is not a bad film, but the plot is dull and the ending drags on."
B = "It is a bad film."


@pytest.fixture(scope="module")
def app_env(tiny_data):
    return {"DATA_DIR": str(tiny_data)}


@pytest.fixture(scope="module")
def least_map(lab) -> str:
    """The DCNN's top-layer map that adds least on TEXT: never the one a panel opens on by default."""
    view = next(
        v for v in lab.predict(TEXT, "dcnn", task="sst5").views if isinstance(v, KMaxGraph) and v.top_map is not None
    )
    return str(min(range(len(view.contributions)), key=view.contributions.__getitem__))


def _link(url: str, **params) -> str:
    return f"{url}?{urllib.parse.urlencode(params)}"


def _copied(page, button: str, permalink: str) -> tuple[str, dict[str, str]]:
    """Click a Copy link: the link shown (and on the clipboard), and its parameters."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.locator(button).click()
    expect(page.locator(permalink)).to_contain_text("http")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied in page.locator(permalink).inner_text()
    return copied, dict(urllib.parse.parse_qsl(urllib.parse.urlparse(copied).query))


def _expect_lab(page, method_label: str, top_map: str, b: str):
    """The DCNN analysed TEXT by `method_label` with its graph on `top_map`, and the pair with sentence B."""
    expect(page.locator("#sentence textarea")).to_have_value(TEXT)
    expect(page.locator("#model input")).to_have_value(model_name("dcnn"))
    expect(page.locator("#attr-method input:checked")).to_have_count(1)
    expect(page.locator("#attr-method label", has=page.locator("input:checked"))).to_contain_text(method_label)
    panel = page.locator("#result .model-panel")
    expect(panel).to_have_count(1)
    expect(panel.locator(".occlusion-head")).to_contain_text(method_label)
    expect(panel.locator(".top-map select")).to_have_value(top_map)
    expect(panel.locator(".top-map svg > text").first).to_contain_text(f"top-layer map {top_map}")
    expect(page.locator("#sentence-b textarea")).to_have_value(b)
    expect(page.locator("#pair-summary")).to_contain_text("A → B")


def test_a_link_opens_the_method_map_and_pair_it_names(open_page, url, least_map):
    page = open_page(_link(url, text=TEXT, b=B, model="dcnn", method="integrated_gradients", map=least_map))
    _expect_lab(page, "integrated gradients", least_map, B)


def test_a_link_opens_a_treebank_node(open_page, url):
    page = open_page(_link(url, tab="treebank", split="dev", sentence="5", node="2"))
    expect(page.get_by_role("tab", name="Treebank")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#tb-split input[value='dev']")).to_be_checked()
    expect(page.locator("#tb-sentence input")).to_have_value(re.compile(r"^#5 · "))
    expect(page.locator("#tb-tree-summary")).to_contain_text("dev #5")
    expect(page.locator("#tb-node input")).to_have_value(re.compile(r"^2: \S"))
    expect(page.locator("#tb-node-attr-summary")).to_contain_text("Node 2")


def test_a_link_opens_a_probe_cell(open_page, url):
    page = open_page(_link(url, tab="probes", suite="en", capability="negation", model="dcnn"))
    expect(page.get_by_role("tab", name="Probes")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#probe-summary")).to_contain_text("cases")
    expect(page.locator("#probe-cell")).to_contain_text(re.compile(rf"· {re.escape(model_name('dcnn'))}: \d+ of \d+"))
    expect(page.locator("#probe-model input")).to_have_value(model_name("dcnn"))


def test_a_hostile_link_opens_the_defaults_without_an_error(open_page, url):
    page = open_page(_link(url, text=TEXT, tab="admin", model="gpt", method="<b>x</b>", map="-1", node="9" * 30))
    expect(page.locator("#result .model-panel")).to_have_count(5)  # all five, by leave-one-word-out
    expect(page.locator("#attr-method input[value='occlusion']")).to_be_checked()
    expect(page.get_by_role("tab", name="Lab")).to_have_attribute("aria-selected", "true")
    expect(page.locator(".toast-body")).to_have_count(0)


def test_a_link_copied_after_changing_the_lab_reopens_it(open_page, url, least_map):
    page = open_page(url)
    page.locator("#model input").click()
    page.get_by_role("option", name=model_name("dcnn")).click()
    page.locator("#sentence textarea").fill(TEXT)
    page.locator("#run").click()
    expect(page.locator("#result .top-map select")).to_have_count(1)
    page.locator("#attr-method label", has_text="integrated gradients").click()  # runs again
    expect(page.locator("#result .occlusion-head")).to_contain_text("integrated gradients")
    page.locator("#result .top-map select").select_option(least_map)
    expect(page.locator("#result .top-map svg > text").first).to_contain_text(f"top-layer map {least_map}")
    page.locator("#pair").click()
    page.locator("#sentence-b textarea").fill(B)
    copied, query = _copied(page, "#copy-link", "#permalink")
    assert query == {"text": TEXT, "b": B, "model": "dcnn", "method": "integrated_gradients", "map": least_map}
    _expect_lab(open_page(copied), "integrated gradients", least_map, B)


def test_a_link_copied_from_a_treebank_node_reopens_it(open_page, url):
    page = open_page(_link(url, tab="treebank", task="sst5", split="dev", sentence="5"))
    expect(page.locator("#tb-tree-summary")).to_contain_text("dev #5")
    page.locator("#tb-nodes tr[data-row='1'] td").last.click()  # the row of node 1
    expect(page.locator("#tb-node input")).to_have_value(re.compile(r"^1: \S"))
    copied, query = _copied(page, "#tb-copy-link", "#tb-permalink")
    assert query == {"tab": "treebank", "task": "sst5", "split": "dev", "sentence": "5", "node": "1"}
    again = open_page(copied)
    expect(again.locator("#tb-tree-summary")).to_contain_text("dev #5")
    expect(again.locator("#tb-node input")).to_have_value(re.compile(r"^1: \S"))


def test_a_link_copied_from_another_probe_cell_reopens_it(open_page, url):
    page = open_page(_link(url, tab="probes", suite="en", capability="negation", model="dcnn"))
    expect(page.locator("#probe-model input")).to_have_value(model_name("dcnn"))
    page.locator("#probe-model input").click()
    page.get_by_role("option", name=model_name("mrnn")).click()
    expect(page.locator("#probe-cell")).to_contain_text(model_name("mrnn"))
    copied, query = _copied(page, "#probe-copy-link", "#probe-permalink")
    assert query == {"tab": "probes", "model": "mrnn", "suite": "en", "capability": "negation"}
    again = open_page(copied)
    expect(again.locator("#probe-cell")).to_contain_text(re.compile(rf"· {re.escape(model_name('mrnn'))}: \d+ of"))


def test_a_links_page_never_hides_its_own_result(browser, url):
    """A link's load fills the sentence box and analyses it: its result is never marked stale on the way (hidden
    behind "press Analyse" until the load's script), whether analysed in the load or, for a slow method, in an
    event of its own; what is typed after it still is."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.add_init_script(
        """window.__stale = 0;
new MutationObserver(() => { if (document.body?.classList.contains('lab-stale')) window.__stale++; })
  .observe(document, {subtree: true, attributes: true, attributeFilter: ['class']});"""
    )
    page = context.new_page()
    for params in ({"text": TEXT, "model": "dcnn"}, {"text": TEXT, "model": "dcnn", "method": "integrated_gradients"}):
        page.goto(_link(url, **params))
        expect(page.locator("#result .model-panel")).to_have_count(1)
        page.wait_for_function(f"localStorage.getItem('{OWNER_STORAGE}')")  # the load's script ran
        page.wait_for_timeout(300)  # and the frame it waits for
        assert page.evaluate("window.__stale") == 0, params
    page.locator("#sentence textarea").fill(B)
    expect(page.locator("body")).to_have_class(re.compile("lab-stale"))


def test_on_a_phone_a_links_page_opens_on_its_summary(browser, url):
    """390 px wide the Lab's result starts screens below its controls: a link's page, analysed in its load, moves
    to the summary (a link to a slow method's analysis, after its own event, too); a page without one stays at its
    top."""
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(url)
    page.wait_for_function(f"localStorage.getItem('{OWNER_STORAGE}')")  # the load is in: its scripts' first
    page.wait_for_timeout(300)  # past the load's last script and the frame it waits for
    assert page.evaluate("scrollY") == 0
    for params in ({"text": TEXT, "model": "dcnn"}, {"text": TEXT, "model": "dcnn", "method": "integrated_gradients"}):
        page.goto(_link(url, **params))
        expect(page.locator("#result .model-panel")).to_have_count(1)
        expect(page.locator("#summary")).to_be_in_viewport()
        assert page.evaluate("scrollY") > 0, params
