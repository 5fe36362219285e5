"""The page issue's leftovers at a phone's and a laptop's width, in English and Traditional Chinese (Debian
chromium, tiny checkpoints, the tiny SST trees): every tab in sight on a phone (English hid Train behind "..."),
no menu's text under its arrow ("SST fine-graine▾d"), the probe tables headed in the page's language before a
run (not Gradio's "1 2 3"), no Gradio progress text ("processing | 0.0/0.1s") over the page load's outputs (the
Lab's Task menu, the Train tab's status line), and on a phone the minimal pair's B − A beside its model, in the
page's font (not three monospace columns)."""

import pytest
from playwright.sync_api import expect
from test_layout_widths import open_tab

from demo.i18n import t

SIZES = [(390, 844), (1400, 900)]
LOCALES = [("en-US", "en"), ("zh-TW", "zh-TW")]
# every Gradio progress text shown while the page loads (the page's load event fills the Train tab's status line)
WATCH_PROGRESS = """window.__progress = [];
new MutationObserver(() => document.querySelectorAll('.progress-text').forEach(e => {
  const shown = e.checkVisibility({opacityProperty: true, visibilityProperty: true}) && e.innerText.trim();
  if (shown) window.__progress.push(e.innerText);
})).observe(document, {subtree: true, childList: true, characterData: true});"""
# each shown menu whose text box runs under its arrow: the box's right edge less its padding past the arrow's left
UNDER_ARROW = """() => [...document.querySelectorAll('.secondary-wrap input[role=combobox]')].filter(i => i.offsetWidth)
  .map(i => [i, i.parentElement.querySelector('.icon-wrap')]).filter(([i, icon]) => icon && icon.offsetWidth)
  .filter(([i, icon]) => i.getBoundingClientRect().right - parseFloat(getComputedStyle(i).paddingRight)
    > icon.getBoundingClientRect().left + 1)
  .map(([i]) => `${i.closest('[id]')?.id}: ${i.value}`)"""


@pytest.fixture(scope="module")
def app_env(tiny_data):
    """The tiny SST trees as the app's data (DATA_DIR): the Treebank tab's menus are filled."""
    return {"DATA_DIR": str(tiny_data)}


def test_tabs_menus_empty_tables_and_the_pair_at_a_phone_and_a_laptop(browser, url):
    for width, height in SIZES:
        for locale, ui in LOCALES:
            label = f"{width} px {locale}"
            context = browser.new_context(locale=locale, viewport={"width": width, "height": height})
            context.add_init_script(WATCH_PROGRESS)
            try:
                page = context.new_page()
                page.goto(url)
                page.locator("#run").wait_for()
                for tab in ("tab_lab", "tab_probes", "tab_treebank", "tab_train", "tab_models", "tab_api"):
                    expect(page.get_by_role("tab", name=t(tab, ui), exact=True)).to_be_visible()
                expect(page.locator("#task input")).to_have_value(t("choice_auto", ui))  # the load event filled it
                page.wait_for_timeout(500)
                assert not page.evaluate("() => window.__progress"), (label, page.evaluate("() => window.__progress"))

                page.locator("#task input").click()  # the longest task in the Lab's Task menu
                options = page.get_by_role("option")
                expect(options.first).to_be_visible()
                longest = max(options.all_inner_texts(), key=len).strip()
                page.get_by_role("option", name=longest, exact=True).click()
                assert not page.evaluate(UNDER_ARROW), (label, page.evaluate(UNDER_ARROW))

                if width < 640:  # the minimal pair: B − A in view beside the model, in the page's font
                    page.locator("#pair").get_by_text(t("pair", ui)).first.click()
                    page.locator("#sentence textarea").fill("It is not a bad film.")
                    page.locator("#sentence-b textarea").fill("It is a bad film.")
                    page.locator("#run-pair").click()
                    difference = page.locator("#pair-table [data-testid='cell-0-1']")
                    expect(difference).to_be_visible(timeout=60_000)
                    assert difference.bounding_box()["x"] + difference.bounding_box()["width"] <= width, label
                    header = page.locator("#pair-table th").nth(1)
                    expect(header).to_have_attribute("title", t("col_difference", ui))
                    font = difference.evaluate("e => getComputedStyle(e.querySelector('span') || e).fontFamily")
                    assert "mono" not in font.lower(), (label, font)

                open_tab(page, t("tab_probes", ui))  # before a run: headed in the page's language
                for table in ("#probe-table", "#probe-failures"):
                    heads = page.locator(f"{table} th").evaluate_all("hs => hs.map(h => h.getAttribute('title'))")
                    assert heads and not {"1", "2", "3"} & set(heads), (label, table, heads)
                first = [t("col_capability", ui), t("col_test", ui)]
                assert [
                    page.locator(f"{table} th").first.get_attribute("title")
                    for table in ("#probe-table", "#probe-failures")
                ] == first

                open_tab(page, t("tab_treebank", ui))
                expect(page.locator("#tb-tree figure.view > svg")).to_be_visible(timeout=60_000)
                assert not page.evaluate(UNDER_ARROW), (label, page.evaluate(UNDER_ARROW))
            finally:
                context.close()
