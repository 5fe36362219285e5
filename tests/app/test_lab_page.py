"""The Lab page's own pieces (issue 20): the API tab's example names the address the page was opened at
and the loaded tasks, a language that contradicts the task is refused, a link's inputs are checked, every
prediction carries its checkpoint's accuracy and sha256, and the examples are labelled in both languages."""

import hashlib
from html.parser import HTMLParser

import gradio as gr
import pytest

from core.models import PAPER_MODELS
from demo.examples import EXAMPLES
from demo.i18n import example_labels
from demo.lab_html import accuracy_text, model_panel
from demo.tabs.api import check_lang, usage
from demo.tabs.checkpoints import facts


class Request:
    def __init__(self, **headers):
        self.headers = headers


def test_api_example_uses_the_address_of_the_request_and_the_loaded_tasks(lab):
    behind_proxy = usage(
        lab, Request(host="10.0.0.5:7860", **{"x-forwarded-host": "me-lab.hf.space", "x-forwarded-proto": "https"})
    )
    assert 'Client("https://me-lab.hf.space/")' in behind_proxy and "127.0.0.1:7860" not in behind_proxy
    assert 'Client("http://localhost:8123/")' in usage(lab, Request(host="localhost:8123"))
    assert f"serves ({', '.join(f'`{t}`' for t in lab.tasks())})" in behind_proxy  # what is loaded, nothing else
    assert "trec" not in lab.tasks() and "trec" not in behind_proxy
    assert "任务" in usage(lab, Request(host="x", **{"accept-language": "zh-CN,zh"}))


def test_a_language_that_contradicts_the_task_is_refused(lab):
    with pytest.raises(gr.Error, match="does not match task sst5"):
        check_lang(lab, "sst5", "zh")
    for task, lang in (("sst5", "en"), ("sst5", "auto"), ("auto", "zh"), ("zh_sentiment", "zh")):
        check_lang(lab, task, lang)


def test_each_prediction_says_its_checkpoint_accuracy_and_sha256(lab, lab_root):
    known = facts(lab)
    assert set(known) == set(lab.checkpoints)
    fact = known[("sst5", "dcnn")]
    assert fact.sha256 == hashlib.sha256((lab_root / "sst5" / "dcnn" / "model.safetensors").read_bytes()).hexdigest()
    prediction = lab.predict("a good film", "dcnn", task="sst5")
    assert accuracy_text(prediction, fact, "en").startswith(f"test accuracy {fact.accuracy:.1%}")
    panel = model_panel(prediction, fact, "zh")
    assert "测试准确率" in panel and f"sha256 {fact.sha256[:16]}" in panel and fact.commit in panel
    assert panel.count("<figure") == len(prediction.views)
    assert len(PAPER_MODELS) == len({m for _, m in known})


def test_examples_are_labelled_in_both_languages():
    en, zh = example_labels("en"), example_labels("zh")
    assert len(en) == len(zh) == len(EXAMPLES)
    assert en[0] == f"negation: {EXAMPLES[0][1]}" and zh[0] == f"否定：{EXAMPLES[0][1]}"
    assert not any(label.startswith("中文") for label in en)


def test_typed_quotes_cannot_leave_an_attribute(lab):
    text = 'good" onmouseover="window.x=1'
    panel = model_panel(lab.predict(text, "dcnn", task="sst5"), None, "en")
    attributes = []
    parser = HTMLParser()
    parser.handle_starttag = lambda tag, attrs: attributes.extend(name for name, _ in attrs)
    parser.feed(panel)
    assert "data-text" in attributes and "onmouseover" not in attributes
