"""An intervention in a real browser: a link that names one opens the Lab with the menu set to it and the model
as trained beside the model with the intervention."""

from playwright.sync_api import expect

from demo.i18n import intervention_name


def test_a_link_opens_the_intervention_before_and_after(url, open_page):
    page = open_page(
        f"{url}?text=the%20film%20is%20not%20good&model=tensor_cnn&task=sst5&intervention=max_order&index=1"
    )
    expect(page.locator("#summary")).to_contain_text(intervention_name("max_order:1", "en"))  # by what it does
    expect(page.locator("#summary")).to_contain_text("What it tests")
    expect(page.locator("#intervention input")).to_have_value(intervention_name("max_order", "en"))
    expect(page.locator("#intervention-index input")).to_have_value("1")
    expect(page.locator("#result details.model-panel")).to_have_count(2)  # as trained, and with the intervention


def test_choosing_one_model_offers_its_interventions(url, open_page):
    page = open_page(url)
    expect(page.locator("#intervention")).to_be_hidden()  # all five: no menu
    page.locator("#model input").click()
    page.get_by_role("option", name="DCNN (Kalchbrenner et al. 2014)").click()
    expect(page.locator("#intervention")).to_be_visible()
    page.locator("#intervention input").click()
    expect(page.get_by_role("option", name=intervention_name("max_pool", "en"))).to_be_visible()
