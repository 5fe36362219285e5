"""The lab in a real browser: Debian chromium driven by Playwright against `python app.py`.

Needs `apt-get install chromium fonts-wqy-microhei` (never `playwright install`: no network); without
it the tests fail, saying so, rather than skip. Run with `make test-e2e`. Saves its screenshots into
$SCREENSHOT_DIR (default: a temporary folder).
"""

import os
import tempfile
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from lab_fixture import build_checkpoints
from playwright.sync_api import expect, sync_playwright

from core.models import PAPER_MODELS
from core.predict import Lab
from core.probes import run_suite
from demo.i18n import model_name
from tools.loadtest import free_port

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
EN, ZH = "It is not a bad film, but the plot is dull.", "这部电影不怎么好看，但是演员很棒"
TIMEOUT = 30_000  # ms, per expectation (a shared 2-core machine can be slow)


@pytest.fixture(scope="module")
def url(tiny_data, tmp_path_factory):
    """`python app.py` on tiny checkpoints, as a user starts it; the time until it answers is printed."""
    assert Path(CHROMIUM).exists(), "Debian chromium is not installed (apt-get install chromium fonts-wqy-microhei)"
    root = build_checkpoints(tmp_path_factory.getbasetemp() / "lab" / "checkpoints", tiny_data)
    port = free_port()
    env = {**os.environ, "LAB_CHECKPOINTS": str(root), "GRADIO_SERVER_PORT": str(port),
           "GRADIO_SERVER_NAME": "127.0.0.1", "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    address, log_path = f"http://127.0.0.1:{port}/", tmp_path_factory.mktemp("app") / "app.log"
    with open(log_path, "w") as log:
        start = time.perf_counter()
        server = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            while True:
                assert server.poll() is None, f"app.py exited with {server.returncode}; see {log_path}"
                assert time.perf_counter() - start < 60, "app.py did not answer within 60 s"
                try:
                    urllib.request.urlopen(address, timeout=1)
                    break
                except OSError:
                    time.sleep(0.2)
            print(f"\napp.py ready in {time.perf_counter() - start:.1f} s")
            yield address
        finally:
            server.terminate()
            server.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield browser
        browser.close()


def _page(browser, url, locale):
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.external = []
    page.on("request", lambda r: r.url.startswith((url.rstrip("/"), "data:", "blob:")) or page.external.append(r.url))
    page.goto(url)
    return page


def _analyse(page, text):
    page.locator("#sentence textarea").fill(text)
    page.locator("#run").click()


def _screenshot(page, name):
    """The page from the top to the end of the first model panel, into $SCREENSHOT_DIR (default: a
    temporary folder; the README's docs/screenshot*.png are taken with the bundled checkpoints)."""
    box = page.locator(".model-panel").first.bounding_box()
    folder = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="lab-screens-"))
    page.screenshot(path=str(folder / name), full_page=True,
                    clip={"x": 0, "y": 0, "width": 1280, "height": box["y"] + box["height"] + 10})


def _expect_panels(page, count):
    panels = page.locator(".model-panel")
    expect(panels).to_have_count(count, timeout=TIMEOUT)
    for i in range(count):
        panel = panels.nth(i)
        expect(panel.locator("[data-testid='highlighted-text']")).to_be_visible(timeout=TIMEOUT)
        expect(panel.locator("[data-testid='highlighted-text:category-legend']")).to_be_visible(timeout=TIMEOUT)
        expect(panel.locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)


