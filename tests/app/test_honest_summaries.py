"""What the Lab says in front of a class must be true: a tie is a tie, the notice about attributions names
the method the highlight shows (and never a scale of 0), and the sentiment classes have one colour mapping
in every figure, which "supports / against" and the models' colours never share."""

import re
from dataclasses import replace

import pytest

from core.predict import OCCLUSION_MAX_WORDS
from core.views import Pyramid, Trajectory
from demo import svg
from demo.charts import probability_bars, word_curves
from demo.i18n import notice_text
from demo.lab_html import attribution_html, result_html
from demo.lab_text import notices_text, summary_text, votes_text
from demo.plots import to_svg

LABELS = ["very negative", "negative", "neutral", "positive", "very positive"]


@pytest.fixture(scope="module")
def prediction(lab):
    return lab.predict("the acting is great but the plot is not good", "tensor_cnn", task="sst5")


def voted(prediction, labels):
    return [replace(prediction, label=label) for label in labels]


def test_a_two_two_one_split_is_a_tie_naming_both_labels(prediction):
    said = votes_text(voted(prediction, ["negative", "positive", "negative", "positive", "neutral"]), "en")
    assert said == "No majority: **negative** and **positive** tie with 2 of 5 models each (votes per label 2-2-1)"
    assert "Majority" not in said
    assert "没有多数" in votes_text(
        voted(prediction, ["negative", "positive", "negative", "positive", "neutral"]), "zh"
    )


def test_a_real_majority_still_says_majority_with_the_votes(prediction):
    said = votes_text(voted(prediction, ["negative", "negative", "positive", "neutral", "negative"]), "en")
    assert said == "Majority label: **negative** (3 of 5 models; votes per label 3-1-1)"
    assert summary_text(voted(prediction, ["neutral", "positive"]), "en").startswith("### No majority: **neutral** and")


def test_one_model_or_all_alike_is_said_without_a_vote_count(prediction):
    assert votes_text(voted(prediction, ["negative"]), "en") == "Label: **negative**"
    assert votes_text(voted(prediction, ["neutral"] * 5), "en") == "Majority label: **neutral** (all 5 models)"
    assert votes_text(voted(prediction, ["neutral"] * 5), "zh") == "多数标签：**中性**（全部 5 个模型）"
    assert "<h2>What the model composed</h2>" in result_html([prediction], {}, "en")
    assert "<h2>What each model composed</h2>" in result_html(voted(prediction, ["neutral"] * 2), {}, "en")


def test_the_notice_on_a_long_text_names_the_chosen_method(lab):
    long_text = " ".join(["good"] * (OCCLUSION_MAX_WORDS + 5))
    p = lab.predict(long_text, "tensor_cnn", task="sst5", methods=["occlusion", "integrated_gradients"])
    en = notices_text([p], [], "en", "integrated_gradients")
    assert "integrated gradients" in en and "leave-one-word-out" not in en
    assert f"up to {OCCLUSION_MAX_WORDS} words; this one has {OCCLUSION_MAX_WORDS + 5}," in en
    assert "积分梯度" in notices_text([p], [], "zh", "integrated_gradients")
    assert r"leave\-one\-word\-out" in notices_text([p], [], "en", "occlusion")  # Markdown-escaped
    assert "integrated gradients" in notice_text(p.notices[-1], "en")  # every method asked for, by name
    highlight = attribution_html(p, "en", "integrated_gradients")
    assert "not computed for this text" in highlight and "scaled to the largest" not in highlight


def test_sentiment_classes_have_one_colour_mapping():
    assert svg.class_colour(0, 5) == svg.RDBU[0] == "#b2182b" and svg.class_colour(4, 5) == svg.RDBU[-1]
    assert [svg.class_colour(i, 2) for i in range(2)] == [svg.RDBU[0], svg.RDBU[-1]]
    bars = probability_bars(LABELS, {"m": [0.1, 0.1, 0.1, 0.6, 0.1]}, "positive", "P")
    for i in range(5):
        assert f'fill="{svg.class_colour(i, 5)}"' in bars
    predicted = re.search(r'<rect [^>]*class="predicted"[^>]*>', bars).group(0)
    assert f'fill="{svg.class_colour(3, 5)}"' in predicted  # positive's own blue, outlined: never red
    assert '<text x="' in bars and 'font-weight="700">positive</text>' in bars


def test_other_schemes_never_reuse_a_sentiment_colour():
    sentiment = {svg.class_colour(i, 5) for i in range(5)} | set(svg.RDBU)
    assert not sentiment & set(svg.SUPPORT.values())
    assert not sentiment & set(svg.PALETTE)
    several = probability_bars(LABELS, {"a": [0.2] * 5, "b": [0.2] * 5}, None, "P")
    assert all(f'fill="{svg.class_colour(i, 5)}"' in several for i in range(5))  # the class swatches


def test_curves_pyramid_and_trajectory_use_the_sentiment_stops(prediction):
    curve = word_curves([prediction.curve], None, "curve", {}, None, "en")
    low, high = prediction.curve.score_range
    ends = [svg.colour(low + step * (high - low), low, high) for step in (0.025, 0.975)]  # the axis strip's ends
    assert all(f'fill="{end}"' in curve for end in ends)
    pyramid = Pyramid(
        "p", ["a", "b"], [[-1.0, 1.0], [0.0]], [[], []], [0.5, 0.5], [[0.5, 0.5], [0.5, 0.5]], "score", (-1.0, 1.0)
    )
    assert svg.RDBU[0] in to_svg(pyramid) and svg.RDBU[-1] in to_svg(pyramid)
    path = to_svg(Trajectory("t", ["a", "b"], [(0.0, 0.0), (1.0, 1.0)], [-1.0, 1.0]))
    assert f'fill="{svg.RDBU[0]}"' in path and f'fill="{svg.RDBU[-1]}"' in path
