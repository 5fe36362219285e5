"""The Train tab and typed probe cases in a real browser: a run says why it stopped, the Job box and the Lab's
captions name the model by its file, its checkpoint sha256 and the commit; cases typed with commas run."""

import re

import pytest
from playwright.sync_api import expect
from test_user_training import reviews, write_csv


@pytest.fixture(scope="module", autouse=True)
def user_models(tmp_path_factory, monkeypatch_module):
    """The app started here (`url`) trains into a folder of its own: other modules' apps never load its model."""
    monkeypatch_module.setenv("LAB_USER_MODELS", str(tmp_path_factory.mktemp("e2e_progress_models")))


def test_a_run_says_why_it_stopped_and_its_model_is_captioned_in_full(open_page, url, tmp_path):
    path = write_csv(tmp_path / "progress_reviews.csv", reviews(60))
    page = open_page(url, "en-US")
    page.get_by_role("tab", name="Train").click()
    page.locator("#train-file input[type='file']").set_input_files(str(path))
    expect(page.locator("#train-file-summary")).to_contain_text("60 rows")
    epochs = page.locator("#train-epochs input[type='number']")
    epochs.fill("2")
    epochs.press("Enter")
    page.evaluate("""() => { window.__jobBox = new Set(); setInterval(() =>
        window.__jobBox.add(document.querySelector('#train-job input')?.value || ''), 20); }""")
    page.locator("#train-start").click()
    expect(page.locator("#train-status")).to_contain_text("Trained every epoch asked for: 2.", timeout=180_000)
    expect(page.locator("#train-job input")).to_have_value(re.compile(r"^progress_reviews\.csv · .+ · DCNN$"))
    shown = page.evaluate("() => [...window.__jobBox]")
    assert not [v for v in shown if re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{16}", v)], shown  # never the job's raw id

    page.get_by_role("tab", name="Lab").click()
    page.locator("#task input").click()  # the new task, chosen in the Lab's Task menu (never switched to by itself)
    page.get_by_role("option", name=re.compile(r"^progress_reviews\.csv · ")).click()
    page.locator("#model input").click()
    page.get_by_role("option", name="DCNN (Kalchbrenner et al. 2014)").click()
    page.locator("#sentence textarea").fill("a great fun film")
    page.locator("#run").click()
    expect(page.locator(".model-panel")).to_have_count(1)
    result = page.locator("#result").inner_html()
    assert re.search(r"checkpoint sha256 [0-9a-f]{16}", result) and "sha256 ?" not in result, result[:2000]
    assert "progress_reviews.csv · " in result and "commit ?" not in result


def test_cases_typed_with_commas_run_and_a_bad_one_says_which_line(open_page, url):
    page = open_page(url, "en-US")
    page.get_by_role("tab", name="Probes").click()
    page.get_by_text("Run my cases").first.click()  # the accordion
    box = page.locator("#probe-user-text textarea")
    box.fill('The film is not good,negative\n"Slow, but moving",positive\nThe film is good.,The film is great.,up')
    page.locator("#probe-run-user").click()
    expect(page.locator("#probe-summary")).to_contain_text(re.compile(r"^\s*your cases on task .+: 3 cases, 5 models"))
    box.fill("a fine film,positive\nno expectation here")
    page.locator("#probe-run-user").click()
    expect(page.locator("#probe-summary")).to_contain_text("Line 2: expected 2 or 3 columns separated by commas")
    assert not page.external, f"the page reached outside: {page.external[:3]}"
