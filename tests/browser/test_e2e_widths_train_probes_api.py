"""Issue 45's items that test_e2e_widths_lab_treebank.py leaves, at a phone's, a tablet's and a laptop's width in
English, Simplified and Traditional Chinese (Debian chromium, tiny checkpoints): one app, one training job, and
each width and language a new browser context inside one test (a launch per case would cost more than its checks):

2.  the failures table's numbers are in view beside its key column, as the pass-rate table's;
5.  the Traditional Chinese page uses none of the mainland words in any tab (干預, not 幹預);
9.  own probe cases in the other language than the task's are warned about, and the summary names the suite
    in the page's language;
10. Train: a file `text,comment` names the columns it took (shown in the pickers), a one-column file says so;
    the status line moves within an epoch and never shows Gradio's "processing | 0.5/0.1s";
11. a toast is headed in the page's language; Gradio's API page (its link is on a tablet's and a laptop's
    page only) names and describes /train's parameters (no "[object Object]", no sample PDF); the Lab's Task
    menu stays the visitor's choice after training.

The job is trained once, on the phone in English (where the issue saw 0% -> Done), and every later context opens
with that page's owner key (its localStorage), so the job box offers the same job."""

import re

import pytest
from playwright.sync_api import expect
from test_e2e_widths_lab_treebank import LOCALES, SIZES
from test_layout_widths import open_tab
from test_user_training import reviews, write_csv

from demo.i18n import t

# mainland words a Taiwan reader would not write (OpenCC s2twp gives 干預, 預設, 網路, 檢視, 介面, 檔案, 執行, 資料)
MAINLAND = ("幹預", "默認", "網絡", "視圖", "接口", "文件", "運行", "數據")
# what the status line showed over the run, every 50 ms: its own text, and Gradio's progress text where a reader
# sees it (Gradio keeps its tracker in the page, at opacity 0, for an event whose progress is hidden)
WATCH_STATUS = """() => { window.__status = []; setInterval(() => {
    const status = document.querySelector('#train-status'), shown = [];
    for (const e of status?.querySelectorAll('[data-testid=markdown], .progress-text') || [])
      if (e.checkVisibility({opacityProperty: true, visibilityProperty: true})) shown.push(e.innerText);
    window.__status.push(shown.join(' '));
  }, 50); }"""
SHOWN_STATUS = """e => [...e.querySelectorAll('[data-testid=markdown], .progress-text')]
    .filter(t => t.checkVisibility({opacityProperty: true, visibilityProperty: true}))
    .map(t => t.innerText).join(' ')"""
GRADIO_PROGRESS = re.compile(r"processing|\d+(\.\d+)?/\d+(\.\d+)?s")


@pytest.fixture(scope="module", autouse=True)
def user_models(tmp_path_factory, monkeypatch_module):
    """The app started here (`url`) trains into a folder of its own: other modules' apps never load its model."""
    monkeypatch_module.setenv("LAB_USER_MODELS", str(tmp_path_factory.mktemp("e2e_widths_models")))


def plain(markdown: str) -> str:
    return markdown.replace("**", "")


