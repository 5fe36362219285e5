"""Minimal pairs (core/analysis/pairs.py, demo/tabs/pairs.py): the alignment puts shared words at one position and
inserted or removed words alone, the difference is the two predictions' difference, the Lab's pair callback
draws one figure per model, and a probe failure opens in the Lab tab with both its sentences."""

import re

import pytest

from core.analysis.pairs import PairInputError, align_words, compare_pair
from core.models import PAPER_MODELS
from core.views import sentiment_scores

A, B = "The film is good.", "The film is not good at all."


def test_shared_words_share_a_position_and_inserted_words_stand_alone():
    alignment = align_words(["the", "film", "is", "good", "."], ["the", "film", "is", "not", "good", "at", "all", "."])
    assert alignment.columns == [(0, 0), (1, 1), (2, 2), (None, 3), (3, 4), (None, 5), (None, 6), (4, 7)]
    assert alignment.positions("a") == [0, 1, 2, 4, 7] and alignment.positions("b") == list(range(8))
    assert alignment.labels() == ["the", "film", "is", "not", "good", "at", "all", "."]


def test_a_replaced_word_is_removed_and_inserted():
    alignment = align_words(["john", "loved", "it"], ["mary", "loved", "it"])
    assert alignment.columns == [(0, None), (None, 0), (1, 1), (2, 2)]
    assert alignment.labels() == ["john", "mary", "loved", "it"]


@pytest.mark.parametrize(
    "words_a, words_b",
    [
        ([], ["a"]),
        (["a", "b", "a"], ["a", "a", "b"]),
        (["x"] * 3, ["x"] * 5),
        (["good", "not", "bad"], ["bad", "not", "good"]),
    ],
)
def test_every_word_appears_once_in_order_and_the_alignment_is_deterministic(words_a, words_b):
    alignment = align_words(words_a, words_b)
    assert alignment == align_words(list(words_a), list(words_b))
    for side, words in ((0, words_a), (1, words_b)):
        assert [column[side] for column in alignment.columns if column[side] is not None] == list(range(len(words)))
    for i, j in alignment.columns:  # a shared position holds the same word on both sides
        assert i is None or j is None or words_a[i] == words_b[j]
    assert all(column != (None, None) for column in alignment.columns)


def test_the_difference_is_that_of_the_two_predictions(lab):
    comparison = compare_pair(lab, A, B)
    assert comparison.task == "sst5" and [p.model for p in comparison.pairs] == lab.models("sst5")
    for pair in comparison.pairs:
        one_a, one_b = lab.predict(A, pair.model), lab.predict(B, pair.model)
        (score_a, score_b), *_ = sentiment_scores([one_a.probs, one_b.probs], one_a.labels)
        assert (pair.a.label, pair.b.label) == (one_a.label, one_b.label)
        assert pair.score_a == pytest.approx(score_a) and pair.score_b == pytest.approx(score_b)
        assert pair.difference == pytest.approx(score_b - score_a) and pair.difference != 0
        assert pair.a.curve.words == comparison.alignment.words_a and pair.b.curve.words == comparison.alignment.words_b
    assert comparison.alignment.labels() == ["the", "film", "is", "not", "good", "at", "all", "."]


def test_sentence_b_goes_to_sentence_as_task_and_bad_input_names_its_sentence(lab):
    mixed = compare_pair(lab, "这个手机很好", "a good phone", models=["dcnn"])  # B follows A's task
    assert mixed.task == "zh_sentiment" and mixed.pairs[0].b.task == "zh_sentiment"
    assert any(n.code == "language_mismatch" for n in mixed.pairs[0].b.notices)
    for a, b, sentence in (("  ", B, "a"), (A, "", "b")):
        with pytest.raises(PairInputError) as info:
            compare_pair(lab, a, b)
        assert info.value.sentence == sentence and info.value.notice.code == "empty"


def test_a_model_that_breaks_on_one_sentence_is_reported(lab_root, monkeypatch):
    from core.predict import Lab

    lab = Lab.load(lab_root)
    net = lab.checkpoints[("sst5", "agt")].model
    forward = net.forward
    monkeypatch.setattr(net, "forward", lambda ids, *a, **k: 1 / 0 if ids.shape[1] > 6 else forward(ids, *a, **k))
    comparison = compare_pair(lab, "a good film", B)  # B has 8 tokens: the AGT breaks on it only
    assert [f.model for f in comparison.failures] == ["agt"] and "agt" not in [p.model for p in comparison.pairs]


