"""The views' words as codes (issue 20): every string a model's view shows is a core.views.Text (a code of
VIEW_TEXT and its parameters) that reads as English, and demo/i18n.py words each code in Chinese from the code,
its parameters included, never by parsing the English."""

import copy
import json

import orjson
import pytest

from core.models import PAPER_MODELS
from core.views import Text, sentiment_scores
from demo.i18n import view_text, word_view

TEXTS = {"sst5": "it is not a bad film , but the plot is dull", "zh_sentiment": "这部电影不怎么好看，但是演员很棒"}
FIELDS = ("title", "score_label", "y_label", "x_title", "value_label", "axis_note")


def test_a_text_is_its_english_wording_and_keeps_its_code_through_copies_and_json():
    text = Text("dcnn_graph_map", map=3)
    assert text == "Induced feature graph (§4.2), top-layer map 3" and isinstance(text, str)
    assert (text.code, text.params) == ("dcnn_graph_map", {"map": 3})
    copied = copy.deepcopy(text)  # the same __reduce_ex__ that pickling would use (no pickle in this project)
    assert copied == text and (copied.code, copied.params) == (text.code, text.params)
    assert json.loads(json.dumps({"title": text})) == {"title": str(text)}  # the JSON API reads English
    with pytest.raises(KeyError):
        Text("no_such_code")


def test_chinese_words_come_from_the_code_with_class_names_and_nested_texts_worded():
    _, label, _ = sentiment_scores([[0.3, 0.7]], ["negative", "positive"])
    assert label == "P(positive)" and view_text(label, "zh") == "P(正面)" and view_text(label, "en") == "P(positive)"
    note = Text("mrnn_pca", pc1=0.5, pc2=0.25, score=label)
    assert "50%" in note and "25%" in note and "colour = P(positive) after each word" in note
    worded = view_text(note, "zh")
    assert "50%" in worded and "每个词之后的P(正面)" in worded
    assert view_text("L1", "zh") == "L1" and view_text(None, "zh") is None  # not a Text: as it is


@pytest.mark.parametrize("task", sorted(TEXTS))
def test_every_string_a_model_view_shows_is_a_code(lab, task):
    for model in PAPER_MODELS:
        prediction = lab.predict(TEXTS[task], model, task=task)
        for view in [prediction.curve, *prediction.views]:
            shown = [getattr(view, f) for f in FIELDS if getattr(view, f, "")]
            shown += list(getattr(view, "curves", {})) + list(getattr(view, "columns", []))
            assert shown and all(isinstance(s, Text) for s in shown), (model, type(view).__name__, shown)
            chinese = word_view(view, "zh")
            assert all(
                isinstance(getattr(chinese, f), str) and not isinstance(getattr(chinese, f), Text)
                for f in FIELDS
                if getattr(view, f, "")
            )
        orjson.dumps(prediction.to_dict())  # as Gradio's API sends it (orjson takes no str subclass as a dict key)
