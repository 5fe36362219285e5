"""The Train tab in a real browser (issue 26): upload a file, train one epoch, see the curves and the confusion
matrix, then predict with the new model in the Lab tab."""

import pytest
from playwright.sync_api import expect
from test_user_training import reviews, write_csv


@pytest.fixture(scope="module", autouse=True)
def user_models(tmp_path_factory, monkeypatch_module):
    """The app started here (`url`) trains into a folder of its own: other modules' apps never load its model."""
    monkeypatch_module.setenv("LAB_USER_MODELS", str(tmp_path_factory.mktemp("e2e_user_models")))


def test_upload_train_one_epoch_see_the_curve_and_predict(open_page, url, tmp_path):
    path = write_csv(tmp_path / "browser_reviews.csv", reviews(60))
    page = open_page(url, "en-US")
    page.get_by_role("tab", name="Train").click()
    page.locator("#train-file input[type='file']").set_input_files(str(path))
    expect(page.locator("#train-file-summary")).to_contain_text("60 rows")
    expect(page.locator("#train-text-column input")).to_have_value("review")
    expect(page.locator("#train-label-column input")).to_have_value("stars")
    epochs = page.locator("#train-epochs input[type='number']")
    epochs.fill("1")
    epochs.press("Enter")
    page.locator("#train-start").click()
    expect(page.locator("#train-status")).to_contain_text("Done", timeout=180_000)
    status = page.locator("#train-status").inner_text()
    task = status.split("task ")[1].split(", model")[0].strip()  # named by its file and date, not its id
    assert task.startswith("browser_reviews.csv · "), status
    for plot in ("#train-loss", "#train-dev"):
        expect(page.locator(f"{plot} canvas, {plot} svg").first).to_be_visible()
    expect(page.locator("#train-confusion")).to_contain_text("true \\ predicted")

    page.get_by_role("tab", name="Lab").click()
    expect(page.locator("#task input")).not_to_have_value(task)  # the Lab keeps the visitor's choice ...
    page.locator("#task input").click()
    page.get_by_role("option", name=task).click()  # ... and offers the new task
    expect(page.locator("#task input")).to_have_value(task)
    page.locator("#model input").click()
    page.get_by_role("option", name="DCNN (Kalchbrenner et al. 2014)").click()
    page.locator("#sentence textarea").fill("a great fun film")
    page.locator("#run").click()
    expect(page.locator("#summary")).to_contain_text("Prediction")
    expect(page.locator("#summary")).to_contain_text(task)
    expect(page.locator(".model-panel")).to_have_count(1)
    assert not page.external, f"the page reached outside: {page.external[:3]}"
