"""The attribution upload in the Lab and a node's attributions in the Treebank tab, in a real browser (Debian
chromium via Playwright, as tests/test_e2e_treebank.py), on the tiny checkpoints and trees."""

import pytest
from playwright.sync_api import expect

EXPORT_TIMEOUT = 60_000  # ms: an upload is explained by every model before the files come back


@pytest.fixture(scope="module")
def app_env(tiny_data):
    """The tiny SST trees as the app's data (DATA_DIR): the Treebank tab reads them."""
    return {"DATA_DIR": str(tiny_data)}


def test_an_uploaded_file_comes_back_explained_and_a_node_shows_its_scores(url, open_page, tmp_path):
    upload = tmp_path / "mine.txt"
    upload.write_text("the film is not good\na great and moving plot\n", encoding="utf-8")
    page = open_page(url)
    page.get_by_text("Attributions of a file").click()
    page.locator("#attr-export-file input[type=file]").set_input_files(str(upload))
    page.locator("#attr-export-run").click()
    # the three files, named "words .csv" and so on in the list
    expect(page.locator("#attr-export-files")).to_contain_text("words", timeout=EXPORT_TIMEOUT)
    expect(page.locator("#attr-export")).to_contain_text("(sentence, model) pairs from 2 lines", timeout=EXPORT_TIMEOUT)
    page.get_by_role("tab", name="Treebank").click()
    expect(page.locator("#tb-node-attr-summary")).to_contain_text("Node 0", timeout=EXPORT_TIMEOUT)
    expect(page.locator("#tb-node-attr")).to_contain_text("word", timeout=EXPORT_TIMEOUT)
