"""The Chinese page with nothing left in English: after an analysis in each tab (the Lab with all five models and
with AdaSent alone, the Probes with a cell's failures, the Treebank with a sentence and a node, then Train,
Checkpoints and API), no visible text holds a run of four or more Latin letters but the allowed ones: the models'
and methods' names, file formats, what the user or the data wrote (the sentences analysed, the examples, the SST
trees, the probe suites' templates), and code, paths and hashes. Screen-reader-only text is Gradio's own."""

import re
import tomllib

import pytest
from playwright.sync_api import expect

from core.data import PROJECT_ROOT
from core.models import PAPER_MODELS
from demo.examples import EXAMPLES
from demo.i18n import model_name

ZH = "这部电影不怎么好看，但是东西很棒"  # words of the tiny zh_sentiment checkpoints (tests/lab_fixture.py)
WORD = re.compile(r"[A-Za-z]{4,}")
# names, formats and a key (Ctrl) that stay as they are in Chinese
NAMES = {"SmoothGrad", "AOPC", "JSON", "JSONL", "Python", "Gradio", "Hugging", "Face", "CheckList", "logit", "Ctrl"}
# visible text (not in code, scripts, hover titles or screen-reader-only elements) and what text inputs show
VISIBLE = """() => {
  const out = [];
  const shown = e => e.checkVisibility({visibilityProperty: true}) && !e.closest('.sr-only, code, pre, title');
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const e = walker.currentNode.parentElement;
    if (walker.currentNode.textContent.trim() && !e.closest('script, style') && shown(e))
      out.push(walker.currentNode.textContent);
  }
  for (const input of document.querySelectorAll('input:not([type=radio]):not([type=checkbox])'))
    if (input.value && shown(input)) out.push(input.value);
  return out;
}"""


@pytest.fixture(scope="module")
def app_env(tiny_data):
    """The tiny SST trees as the app's data: the Treebank tab reads them."""
    return {"DATA_DIR": str(tiny_data)}


@pytest.fixture(scope="module")
def allowed(tiny_data) -> set[str]:
    """Words that stay in English: names, and what the user or the data wrote (lower case)."""
    data = [ZH, *(sentence for _, sentence in EXAMPLES), *(model_name(m) for m in PAPER_MODELS)]
    data += [path.read_text(encoding="utf-8") for path in (tiny_data / "sst" / "trees").glob("*.txt")]
    for suite in (PROJECT_ROOT / "probes").glob("*.toml"):  # the sentences the probes build (not the tests' names)
        parsed = tomllib.loads(suite.read_text(encoding="utf-8"))
        data += [word for words in parsed["lexicon"].values() for word in words]
        data += [test.get(key, "") for test in parsed["tests"] for key in ("template", "base", "variant")]
    words = {word.lower() for word in WORD.findall(" ".join(data))}
    cut = {word[:n] for word in words for n in range(4, len(word))}  # the examples' labels end mid-word
    return words | cut | {name.lower() for name in NAMES}


def english(page, allowed: set[str]) -> set[str]:
    """The English words on the page that are not allowed: paths, file names and hashes are left out first."""
    text = " ".join(page.evaluate(VISIBLE))
    text = re.sub(r"\S*[/_@]\S*|\b\w+\.(md|json|csv|tsv|jsonl)\b|\b[0-9a-f]{7,64}\b", " ", text)
    return {word for word in WORD.findall(text) if word.lower() not in allowed}


def settled(page):
    """Nothing left running: no Gradio progress on the page, the Lab not analysing."""
    page.wait_for_timeout(500)
    expect(page.locator(".progress-text, .eta-bar, .pending")).to_have_count(0)
    expect(page.locator("#analysing")).to_be_hidden()


def test_no_english_is_left_in_any_tab_of_the_chinese_page(open_page, url, allowed):
    page = open_page(url, "zh-CN")
    page.locator("#sentence textarea").fill(ZH)
    page.locator("#run").click()
    expect(page.locator(f".lab-result[data-text='{ZH}']")).to_have_count(1)
    settled(page)
    assert english(page, allowed) == set(), "the Lab, all five models"
    page.locator("#model input").click()
    page.get_by_role("option", name=model_name("adasent")).click()
    page.locator("#run").click()
    expect(page.locator("figure[data-name^='adasent-'][data-name$='-pyramid'] .legend")).to_be_visible()
    settled(page)
    assert english(page, allowed) == set(), "the Lab, AdaSent"

    page.get_by_role("tab", name="行为探针").click()
    page.locator("#probe-run").click()
    expect(page.locator("#probe-table")).to_contain_text(model_name("agt", cited=False))
    failure = page.locator("#probe-failures [data-testid='cell-0-0']")  # a failure's test, worded
    for row in range(8):  # the first cell with failures of the tiny models
        page.locator(f"#probe-table [data-testid='cell-{row}-1']").click()
        settled(page)
        if failure.is_visible():
            break
    expect(failure).to_be_visible()
    assert english(page, allowed) == set(), "the Probes"

    page.get_by_role("tab", name="树库").click()
    page.locator("#tb-random").click()
    expect(page.locator("#tb-tree figure.view svg")).to_be_visible()
    page.locator("#tb-nodes tr[data-row='1'] td").last.click()
    settled(page)
    expect(page.locator("#tb-tree-summary")).to_contain_text("测试集")
    assert english(page, allowed) == set(), "the Treebank"

    for tab in ("训练", "模型文件", "接口"):
        page.get_by_role("tab", name=tab).click()
        settled(page)
        assert english(page, allowed) == set(), tab
