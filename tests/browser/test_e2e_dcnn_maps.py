"""The DCNN panel's top-layer map choice in a real browser: the panel opens on the map that adds most to the
predicted class and says so; picking another map redraws that one graph (the rest of the page stays as it is)
and the note says which map it is and what it adds, in English and in Chinese."""

import re

from playwright.sync_api import expect

TEXT = "It is not a bad film, but the plot is dull and the ending drags on."


def _dcnn_panel(open_page, url, locale, model_label):
    """A page in `locale` with the DCNN alone analysed on TEXT; its map choice."""
    page = open_page(url, locale)
    page.locator("#model input").click()
    page.get_by_role("option", name=model_label).click()
    page.locator("#sentence textarea").fill(TEXT)
    page.locator("#run").click()
    box = page.locator(".model-panel .top-map")
    expect(box).to_have_count(1)
    return page, box


def test_picking_another_map_redraws_its_graph_and_says_which_and_why(open_page, url):
    page, box = _dcnn_panel(open_page, url, "en-US", "DCNN (Kalchbrenner et al. 2014)")
    choice = box.locator("select")
    options = choice.locator("option")
    best = options.first.get_attribute("value")
    expect(choice).to_have_value(best)
    expect(options.first).to_contain_text("(adds most)")
    expect(box.locator(".view-note")).to_contain_text(f"Top-layer map {best} is shown because")
    expect(box.locator("svg > text").first).to_have_text(f"Induced feature graph (§4.2), top-layer map {best}")
    before = box.locator("figure.view svg").inner_html()
    page.evaluate("document.querySelector('.model-panel figure.view').dataset.untouched = 'yes'")  # the all-maps graph

    other = options.nth(options.count() - 1).get_attribute("value")  # the map that adds least
    added = re.search(r"map \d+: ([+-]\d\.\d{3})", options.nth(options.count() - 1).inner_text())[1]
    choice.select_option(other)
    expect(box.locator("svg > text").first).to_have_text(f"Induced feature graph (§4.2), top-layer map {other}")
    note = box.locator(".view-note")
    expect(note).to_contain_text(
        f"Top-layer map {other}, as picked: it adds {added} to the logit of the predicted class"
    )
    expect(note).to_contain_text(f"map {best} adds most")
    assert box.locator("figure.view svg").inner_html() != before
    assert box.locator("figure.view").get_attribute("data-name").endswith("-kmaxgraph")  # exported as before
    expect(choice).to_have_value(other)
    # only the one graph was redrawn: the panel's other figures are the same elements as before
    expect(page.locator(".model-panel figure.view").first).to_have_attribute("data-untouched", "yes")

    choice.select_option(best)  # and back
    expect(note).to_contain_text(f"Top-layer map {best} is shown because")


def test_the_map_choice_speaks_chinese(open_page, url):
    page, box = _dcnn_panel(open_page, url, "zh-CN", "DCNN (Kalchbrenner et al. 2014)")
    options = box.locator("select option")
    expect(options.first).to_contain_text("（贡献最大）")
    expect(box.locator(".top-map-choice")).to_contain_text("显示的顶层特征映射")
    other = options.nth(1).get_attribute("value")
    box.locator("select").select_option(other)
    expect(box.locator(".view-note")).to_contain_text(f"顶层特征映射 {other}（所选）")
    expect(box.locator("svg > text").first).to_have_text(f"诱导特征图（§4.2），顶层特征映射 {other}")