def train_once(browser, url: str, path) -> tuple[dict, str, list[str]]:
    """Train one epoch on the phone in English (long enough to be seen within: 1,600 training rows); the page's
    storage (its owner key), the job's name and what the status line showed."""
    context = browser.new_context(locale="en-US", viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(url)
        page.locator("#run").wait_for()
        open_tab(page, t("tab_train", "en"))
        page.locator("#train-file input[type='file']").set_input_files(str(path))
        expect(page.locator("#train-file-summary")).to_contain_text("2000 rows")
        epochs = page.locator("#train-epochs input[type='number']")
        epochs.fill("1")
        epochs.press("Enter")
        page.evaluate(WATCH_STATUS)
        page.locator("#train-start").click()
        expect(page.locator("#train-status")).to_contain_text("Done", timeout=300_000)
        job = page.locator("#train-job input").input_value()
        return context.storage_state(), job, page.evaluate("() => window.__status")
    finally:
        context.close()


def test_train_probes_api_and_words_at_every_width(browser, url, tmp_path):
    path = write_csv(tmp_path / "reviews.csv", reviews(2000))
    storage, job, statuses = train_once(browser, url, path)
    percents = {float(p) for p in re.findall(r"\((\d+)%\)", " ".join(statuses))}
    assert percents - {0, 100}, f"10: progress per epoch only: {sorted(set(statuses))}"  # 1 epoch: 0% or 100%
    assert not [s for s in statuses if GRADIO_PROGRESS.search(s)], "10: Gradio's progress in the status line"
    comments = write_csv(tmp_path / "comments.csv", [("a fine film", "x")] * 12, header=("text", "comment"))
    one_column = write_csv(tmp_path / "one.csv", [("a fine film",)] * 12, header=("text",))

    for width, height in SIZES:
        for locale, ui, _ in LOCALES:
            label = f"{width} px {locale}"
            viewport = {"width": width, "height": height}
            context = browser.new_context(locale=locale, viewport=viewport, storage_state=storage)
            try:
                page = context.new_page()
                page.goto(url)
                page.locator("#run").wait_for()  # the page drawn: open_tab counts the tabs at once
                seen = [page.locator("body").inner_text()]  # the text of each tab, for the mainland words (5)

                open_tab(page, t("tab_train", ui))  # 11: a toast headed in the page's language
                page.locator("#train-start").click()
                title = page.locator(".toast-title.error").first
                expect(title).to_be_visible()
                shown = title.evaluate("e => getComputedStyle(e, '::before').content")
                assert shown == f'"{t("toast_error", ui)}"', (label, shown)
                page.locator(".toast-body button[data-testid='toast-close']").first.click()

                # 10: the columns it took, named in the message and shown in the pickers
                page.locator("#train-file input[type='file']").set_input_files(str(comments))
                taken = plain(t("train_columns_taken", ui, text="text", label="comment")).strip()
                expect(page.locator("#train-file-summary")).to_contain_text(taken)
                expect(page.locator("#train-text-column input")).to_have_value("text")
                expect(page.locator("#train-label-column input")).to_have_value("comment")
                page.locator("#train-file button").first.click()  # cleared, then a file of one column
                page.locator("#train-file input[type='file']").set_input_files(str(one_column))
                expect(page.locator("#train-file-summary")).to_contain_text(
                    plain(t("train_one_column", ui, column="text"))
                )

                # 10: the job of the same owner, its status line in the page's language, never Gradio's progress
                page.locator("#train-job input").click()
                page.get_by_role("option", name=job).click()
                status = page.locator("#train-status")
                expect(status).to_contain_text(
                    plain(t("train_status_done", ui, task="@", model="@", accuracy=0, n=0)).split("@")[0]
                )
                shown = status.evaluate(SHOWN_STATUS)
                assert not GRADIO_PROGRESS.search(shown), (label, shown)
                seen.append(page.locator("body").inner_text())

                open_tab(page, t("tab_lab", ui))  # 11: the Task menu offers the new task, never switches to it
                expect(page.locator("#task input")).not_to_have_value(job.split(" · DCNN")[0])

                open_tab(page, t("tab_probes", ui))  # 9 and 2, with own cases: a failure for every model
                page_suite = "en" if ui == "en" else "zh"
                expect(page.locator("#probe-suite input")).to_have_value(t(f"probe_suite_{page_suite}", ui))
                page.get_by_text(t("probe_run_user", ui)).first.click()  # the accordion
                sentences = ("这部电影很好", "质量很差") if page_suite == "en" else ("a fine film", "a dull plot")
                cases = "\n".join(f"{s},{e}" for s in sentences for e in ("positive", "negative"))
                page.locator("#probe-user-text textarea").fill(cases)
                page.locator("#probe-run-user").click()
                summary = page.locator("#probe-summary")
                other = t("lang_zh" if page_suite == "en" else "lang_en", ui)
                warned = t("probe_other_language", ui, cases=other, task="@", task_lang="@").split("@")[0]
                expect(summary).to_contain_text(warned, timeout=60_000)
                expect(summary).to_contain_text(t("user_cases", ui))
                for table in ("#probe-table", "#probe-failures"):
                    number = page.locator(f"{table} [data-testid='cell-0-1']")
                    expect(number).to_be_visible()
                    key = page.locator(f"{table} [data-testid='cell-0-0']").bounding_box()
                    cell = number.bounding_box()
                    assert cell["x"] < width - 16, (label, table, key, cell)  # a number column starts in view
                    assert width > 640 or key["width"] <= 0.45 * width, (label, table, key)
                seen.append(page.locator("body").inner_text())

                open_tab(page, t("tab_api", ui))
                expect(page.locator("#api-usage")).to_be_visible()
                seen.append(page.locator("body").inner_text())
                if ui == "zh-TW":  # 5
                    found = {word for word in MAINLAND if any(word in text for text in seen)}
                    assert not found, (label, found)

                if width < 640:  # Gradio shows no "Use via API" link on a phone
                    expect(page.locator("footer button.show-api")).to_be_hidden()
                    continue
                page.locator("footer button.show-api").click()  # 11: Gradio's API page
                docs = page.get_by_role("heading").filter(has_text="Queue a training job")  # /train's
                expect(docs).to_be_visible()
                text = page.locator("body").inner_text()
                assert "[object Object]" not in text and "sample_file.pdf" not in text, label
                assert "handle_file('reviews.csv')" in text and 'provided in the "1st"' not in text, label
            finally:
                context.close()
