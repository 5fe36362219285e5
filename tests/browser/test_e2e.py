"""The lab in a real browser (the setup, Debian chromium and `python app.py`: tests/browser/conftest.py).
Saves its screenshots into $SCREENSHOT_DIR (default: a temporary folder).
"""

import hashlib
import os
import re
import tempfile
import urllib.parse
from pathlib import Path

import pytest
from lab_fixture import serve_app
from playwright.sync_api import expect

from core.analysis.probes import run_suite
from core.models import PAPER_MODELS
from core.predict import Lab
from demo.i18n import model_name

EN, ZH = "It is not a bad film, but the plot is dull.", "这部电影不怎么好看，但是演员很棒"
# names, symbols and file formats that stay as they are in the Chinese UI
NAMES = {
    "Tensor",
    "CNN",
    "Lei",
    "mRNN",
    "Irsoy",
    "Cardie",
    "DCNN",
    "Kalchbrenner",
    "AdaSent",
    "Zhao",
    "AGT",
    "Guo",
    "SVG",
    "PNG",
    "sha",
    "logit",
    "max",
    "min",
    "sigmoid",
    "Hub",
}


@pytest.fixture(scope="module")
def bundled_url(tmp_path_factory):
    """The app on the bundled checkpoints (the real models: a 15-layer AGT; the README's screenshots)."""
    yield from serve_app(tmp_path_factory.mktemp("bundled") / "app.log", {})


def _analyse(page, text):
    page.locator("#sentence textarea").fill(text)
    page.locator("#run").click()


def _screenshot(page, name):
    """The page from the top to the end of the first model panel, into $SCREENSHOT_DIR (default: a
    temporary folder; the README's reports/screenshot*.png are taken with the bundled checkpoints). A panel off
    screen is laid out only when scrolled to (content-visibility), which a full-page capture never does: the
    capture lays them all out first, as a reader scrolling down sees them."""
    page.add_style_tag(content="#result .model-panel { content-visibility: visible !important; }")
    page.wait_for_timeout(300)
    box = page.locator(".model-panel").first.bounding_box()
    folder = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="lab-screens-"))
    page.screenshot(
        path=str(folder / name),
        full_page=True,
        clip={"x": 0, "y": 0, "width": 1280, "height": box["y"] + box["height"] + 10},
    )


def _expect_panels(page, count, text=None):
    """`count` model panels, each with its highlight, legend and at least one figure (of `text`, when given)."""
    panels = page.locator(".model-panel")
    expect(panels).to_have_count(count)
    for i in range(count):
        panel = panels.nth(i)
        if text is not None:
            expect(panel).to_have_attribute("data-text", text)
        expect(panel.locator(".occlusion-text")).to_be_visible()
        expect(panel.locator(".occlusion-legend")).to_be_visible()
        expect(panel.locator("figure.view svg").first).to_be_visible()


def _choose_model(page, name):
    page.locator("#model input").click()
    page.get_by_role("option", name=name).click()


def test_english_all_five(open_page, url):
    page = open_page(url, "en-US")
    expect(page.locator("#result figure")).to_have_count(0)  # the start page: no empty frames
    _analyse(page, EN)
    expect(page.locator("#summary")).to_contain_text("Majority label")
    expect(page.locator("#comparison")).to_contain_text("Tensor CNN")
    expect(page.locator("#comparison")).to_contain_text("test accuracy")
    expect(page.locator("figure[data-name='probabilities'] svg")).to_be_visible()
    expect(page.locator("figure[data-name='curve']")).to_contain_text("native")
    expect(page.locator("#notices")).to_contain_text("unknown")
    _expect_panels(page, len(PAPER_MODELS), EN)
    expect(page.locator(".model-panel").first).to_contain_text("unknown word")  # the occlusion legend
    expect(page.locator(".model-panel summary").first).to_contain_text("test accuracy")
    assert not page.external, f"the page reached outside: {page.external[:3]}"


def test_single_model_and_html_shown_as_text(open_page, url):
    page = open_page(url, "en-US")
    _choose_model(page, "DCNN (Kalchbrenner et al. 2014)")
    typed = (
        '<img src=x onerror="window.__xss=1"> <b>bold</b> <script>window.__xss=2</script> good" onclick="window.__xss=3'
    )
    _analyse(page, typed)
    expect(page.locator("#summary")).to_contain_text("Prediction")
    _expect_panels(page, 1, typed)  # the text, quotes and all, stays inside its attribute
    panel = page.locator(".model-panel")
    expect(panel).to_contain_text("DCNN")
    expect(panel.locator("figure.view")).to_have_count(3)  # the two k-max feature graphs and the detectors
    expect(panel).to_contain_text("is shown because")  # which top-layer map, and why
    graph = panel.locator("figure.view").first
    edges = "g => [...g.querySelectorAll('path')].reduce((n, p) => n + p.getAttribute('d').split('M').length - 1, 0)"
    strong = graph.locator("svg g.strong-edges").evaluate(edges)  # a move and a line per edge (demo.plots.edge_paths)
    graph.locator(".all-edges").check()  # the checkbox adds the other edges, and takes them away again
    expect(graph.locator("svg g.weak-edges")).to_have_count(1)
    assert strong + graph.locator("svg g.weak-edges").evaluate(edges) == int(
        re.search(r"show all (\d+) edges", graph.inner_text())[1]
    )
    graph.locator(".all-edges").uncheck()
    expect(graph.locator("svg g.weak-edges")).to_have_count(0)
    highlight = panel.locator(".occlusion-text")
    for piece in ("onerror=", "bold</b", "script>window.__xss=2</script"):  # the typed markup, as text
        expect(highlight).to_contain_text(piece)
    expect(page.locator("figure[data-name='curve']")).to_contain_text("prefix")
    panel.locator(":scope > summary").click()  # the panel's own, not a figure's "show as a table"
    assert page.evaluate("window.__xss") is None


