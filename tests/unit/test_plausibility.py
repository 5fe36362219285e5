"""Plausibility metrics on hand-made trees whose answers can be worked out by hand."""

import pytest

from core.analysis.plausibility import (
    agreeing_words,
    kendall_tau_b,
    plausibility,
    polarity,
    summarize,
    word_polarities,
)
from core.data.sst import parse_tree

# "not bad at all": the annotators read "bad" as negative, "not bad" and the sentence as positive
NOT_BAD = parse_tree("(3 (3 (2 not) (1 bad)) (2 (2 at) (2 all)))")
# "a dull , lifeless film": negative words inside a negative phrase; the sentence negative
DULL = parse_tree("(1 (2 a) (1 (1 (0 dull) (2 ,)) (1 (1 lifeless) (2 film))))")


def test_polarity_of_fine_and_binary_classes():
    assert [polarity(label) for label in range(5)] == [-1, -1, 0, 1, 1]
    assert [polarity(label, classes=2) for label in range(2)] == [-1, 1]


def test_word_polarities_come_from_the_leaves():
    assert word_polarities(NOT_BAD) == [0, -1, 0, 0]
    assert word_polarities(parse_tree("(3 (4 8 1\\/2) (2 stars))")) == [1, 1, 0]  # a leaf of two words


def test_agreeing_words_are_inside_the_smallest_polar_phrase_of_the_predicted_side():
    assert agreeing_words(NOT_BAD, +1) == {0}  # "not" in "not bad"; "bad" is itself negative, "at all" neutral
    assert agreeing_words(NOT_BAD, -1) == {1}  # "bad" alone; the positive root is left out
    assert agreeing_words(DULL, -1) == {1, 2, 3, 4}  # "," through "dull ,", "film" through "lifeless film"; not "a"
    assert agreeing_words(parse_tree("(4 (4 great))"), +1) == {0}
    assert agreeing_words(parse_tree("(4 great)"), +1) == {0}  # a one-word sentence


def test_kendall_tau_b_known_values():
    assert kendall_tau_b([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # x = (1, 2, 3, 4), y = (0, 0, 1, 1): 4 concordant pairs, 0 discordant, 2 pairs tied in y, none in x
    assert kendall_tau_b([1, 2, 3, 4], [0, 0, 1, 1]) == pytest.approx(4 / (6 * 4) ** 0.5)
    assert kendall_tau_b([1, 1, 1], [1, 2, 3]) is None


def test_a_method_that_ranks_the_gold_reading_first_agrees():
    # predicted positive (4 of 5): "not" is neutral, "bad" opposes the prediction, "at", "all" neutral
    p = plausibility(NOT_BAD, [0.5, -0.4, 0.1, 0.0], predicted=4)
    # gold oriented (0, -1, 0, 0): every pair with "bad" is concordant (3), the 3 neutral pairs tie in gold
    assert p.rank_agreement == pytest.approx(3 / (6 * 3) ** 0.5)
    assert p.precision == pytest.approx(1 / 3)  # top 3: not, at, all; only "not" lies in "not bad"
    assert p.chance == pytest.approx(1 / 4)


def test_the_sign_flips_for_a_negative_prediction():
    scores = [0.0, 0.6, 0.1, 0.5, 0.2]  # "dull" and "lifeless" first
    negative = plausibility(DULL, scores, predicted=1)
    assert negative.rank_agreement > 0.5 and negative.precision == 1.0 and negative.chance == pytest.approx(4 / 5)
    positive = plausibility(DULL, scores, predicted=3)  # the same scores explaining "positive" disagree
    assert positive.rank_agreement == pytest.approx(-negative.rank_agreement)
    assert positive.precision == 0.0 and positive.chance == 0.0


def test_binary_classes_and_a_neutral_prediction():
    assert plausibility(DULL, [0.0, 0.6, 0.1, 0.5, 0.2], predicted=0, classes=2).precision == 1.0
    neutral = plausibility(DULL, [0.0, 0.6, 0.1, 0.5, 0.2], predicted=2)
    assert neutral.rank_agreement is None and neutral.precision is None


def test_wrong_length_is_refused():
    with pytest.raises(ValueError):
        plausibility(DULL, [0.1, 0.2], predicted=1)


def test_summary_means_over_the_sentences_that_have_a_score():
    found = [
        plausibility(DULL, [0.0, 0.6, 0.1, 0.5, 0.2], predicted=1),
        plausibility(DULL, [0.0] * 5, predicted=2),
        plausibility(NOT_BAD, [0.5, -0.4, 0.1, 0.0], predicted=4),
    ]
    summary = summarize(found)
    assert summary["precision_sentences"] == 2 and summary["rank_sentences"] == 2
    assert summary["precision"] == pytest.approx((1.0 + 1 / 3) / 2)
    assert summary["chance"] == pytest.approx((4 / 5 + 1 / 4) / 2)
