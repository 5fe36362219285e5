"""The browser tests' one setup: Debian chromium driven by Playwright (`apt-get install chromium
fonts-wqy-microhei`, never `playwright install`: no network) against `python app.py` on the tiny checkpoints.
Without chromium the tests fail, saying so, rather than skip. Every test here is marked e2e (`make test-e2e`)."""

from pathlib import Path

import pytest
from lab_fixture import serve_app
from playwright.sync_api import expect, sync_playwright

from tools.bench.browser import ARGS, CHROMIUM  # the same Debian chromium, started the same way

expect.set_options(timeout=30_000)  # ms, per expectation: a shared 2-core machine can be slow


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items):
    for item in items:
        if Path(__file__).parent in item.path.parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser():
    assert Path(CHROMIUM).exists(), "Debian chromium is not installed (apt-get install chromium fonts-wqy-microhei)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture(autouse=True)
def _pages_closed(browser):
    """Every page a test opened is closed after it: an idle page of the app keeps ~9% of a core busy (a Gradio 6.31
    page of one textbox 7.7%), and the suite's pages left open raised the load past 30 within 20 minutes, failing
    the later tests."""
    yield
    for context in browser.contexts:
        context.close()


@pytest.fixture(scope="module")
def app_env() -> dict[str, str]:
    """Environment of the module's app over LAB_CHECKPOINTS; a module overrides it (e.g. DATA_DIR)."""
    return {}


@pytest.fixture(scope="module")
def url(lab_root, app_env, tmp_path_factory):
    """The address of `python app.py` on the tiny checkpoints, one app per module."""
    yield from serve_app(tmp_path_factory.mktemp("app") / "app.log", {"LAB_CHECKPOINTS": str(lab_root), **app_env})


@pytest.fixture
def open_page(browser):
    """open_page(url, locale) -> a new page at `url`; page.external lists the requests that left the app."""

    def open_(url: str, locale: str = "en-US"):
        page = browser.new_context(locale=locale, viewport={"width": 1280, "height": 1000}).new_page()
        page.external = []
        page.on(
            "request", lambda r: r.url.startswith((url.rstrip("/"), "data:", "blob:")) or page.external.append(r.url)
        )
        page.goto(url)
        return page

    return open_