def test_empty_input_says_so(open_page, url):
    page = open_page(url, "en-US")
    _analyse(page, "   ")
    expect(page.locator("#summary")).to_contain_text("Please type a sentence")
    expect(page.locator(".model-panel")).to_have_count(0)


# Watches the page from the click on (its listener runs after the page's own): at every DOM change and every
# frame, is a panel or a result of another sentence than `text` visible? Also: was "analysing" shown?
WATCH = """text => {
  window.__stale = []; window.__analysingSeen = false;
  let clicked = false;
  document.addEventListener('click', (event) => { if (event.target.closest('#run')) clicked = true; }, true);
  const check = () => {
    if (!clicked) return;
    if (document.querySelector('#analysing')?.checkVisibility()) window.__analysingSeen = true;
    for (const node of document.querySelectorAll('.model-panel, .lab-result'))
      if (node.checkVisibility() && node.dataset.text !== text) window.__stale.push(node.dataset.text);
  };
  new MutationObserver(check).observe(document,
    {subtree: true, childList: true, attributes: true, characterData: true});
  const frame = () => { check(); requestAnimationFrame(frame); };
  frame();
}"""


def test_no_stale_panel_is_ever_visible_after_a_click(open_page, url):
    page = open_page(url, "en-US")
    _choose_model(page, "mRNN (Irsoy & Cardie 2015)")
    _analyse(page, EN)
    _expect_panels(page, 1, EN)
    _choose_model(page, "All five")
    other = "The plot is dull, but the acting is great."
    page.locator("#sentence textarea").fill(other)
    page.evaluate(WATCH, other)
    page.locator("#run").click()
    _expect_panels(page, len(PAPER_MODELS), other)
    page.wait_for_timeout(500)
    assert page.evaluate("window.__stale") == [], "a panel of the previous sentence was shown after the click"
    assert page.evaluate("window.__analysingSeen"), "nothing said the page was analysing"
    expect(page.locator("#analysing")).to_be_hidden()


def test_chinese_ui_has_no_english_left(open_page, url):
    page = open_page(url, "zh-CN")
    expect(page.locator("#run")).to_have_text("分析")
    expect(page.locator("#copy-link")).to_have_text("复制链接")
    expect(page.get_by_text("否定：The movie is not good.")).to_be_visible()  # example labels
    _analyse(page, ZH)
    expect(page.locator("#summary")).to_contain_text("多数标签")
    expect(page.locator("#summary")).to_contain_text("中文情感")
    expect(page.locator("figure[data-name='curve']")).to_contain_text("很棒")
    _expect_panels(page, len(PAPER_MODELS), ZH)
    expect(page.locator(".model-panel").first).to_contain_text("未登录词")
    # every text node of the result, except the checkpoint paths (<code>): no English word is left
    shown = page.evaluate("""() => [...document.querySelectorAll('#summary, #notices, #result')].map(root => {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        const out = [];
        while (walker.nextNode())
            if (!walker.currentNode.parentElement.closest('code')) out.push(walker.currentNode.textContent);
        return out.join(' ');
    }).join(' ')""")
    english = set(re.findall(r"[A-Za-z]{3,}", re.sub(r"\b[0-9a-f]{7,}\b", "", shown))) - NAMES  # past sha256s, commits
    assert not english, f"untranslated English in the Chinese UI: {sorted(english)}"


def test_a_link_fills_and_runs_the_lab_and_copy_link_writes_it(open_page, url):
    page = open_page(url, "en-US")
    link = f"{url}?{urllib.parse.urlencode({'text': EN, 'model': 'dcnn', 'lang': 'en'})}"
    page.goto(link)
    expect(page.locator("#sentence textarea")).to_have_value(EN)
    expect(page.locator("#model input")).to_have_value("DCNN (Kalchbrenner et al. 2014)")
    _expect_panels(page, 1, EN)
    expect(page.locator(".model-panel")).to_have_attribute("data-model", "dcnn")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.locator("#sentence textarea").fill("A good film.")
    page.locator("#copy-link").click()
    expect(page.locator("#permalink")).to_contain_text("text=A+good+film.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert urllib.parse.parse_qs(urllib.parse.urlparse(copied).query) == {
        "text": ["A good film."],
        "model": ["dcnn"],
        "lang": ["en"],
    }
    again = open_page(copied, "en-US")
    _expect_panels(again, 1, "A good film.")