def test_english_all_five(browser, url):
    page = _page(browser, url, "en-US")
    _analyse(page, EN)
    expect(page.locator("#summary")).to_contain_text("Majority label", timeout=TIMEOUT)
    expect(page.locator("#comparison")).to_contain_text("Tensor CNN", timeout=TIMEOUT)
    expect(page.locator("#probs .js-plotly-plot")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#curve .js-plotly-plot")).to_contain_text("native", timeout=TIMEOUT)
    expect(page.locator("#notices")).to_contain_text("unknown", timeout=TIMEOUT)
    _expect_panels(page, len(PAPER_MODELS))
    expect(page.locator(".model-panel").first).to_contain_text("unknown word")  # the occlusion legend
    page.wait_for_timeout(500)  # let plotly finish laying out before the screenshot
    _screenshot(page, "screenshot.png")
    assert not page.external, f"the page reached outside: {page.external[:3]}"


def test_single_model_and_html_shown_as_text(browser, url):
    page = _page(browser, url, "en-US")
    page.locator("#model input").click()
    page.get_by_role("option", name="DCNN (Kalchbrenner et al. 2014)").click()
    _analyse(page, '<img src=x onerror="window.__xss=1"> <b>bold</b> <script>window.__xss=2</script> good')
    expect(page.locator("#summary")).to_contain_text("Prediction", timeout=TIMEOUT)
    _expect_panels(page, 1)
    panel = page.locator(".model-panel")
    expect(panel).to_contain_text("DCNN")
    expect(panel.locator(".js-plotly-plot")).to_have_count(2)  # the k-max feature graphs
    highlight = panel.locator("[data-testid='highlighted-text']")
    for piece in ("onerror=", "bold</b", "script>window.__xss=2</script"):  # the typed markup, as text
        expect(highlight).to_contain_text(piece)
    expect(page.locator("#curve .js-plotly-plot")).to_contain_text("prefix")
    assert page.evaluate("window.__xss") is None


def test_empty_input_says_so(browser, url):
    page = _page(browser, url, "en-US")
    _analyse(page, "   ")
    expect(page.locator("#summary")).to_contain_text("Please type a sentence", timeout=TIMEOUT)
    expect(page.locator(".model-panel")).to_have_count(0)


def test_chinese(browser, url):
    page = _page(browser, url, "zh-CN")
    expect(page.locator("#run")).to_have_text("分析", timeout=TIMEOUT)
    _analyse(page, ZH)
    expect(page.locator("#summary")).to_contain_text("多数标签", timeout=TIMEOUT)
    expect(page.locator("#summary")).to_contain_text("中文情感")
    expect(page.locator("#curve .js-plotly-plot")).to_contain_text("很棒", timeout=TIMEOUT)
    _expect_panels(page, len(PAPER_MODELS))
    expect(page.locator(".model-panel").first).to_contain_text("未登录词")
    page.wait_for_timeout(500)
    _screenshot(page, "screenshot_zh.png")


def test_a_probe_failure_opens_in_the_lab_as_a_minimal_pair(browser, url, tiny_data, tmp_path_factory):
    """Probes tab: run the English suite, choose a cell of the table and a failure of a pair test in it, open it:
    the Lab tab shows both sentences, the analysis of the first, and the minimal pair's table and figures."""
    root = build_checkpoints(tmp_path_factory.getbasetemp() / "lab" / "checkpoints", tiny_data)  # the app's
    report = run_suite(Lab.load(root), "en")  # the same checkpoints answer the same: a cell whose first failure is a pair
    row, column, capability, model = next((r, c, cap, m) for r, (cap, cells) in enumerate(report.cells.items())
                                          for c, m in enumerate(report.models, start=1)
                                          if len(cells[m].failures) > 1 and cells[m].failures[0].case.variant)
    case = report.cells[capability][model].failures[0].case
    page = _page(browser, url, "en-US")
    page.get_by_role("tab", name="Probes").click()
    page.locator("#probe-run").click()
    expect(page.locator("#probe-summary")).to_contain_text(f"{report.cases} cases", timeout=TIMEOUT)
    page.locator(f"#probe-table [data-testid='cell-{row}-{column}']").click()
    cell = report.cells[capability][model]
    expect(page.locator("#probe-cell")).to_contain_text(f"{model_name(model)}: {cell.passed} of {cell.total} passed",
                                                        timeout=TIMEOUT)
    page.locator("#probe-failure input").click()  # choose another failure, then the first by its row
    page.get_by_role("option").nth(1).click()
    expect(page.locator("#probe-failure input")).not_to_have_value(f"1. {case.text} → {case.variant}")
    page.locator("#probe-failures [data-testid='cell-0-2']").click()
    expect(page.locator("#probe-failure input")).to_have_value(f"1. {case.text} → {case.variant}", timeout=TIMEOUT)
    page.locator("#probe-open").click()
    expect(page.locator("#sentence textarea")).to_have_value(case.text, timeout=TIMEOUT)
    expect(page.locator("#sentence-b textarea")).to_have_value(case.variant)
    expect(page.locator("#summary")).to_contain_text("Majority label", timeout=TIMEOUT)
    expect(page.locator("#pair-summary")).to_contain_text("A → B", timeout=TIMEOUT)
    expect(page.locator("#pair-table")).to_contain_text("B − A")
    for model_key in PAPER_MODELS:
        expect(page.locator("#pair-table")).to_contain_text(model_name(model_key))
    expect(page.locator(".pair-plot .js-plotly-plot")).to_have_count(len(PAPER_MODELS), timeout=TIMEOUT)
    _expect_panels(page, len(PAPER_MODELS))
    assert not page.external, f"the page reached outside: {page.external[:3]}"
