"""Without the SST trees, in a real browser: the Treebank says once, in the page's language, what is missing and
how the Space's owner adds it, with its search, random pick and words box off (no red toast); and the API tab
says what the README and docs/api.md say: a model that fails stays in /compare's list with its error."""

import pytest
from playwright.sync_api import expect


@pytest.fixture(scope="module")
def app_env(tmp_path_factory):
    """A data folder without the trees."""
    return {"DATA_DIR": str(tmp_path_factory.mktemp("no_data"))}


@pytest.mark.parametrize(
    ("locale", "tab", "says"), [("en-US", "Treebank", "Space's owner adds it"), ("zh-CN", "树库", "Space 的所有者")]
)
def test_the_treebank_without_data_says_so_once_and_switches_its_search_off(open_page, url, locale, tab, says):
    page = open_page(url, locale)
    page.get_by_role("tab", name=tab).click()
    expect(page.locator("#tb-problem")).to_contain_text(says)
    expect(page.locator("#tb-problem")).to_contain_text("DATA_DIR")
    expect(page.locator("#tb-problem")).not_to_contain_text("--data-dir")
    for button in ("#tb-search", "#tb-random"):
        expect(page.locator(button)).to_be_disabled()
    expect(page.locator("#tb-words textarea, #tb-words input")).to_be_disabled()
    page.wait_for_timeout(1000)  # a toast would come with the tab's first answer
    expect(page.locator(".toast-body")).to_have_count(0)


def test_the_api_tab_says_a_failed_model_stays_in_compares_list(open_page, url):
    page = open_page(url)
    page.get_by_role("tab", name="API").click()
    usage = page.locator("#api-usage")
    expect(usage).to_contain_text("stays in /compare's list")
    expect(usage).not_to_contain_text("left out of /compare")