def test_every_view_exports_as_svg_and_png_with_its_caption(open_page, url, lab_root):
    digest = hashlib.sha256((lab_root / "sst5" / "agt" / "model.safetensors").read_bytes()).hexdigest()
    page = open_page(url, "en-US")
    _choose_model(page, "AGT (Guo 2017)")
    _analyse(page, EN)
    _expect_panels(page, 1, EN)
    figures = page.locator("#result figure.view")
    assert figures.count() == 2 + 3  # probabilities, curve; the AGT's heatmap, table and gate curve
    for i in range(figures.count()):
        figure = figures.nth(i)
        with page.expect_download() as download:
            figure.locator("button[data-export='svg']").click()
        svg = Path(download.value.path()).read_text(encoding="utf-8")
        assert download.value.suggested_filename.endswith(".svg") and svg.startswith("<svg")
        assert f"sha256 {digest[:16]}" in svg and "commit " in svg and "AGT (Guo 2017)" in svg
        with page.expect_download() as download:
            figure.locator("button[data-export='png']").click()
        png = Path(download.value.path()).read_bytes()
        assert (
            download.value.suggested_filename.endswith(".png") and png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
        )


def test_the_agt_table_shows_all_15_layers_and_screenshots(open_page, bundled_url):
    """On the bundled checkpoints: the AGT's 'words selected per layer' lists L1..L15 in full, nothing cut;
    the README's screenshots (SCREENSHOT_DIR=reports) come from here."""
    for locale, text, name in (
        ("en-US", "The acting is great, but the plot is dull and far too long.", "screenshot.png"),
        ("zh-CN", ZH, "screenshot_zh.png"),
    ):
        page = open_page(bundled_url, locale)
        _analyse(page, text)
        _expect_panels(page, len(PAPER_MODELS), text)
        table = page.locator(".model-panel[data-model='agt'] figure.view").nth(1)
        rows = table.locator("svg text").evaluate_all("nodes => nodes.map(n => n.textContent)")
        assert [r for r in rows if re.fullmatch(r"L\d+", r)] == [f"L{i}" for i in range(1, 16)]
        box, svg = table.bounding_box(), table.locator("svg").bounding_box()
        assert svg["height"] <= box["height"] + 1  # the whole table shows: no scroll box cuts a row
        _screenshot(page, name)
        assert not page.external, f"the page reached outside: {page.external[:3]}"


def test_a_probe_failure_opens_in_the_lab_as_a_minimal_pair(open_page, url, lab_root):
    """Probes tab: run the English suite, choose a cell of the table and a failure of a pair test in it, open it:
    the Lab tab shows both sentences, the analysis of the first, and the minimal pair's table and figures."""
    # the app's checkpoints answer the same: a cell whose first failure is a pair
    report = run_suite(Lab.load(lab_root), "en")
    row, column, capability, model = next(
        (r, c, cap, m)
        for r, (cap, cells) in enumerate(report.cells.items())
        for c, m in enumerate(report.models, start=1)
        if len(cells[m].failures) > 1 and cells[m].failures[0].case.variant
    )
    case = report.cells[capability][model].failures[0].case
    page = open_page(url, "en-US")
    page.get_by_role("tab", name="Probes").click()
    page.locator("#probe-run").click()
    expect(page.locator("#probe-summary")).to_contain_text(f"{report.cases} cases")
    page.locator(f"#probe-table [data-testid='cell-{row}-{column}']").click()
    cell = report.cells[capability][model]
    expect(page.locator("#probe-cell")).to_contain_text(f"{model_name(model)}: {cell.passed} of {cell.total} passed")
    page.locator("#probe-failure input").click()  # choose another failure, then the first by its row
    page.get_by_role("option").nth(1).click()
    expect(page.locator("#probe-failure input")).not_to_have_value(f"1. {case.text} → {case.variant}")
    page.locator("#probe-failures [data-testid='cell-0-2']").click()
    expect(page.locator("#probe-failure input")).to_have_value(f"1. {case.text} → {case.variant}")
    page.locator("#probe-open").click()
    expect(page.locator("#sentence textarea")).to_have_value(case.text)
    expect(page.locator("#sentence-b textarea")).to_have_value(case.variant)
    expect(page.locator("#summary")).to_contain_text(f"model: {model_name(model)}")  # the one that failed
    expect(page.locator("#pair-summary")).to_contain_text("A → B")
    expect(page.locator("#pair-table")).to_contain_text("B − A")
    expect(page.locator("#pair-table")).to_contain_text(model_name(model))
    expect(page.locator("#pair-figures figure.view")).to_have_count(1)
    _expect_panels(page, 1)
    assert not page.external, f"the page reached outside: {page.external[:3]}"