# -- the Lab tab's pair and the Probes tab's failures ------------------------------------------------------


def test_one_models_pair_says_which_way_its_score_went_without_a_count(lab):
    from demo.tabs.checkpoints import facts
    from demo.tabs.pairs import analyse_pair

    summary, _table, figures = analyse_pair(lab, facts(lab), A, B, "dcnn", "auto", "auto", "en")
    assert figures.count("<figure") == 1
    assert re.search(r"^### A → B: .+ (rises|falls|stays the same) for DCNN", summary), summary
    assert " of 1 models" not in summary


def test_the_pair_callback_returns_a_figure_per_model(lab):
    from demo.tabs.checkpoints import facts
    from demo.tabs.pairs import analyse_pair

    known = facts(lab)
    summary, table, figures = analyse_pair(lab, known, A, B, "all", "auto", "auto", "en")
    assert (
        figures.count("<figure") == len(PAPER_MODELS) and table["visible"] and len(table["value"]) == len(PAPER_MODELS)
    )
    assert list(table["value"].columns)[1] == "B − A" and "rises for" in summary  # beside the model
    figure = figures.split("</figure>")[0]
    a_points, b_points = [len(p.split()) for p in re.findall(r'<polyline points="([^"]+)"', figure)]
    assert (a_points, b_points) == (5, 8)  # A's words sit at aligned positions 0, 1, 2, 4, 7 of B's 8
    ticks = re.findall(r'fill="(#[0-9a-f]+)"[^>]*>([^<]+)</text>', figure.split("</polyline>")[-1])
    assert ("#333", "good") in ticks and any(
        w == "not" and c != "#333" for c, w in ticks
    )  # inserted words in B's colour
    summary, table, figures = analyse_pair(lab, known, "这个手机很好", "这个手机很差", "dcnn", "auto", "auto", "zh")
    assert figures.count("<figure") == 1 and "个模型中" not in summary and list(table["value"].columns)[2] == "A 的标签"
    summary, *_ = analyse_pair(lab, known, "这个手机很好", "a good phone", "dcnn", "auto", "auto", "en")
    assert "B: The text looks English but task zh\\_sentiment is Chinese" in summary  # each notice says its sentence


@pytest.mark.filterwarnings("ignore::UserWarning")  # gr.Warning outside a request warns
def test_bad_pair_input_names_the_sentence(lab):
    from demo.tabs.checkpoints import facts
    from demo.tabs.pairs import analyse_pair

    summary, table, figures = analyse_pair(lab, facts(lab), A, "   ", "all", "auto", "auto", "zh")
    assert "句子 B" in summary and "文本为空" in summary and figures == "" and not table["visible"]


def test_a_probe_failure_opens_in_the_lab_with_both_sentences(lab):
    import gradio as gr

    from core.analysis.probes import run_suite
    from demo.tabs.probes import cell_at, failure_choices, open_failure

    report = run_suite(lab, "en")
    capability, model = next(
        (c, m)
        for c, row in report.cells.items()
        for m, cell in row.items()
        if any(f.case.variant for f in cell.failures)
    )
    choices = failure_choices(report, capability, model)["choices"]
    index = next(i for i, f in enumerate(report.cells[capability][model].failures) if f.case.variant)
    case = report.cells[capability][model].failures[index].case
    assert choices[index] == (f"{index + 1}. {case.text} → {case.variant}", index)
    opened = open_failure(report, capability, model, index, "en")
    assert (opened.text, opened.b, opened.task, opened.model) == (case.text, case.variant, "sst5", model)
    single = next(
        f.case for row in report.cells.values() for cell in row.values() for f in cell.failures if not f.case.variant
    )
    capability, model = (
        single.capability,
        next(m for m, cell in report.cells[single.capability].items() if single in [f.case for f in cell.failures]),
    )
    index = [f.case for f in report.cells[capability][model].failures].index(single)
    assert open_failure(report, capability, model, index, "en").b == ""
    with pytest.raises(gr.Error):
        open_failure(None, capability, model, 0, "en")
    assert cell_at(report, 1, 2, None) == (list(report.cells)[1], report.models[1])
