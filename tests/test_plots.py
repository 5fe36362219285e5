"""demo/plots.py: every view type draws, with an explicit height, words escaped and kept in order."""

import dataclasses
import inspect
import json

import gradio as gr
import plotly.graph_objects as go
import pytest

from core import views
from demo.plots import esc, grouped_probability_bars, probability_bars, to_figure, word_curves

WORDS = ["it", "is", "not", "<b>bad</b>", "is", "it"]  # repeated words and markup on purpose


def _curve(kind="native"):
    probs = [[0.1, 0.2, 0.4, 0.2, 0.1]] * len(WORDS)
    scores, label, score_range = views.sentiment_scores(probs)
    return views.WordCurve(kind, WORDS, scores, probs, label, score_range, "per word")


EXAMPLES = {
    views.WordCurve: _curve(),
    views.LineCurves: views.LineCurves("layers", WORDS, {"layer 1": [0.1] * 6, "layer 2": [0.3] * 6}, "score", y_range=(-2, 2)),
    views.Trajectory: views.Trajectory("path", WORDS, [(float(i), float(-i)) for i in range(6)], [0.1 * i for i in range(6)], "PCA"),
    views.Heatmap: views.Heatmap("attention", WORDS, ["L1", "L2", "L3"], [[0.5] * 6] * 3, "weight", (0.0, 1.0)),
    views.KMaxGraph: views.KMaxGraph("graph", WORDS, [list(range(6)), [1, 4, 6], [2, 5]], [[0.0] * 6, [0.1, 0.2, 0.3], [0.4, 0.5]],
                                     [[[2, 1, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 3]], [[1, 1, 0], [0, 0, 2]]]),
    views.Pyramid: views.Pyramid("pyramid", WORDS[:4], [[0.1, 0.2, 0.3, 0.4], [0.4, 0.5, 0.6], [0.6, 0.7], [0.8]],
                                 [[], [(0.2, 0.3, 0.5), (0.1, 0.1, 0.8), (0.3, 0.3, 0.4)], [(0.3, 0.3, 0.4)] * 2,
                                  [(0.5, 0.25, 0.25)]], [0.1, 0.2, 0.3, 0.4],
                                 [[0.5, 0.5], [0.4, 0.6], [0.3, 0.7], [0.2, 0.8]], "P(positive)", (0.0, 1.0)),
    views.Table: views.Table("selected", ["layer", "words"], [["L1", "<script>x</script>"], ["L2", "not bad"]]),
}


def _text(fig: go.Figure) -> str:
    return json.dumps(json.loads(fig.to_json()), ensure_ascii=False)  # without plotly's \u002f escapes


def _view_classes():
    return [c for _, c in inspect.getmembers(views, inspect.isclass)
            if dataclasses.is_dataclass(c) and c.__module__ == views.__name__]


def test_every_view_type_has_a_plot():
    default = to_figure.dispatch(object)
    missing = [c.__name__ for c in _view_classes() if to_figure.dispatch(c) is default]
    assert not missing, f"no plot function for {missing}"
    assert set(_view_classes()) <= set(EXAMPLES), "add an example view to EXAMPLES"


@pytest.mark.parametrize("view", EXAMPLES.values(), ids=lambda v: type(v).__name__)
def test_figure_has_height_and_serialises(view):
    fig = to_figure(view)
    assert isinstance(fig, go.Figure)
    assert fig.layout.height and fig.layout.height >= 150  # explicit: Gradio may draw autosize at zero height
    json.loads(fig.to_json())
    assert gr.Plot().postprocess(fig) is not None  # what Gradio sends to the browser


@pytest.mark.parametrize("view", [v for v in EXAMPLES.values() if hasattr(v, "words") or hasattr(v, "x_labels")],
                         ids=lambda v: type(v).__name__)
def test_words_are_escaped_and_repeated_words_kept(view):
    fig = to_figure(view)
    text = _text(fig)
    assert "<b>bad</b>" not in text and "&lt;b&gt;bad&lt;/b&gt;" in text
    axis = fig.layout.xaxis
    if axis.ticktext is not None and not isinstance(view, views.Pyramid):
        assert list(axis.ticktext) == [esc(w) for w in getattr(view, "words", None) or view.x_labels]
        assert len(set(axis.tickvals)) == len(axis.tickvals)


def test_table_cells_are_escaped():
    fig = to_figure(EXAMPLES[views.Table])
    assert "&lt;script&gt;x&lt;/script&gt;" in _text(fig) and "<script>" not in _text(fig)


def test_word_curve_title_says_what_kind_of_curve_it_is():
    for kind in ("native", "probe", "prefix"):
        assert to_figure(_curve(kind)).layout.title.text.startswith(f"{kind}: ")
    labels = {"native": "own output", "prefix": "prefix prediction"}
    fig = word_curves([_curve("native"), _curve("prefix")], ["A", "B"], title="overlay", kind_labels=labels)
    assert [t.name for t in fig.data] == ["A (own output)", "B (prefix prediction)"]
    assert fig.layout.showlegend and fig.layout.yaxis.range[0] < -2 < 2 < fig.layout.yaxis.range[1]


def test_kmax_graph_layout():
    view = EXAMPLES[views.KMaxGraph]
    fig = to_figure(view)
    nodes = fig.data[-1]
    assert len(nodes.x) == sum(len(level) for level in view.levels)
    assert sorted(set(nodes.y)) == [0, 1, 2]  # words at the bottom, layers upward
    # a kept node sits over the mean position of its children: level 1 position 1 -> words 0 and 1
    assert nodes.x[6] == pytest.approx(0.5)
    assert list(fig.layout.yaxis.ticktext) == ["words", "layer 1 (k-max)", "layer 2 (k-max)"]


def test_pyramid_is_a_triangle_with_beliefs():
    view = EXAMPLES[views.Pyramid]
    fig = to_figure(view)
    heat, beliefs = fig.data
    filled = [sum(v is not None for v in row) for row in heat.z]
    assert filled == [8, 6, 4, 2]  # level t: n - t + 1 units, two cells each
    assert "compose 0.50" in heat.text[1][1]  # gate weights on hover
    assert list(beliefs.x) == view.level_beliefs


def test_probability_bars_mark_the_label():
    fig = probability_bars(["neg", "pos"], [0.3, 0.7], "pos")
    assert list(fig.data[0].y) == [0.3, 0.7] and fig.data[0].marker.color[1] != fig.data[0].marker.color[0]
    grouped = grouped_probability_bars(["neg", "pos"], {"a": [0.3, 0.7], "b": [0.6, 0.4]})
    assert [t.name for t in grouped.data] == ["a", "b"] and grouped.layout.height


def test_unknown_view_type_is_an_error():
    with pytest.raises(TypeError):
        to_figure(object())
