"""The DCNN panel's top-layer map choice in a real browser (Debian chromium via Playwright, as
tests/test_e2e.py): the panel opens on the map that adds most to the predicted class and says so; picking
another map redraws that one graph (the rest of the page stays as it is) and the note says which map it is
and what it adds, in English and in Chinese."""

import re
from pathlib import Path

import pytest
from lab_fixture import build_checkpoints, serve_app
from playwright.sync_api import expect, sync_playwright

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
TIMEOUT = 30_000  # ms, per expectation (a shared 2-core machine can be slow)
TEXT = "It is not a bad film, but the plot is dull and the ending drags on."


@pytest.fixture(scope="module")
def url(tiny_data, tmp_path_factory):
    assert Path(CHROMIUM).exists(), "Debian chromium is not installed (apt-get install chromium fonts-wqy-microhei)"
    root = build_checkpoints(tmp_path_factory.getbasetemp() / "lab" / "checkpoints", tiny_data)
    yield from serve_app(tmp_path_factory.mktemp("app") / "app.log", {"LAB_CHECKPOINTS": str(root)})


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


def _dcnn_panel(browser, url, locale, model_label):
    """A page in `locale` with the DCNN alone analysed on TEXT; its map choice."""
    page = browser.new_context(locale=locale, viewport={"width": 1280, "height": 1000}).new_page()
    page.goto(url)
    page.locator("#model input").click()
    page.get_by_role("option", name=model_label).click()
    page.locator("#sentence textarea").fill(TEXT)
    page.locator("#run").click()
    box = page.locator(".model-panel .top-map")
    expect(box).to_have_count(1, timeout=TIMEOUT)
    return page, box


def test_picking_another_map_redraws_its_graph_and_says_which_and_why(browser, url):
    page, box = _dcnn_panel(browser, url, "en-US", "DCNN (Kalchbrenner et al. 2014)")
    choice = box.locator("select")
    options = choice.locator("option")
    best = options.first.get_attribute("value")
    expect(choice).to_have_value(best)
    expect(options.first).to_contain_text("(adds most)")
    expect(box.locator(".view-note")).to_contain_text(f"Top-layer map {best} is shown because", timeout=TIMEOUT)
    expect(box.locator("svg > text").first).to_have_text(f"Induced feature graph (§4.2), top-layer map {best}")
    before = box.locator("figure.view svg").inner_html()
    page.evaluate("document.querySelector('.model-panel figure.view').dataset.untouched = 'yes'")  # the all-maps graph

    other = options.nth(options.count() - 1).get_attribute("value")  # the map that adds least
    added = re.search(r"map \d+: ([+-]\d\.\d{3})", options.nth(options.count() - 1).inner_text())[1]
    choice.select_option(other)
    expect(box.locator("svg > text").first).to_have_text(f"Induced feature graph (§4.2), top-layer map {other}",
                                                         timeout=TIMEOUT)
    note = box.locator(".view-note")
    expect(note).to_contain_text(f"Top-layer map {other}, as picked: it adds {added} to the logit of the predicted class")
    expect(note).to_contain_text(f"map {best} adds most")
    assert box.locator("figure.view svg").inner_html() != before
    assert box.locator("figure.view").get_attribute("data-name").endswith("-kmaxgraph")  # exported as before
    expect(choice).to_have_value(other)
    # only the one graph was redrawn: the panel's other figures are the same elements as before
    expect(page.locator(".model-panel figure.view").first).to_have_attribute("data-untouched", "yes")

    choice.select_option(best)  # and back
    expect(note).to_contain_text(f"Top-layer map {best} is shown because", timeout=TIMEOUT)


def test_the_map_choice_speaks_chinese(browser, url):
    page, box = _dcnn_panel(browser, url, "zh-CN", "DCNN (Kalchbrenner et al. 2014)")
    options = box.locator("select option")
    expect(options.first).to_contain_text("（贡献最大）", timeout=TIMEOUT)
    expect(box.locator(".top-map-choice")).to_contain_text("显示的顶层特征映射")
    other = options.nth(1).get_attribute("value")
    box.locator("select").select_option(other)
    expect(box.locator(".view-note")).to_contain_text(f"顶层特征映射 {other}（所选）", timeout=TIMEOUT)
    expect(box.locator("svg > text").first).to_have_text(f"诱导特征图（§4.2），顶层特征映射 {other}")
