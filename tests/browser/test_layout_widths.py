"""The page at a phone's, a tablet's and a laptop's width, in English and Chinese (Debian chromium, tiny
checkpoints, the tiny SST trees as data): after an analysis of all five models, and in the Checkpoints,
Probes and Treebank tabs, the page never scrolls sideways, no figure is wider than the screen, every table
keeps its first (key) column in view when scrolled to its far end, and no header breaks inside a word; on
the phone the first result figure is within two screens of the top."""

import pytest
from playwright.sync_api import expect

from core.models import PAPER_MODELS
from demo.i18n import t

SIZES = [(390, 844), (768, 1024), (1400, 900)]
LANGUAGES = [
    ("en-US", "en", "It is not a bad film, but the plot is dull."),
    ("zh-CN", "zh", "这部电影不怎么好看，但是演员很棒"),
]
# Everything measured in one call: the sideways scroll; figures past the screen's edge; per table, its first
# column after its scroll box went to the far right (sticky: still inside the box), then back; per header
# cell, any word (a run of letters or digits: a Chinese one too) whose characters fall on more than one line
MEASURE = """() => {
  const W = innerWidth, report = {scroll: document.scrollingElement.scrollWidth, width: W, wide: [], keys: [],
    broken: [], first: null, tables: 0};
  for (const f of document.querySelectorAll('figure.view')) {
    const box = f.getBoundingClientRect(), svg = f.querySelector(':scope > svg').getBoundingClientRect();
    if (box.width && (Math.min(box.left, svg.left) < -1 || Math.max(box.right, svg.right) > W + 1))
      report.wide.push(`${f.dataset.name}: ${Math.round(svg.left)}..${Math.round(svg.right)}`);
  }
  const figure = [...document.querySelectorAll('#result figure.view')].find(f => f.getBoundingClientRect().width);
  if (figure) report.first = figure.getBoundingClientRect().top + scrollY;
  for (const table of document.querySelectorAll('table')) {
    const key = table.querySelector('tr > :first-child');
    if (!key || !table.getBoundingClientRect().width) continue;
    report.tables += 1;
    let box = table;
    while (box && !(box.scrollWidth > box.clientWidth + 1 && /auto|scroll/.test(getComputedStyle(box).overflowX)))
      box = box.parentElement;
    const clip = box ? box.getBoundingClientRect() : {left: 0, right: W};
    if (box) box.scrollLeft = box.scrollWidth;
    const k = key.getBoundingClientRect();
    if (k.width < 16 || k.left < Math.max(0, clip.left) - 1 || k.right > Math.min(W, clip.right) + 1)
      report.keys.push(`${table.closest('[id]')?.id}: "${key.innerText.trim()}" at ${Math.round(k.left)}`);
    if (box) box.scrollLeft = 0;
    for (const th of table.querySelectorAll('th')) {
      const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode())
        for (const word of node.textContent.matchAll(/[\\p{L}\\p{N}]+/gu)) {
          const range = document.createRange();
          range.setStart(node, word.index);
          range.setEnd(node, word.index + word[0].length);
          const tops = new Set([...range.getClientRects()].filter(r => r.width).map(r => Math.round(r.top)));
          if (tops.size > 1) report.broken.push(`${table.closest('[id]')?.id}: ${word[0]}`);
        }
    }
  }
  return report;
}"""


def open_tab(page, name: str) -> None:
    """A tab by its name; on a narrow screen Gradio moves the last tabs into its "more tabs" menu."""
    tab = page.get_by_role("tab", name=name, exact=True)
    if not tab.count():
        menu = page.locator(".overflow-menu")
        menu.get_by_role("button", name="More tabs").click()
        tab = menu.get_by_role("button", name=name, exact=True)
    tab.click()


def fits(page, where: str, width: int) -> dict:
    report = page.evaluate(MEASURE)
    assert report["scroll"] <= width + 1, f"{where}: the page scrolls sideways ({report['scroll']} px)"
    assert not report["wide"], f"{where}: figures wider than the screen: {report['wide']}"
    assert not report["keys"], f"{where}: key columns out of view: {report['keys']}"
    assert not report["broken"], f"{where}: headers broken inside a word: {report['broken']}"
    return report


@pytest.fixture(scope="module")
def app_env(tiny_data):
    """The tiny SST trees as the app's data (DATA_DIR): the Treebank tab reads them."""
    return {"DATA_DIR": str(tiny_data)}


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize(("locale", "ui", "text"), LANGUAGES, ids=[lang for _, lang, _ in LANGUAGES])
def test_the_page_fits_the_screen(browser, url, width, height, locale, ui, text):
    context = browser.new_context(locale=locale, viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(url)
        page.locator("#sentence textarea").fill(text)
        page.locator("#run").click()
        expect(page.locator(".model-panel")).to_have_count(len(PAPER_MODELS))
        report = fits(page, "Lab", width)
        assert report["tables"] >= 1  # the comparison table was measured
        if width < 500:  # a phone: the result starts within two screens, not under the controls' scroll
            assert report["first"] is not None and report["first"] <= 2 * height, report["first"]
            # a figure is drawn for the width it gets: shown at its drawn size, within the screen, without a tap
            figure = page.locator("#result figure.view").first
            drawn = figure.locator("svg").evaluate("s => s.viewBox.baseVal.width")
            assert abs(figure.locator("svg").bounding_box()["width"] - drawn) <= 1 and drawn <= width

        # the Task menu: no choice clipped in its list, nor the longest in its box
        task = page.locator("#task input")
        task.click()
        options = page.get_by_role("option")
        expect(options.first).to_be_visible()
        assert not options.evaluate_all("os => os.filter(o => o.scrollWidth > o.clientWidth + 1).map(o => o.innerText)")
        longest = max(options.all_inner_texts(), key=len).strip()
        page.get_by_role("option", name=longest, exact=True).click()
        expect(task).to_have_value(longest)
        assert task.evaluate("box => box.scrollWidth <= box.clientWidth + 1"), f"the Task box clips {longest!r}"

        open_tab(page, t("tab_models", ui))
        expect(page.locator("#checkpoints [data-testid='cell-0-0']")).to_be_visible()
        fits(page, "Checkpoints", width)

        open_tab(page, t("tab_probes", ui))
        page.locator("#probe-run").click()
        expect(page.locator("#probe-table th").first).to_have_attribute("title", t("col_capability", ui))
        fits(page, "Probes", width)

        open_tab(page, t("tab_treebank", ui))
        page.locator("#tb-random").click()
        expect(page.locator("#tb-tree figure.view > svg")).to_be_visible()
        expect(page.locator("#tb-nodes tr[data-row='0']")).to_be_visible()
        fits(page, "Treebank", width)
    finally:
        context.close()
