"""The owner table in a real browser (public-Space issue): a page keeps its anonymous key in plain localStorage, and
after 300 anonymous /owner calls (each a new session binding a new key) the open page still acts for its owner:
it still reaches its own job, and after a reload its job box still lists it."""

import re

import httpx
import pytest
from playwright.sync_api import expect
from test_user_training import reviews, write_csv


@pytest.fixture(scope="module")
def app_env(tmp_path_factory) -> dict[str, str]:
    return {"LAB_USER_MODELS": str(tmp_path_factory.mktemp("owner_table")), "LAB_BINDS_PER_MINUTE": "1000"}


def test_an_open_page_keeps_its_jobs_through_an_owner_flood(open_page, url, tmp_path):
    page = open_page(url, "en-US")
    page.get_by_role("tab", name="Train").click()
    page.wait_for_function("() => (localStorage.getItem('lab-owner-key') || '').length >= 16")
    key = page.evaluate("() => localStorage.getItem('lab-owner-key')")
    config = httpx.get(f"{url}config").text
    assert key not in config and "storage_key" not in config  # no BrowserState, no secret sent to decrypt a key

    page.locator("#train-file input[type='file']").set_input_files(str(write_csv(tmp_path / "mine.csv", reviews(60))))
    expect(page.locator("#train-file-summary")).to_contain_text("60 rows")
    epochs = page.locator("#train-epochs input[type='number']")
    epochs.fill("20")
    epochs.press("Enter")
    page.locator("#train-start").click()
    expect(page.locator("#train-status")).to_contain_text("Training: epoch", timeout=60_000)

    for i in range(300):
        httpx.post(f"{url}gradio_api/call/owner", json={"data": [f"flood-key-{i:04d}-xxxxxxxx"]}).raise_for_status()

    page.locator("#train-cancel").click()  # the page's own session, bound before the flood, asks for its job
    expect(page.locator("#train-status")).to_contain_text(re.compile(r"(Cancelled\b|Done: task)"), timeout=30_000)
    assert "no training job" not in page.locator("#train-status").inner_text()
    page.reload()
    page.get_by_role("tab", name="Train").click()
    assert page.evaluate("() => localStorage.getItem('lab-owner-key')") == key
    page.locator("#train-job input").click()
    expect(page.get_by_role("option").filter(has_text="mine.csv")).to_have_count(1)
