"""The Probes tab's tables on a 390 px phone (issue 59): the pass rates and a cell's failures fit the screen's
width, no sideways scroll, and stay tables (a header cell per column, a row per capability) that a screen reader
reads as such (demo/ui.py CSS)."""

from playwright.sync_api import expect

from tools.bench.a11y import new_page, open_tab, quiet

# for a Probes table: how far it is wider than its box (its scrolling viewport, the table, each header cell), and
# what a screen reader is given (the table's display, its header cells)
MEASURE = """sel => {
  const root = document.querySelector(sel), box = root.querySelector('.table-wrap');
  const over = Math.max(0, ...[...root.querySelectorAll('.table-wrap, .virtual-table-viewport, table')]
    .map(e => e.scrollWidth - e.clientWidth));
  const right = Math.max(...[...root.querySelectorAll('th, td')].map(c => c.getBoundingClientRect().right));
  const table = root.querySelector('table');
  return {over, outside: right - box.getBoundingClientRect().right, display: getComputedStyle(table).display,
          headers: root.querySelectorAll('thead th[role=columnheader]').length};
}"""


def test_the_probes_tables_fit_a_phone_and_stay_tables(browser, url):
    page = new_page(browser, url, "en-US", 390, 844)
    open_tab(page, "probes", "en")
    page.locator("#probe-run").click()
    expect(page.locator("#probe-summary")).to_contain_text("cases", timeout=120_000)
    quiet(page)
    rates = page.locator("#probe-table [data-testid='cell-0-1']")  # the first capability's first model
    rates.click()  # its failures in the second table
    quiet(page)
    for table, columns in (("#probe-table", 6), ("#probe-failures", 8)):
        found = page.evaluate(MEASURE, table)
        assert found["over"] <= 1 and found["outside"] <= 1, (table, found)  # no sideways scroll, nothing cut off
        assert found["display"] == "table" and found["headers"] >= columns, (table, found)
    page.context.close()
