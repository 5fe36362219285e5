"""demo/plots.py: every view type draws as one SVG figure, words escaped and kept in order, with its export
buttons and caption; the Chinese UI words every view the models send (demo.i18n.word_view)."""

import dataclasses
import inspect
import re
import xml.etree.ElementTree as ET

import pytest

from core import views
from core.models import PAPER_MODELS
from demo.charts import probability_bars, word_curves
from demo.i18n import word_view
from demo.plots import EDGES_PER_NODE, to_svg

WORDS = ["it", "is", "not", "<b>bad</b>", "is", "it"]  # repeated words and markup on purpose
SVG = "{http://www.w3.org/2000/svg}"


def _curve(kind="native"):
    probs = [[0.1, 0.2, 0.4, 0.2, 0.1]] * len(WORDS)
    scores, label, score_range = views.sentiment_scores(probs)
    return views.WordCurve(kind, WORDS, scores, probs, label, score_range, "per word")


EXAMPLES = {
    views.WordCurve: _curve(),
    views.LineCurves: views.LineCurves(
        "layers", WORDS, {"layer 1": [0.1] * 6, "layer 2": [0.3] * 6}, "score", y_range=(-2, 2)
    ),
    views.Trajectory: views.Trajectory(
        "path", WORDS, [(float(i), float(-i)) for i in range(6)], [0.1 * i for i in range(6)], "PCA"
    ),
    views.Heatmap: views.Heatmap("attention", WORDS, ["L1", "L2", "L3"], [[0.5] * 6] * 3, "weight", (0.0, 1.0)),
    views.KMaxGraph: views.KMaxGraph(
        "graph",
        WORDS,
        [list(range(6)), [1, 4, 6], [2, 5]],
        [[0.0] * 6, [0.1, 0.2, 0.3], [0.4, 0.5]],
        [[[2, 1, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0], [1, 1, 1, 1, 1, 3]], [[1, 1, 0], [0, 0, 2]]],
    ),
    views.Pyramid: views.Pyramid(
        "pyramid",
        WORDS[:4],
        [[0.1, 0.2, 0.3, 0.4], [0.4, 0.5, 0.6], [0.6, 0.7], [0.8]],
        [[], [(0.2, 0.3, 0.5), (0.1, 0.1, 0.8), (0.3, 0.3, 0.4)], [(0.3, 0.3, 0.4)] * 2, [(0.5, 0.25, 0.25)]],
        [0.1, 0.2, 0.3, 0.4],
        [[0.5, 0.5], [0.4, 0.6], [0.3, 0.7], [0.2, 0.8]],
        "P(positive)",
        (0.0, 1.0),
    ),
    views.Table: views.Table(
        "selected", ["layer", "words"], [[f"L{i}", "<script>x</script> " * (i % 3)] for i in range(1, 16)]
    ),
}


def _svg(figure: str) -> ET.Element:
    """The figure's SVG, parsed as XML: a stray '<' or '&' from a word would make this fail."""
    return ET.fromstring(re.search(r"<svg xmlns=.*</svg>", figure, re.S)[0])


def _texts(figure: str) -> list[str]:
    return [t.text or "" for t in _svg(figure).iter(f"{SVG}text")]


def _view_classes():
    return [
        c
        for _, c in inspect.getmembers(views, inspect.isclass)
        if dataclasses.is_dataclass(c) and c.__module__ == views.__name__
    ]


def test_every_view_type_has_a_plot():
    default = to_svg.dispatch(object)
    missing = [c.__name__ for c in _view_classes() if to_svg.dispatch(c) is default]
    assert not missing, f"no plot function for {missing}"
    assert set(_view_classes()) <= set(EXAMPLES), "add an example view to EXAMPLES"


@pytest.mark.parametrize("view", EXAMPLES.values(), ids=lambda v: type(v).__name__)
def test_figure_is_valid_svg_with_size_caption_and_export_buttons(view):
    figure = to_svg(view, "en", "DCNN · checkpoint sha256 abc · commit 1234567", "dcnn-1")
    svg = _svg(figure)
    assert float(svg.get("width")) >= 300 and float(svg.get("height")) >= 100
    assert "DCNN · checkpoint sha256 abc · commit 1234567" in _texts(figure)  # the caption is part of the export
    assert 'data-name="dcnn-1"' in figure and 'data-export="svg"' in figure and 'data-export="png"' in figure


@pytest.mark.parametrize(
    "view",
    [v for v in EXAMPLES.values() if hasattr(v, "words") or hasattr(v, "x_labels")],
    ids=lambda v: type(v).__name__,
)
def test_words_are_escaped_and_repeated_words_kept_in_order(view):
    figure = to_svg(view)
    assert "<b>bad</b>" not in figure and "&lt;b&gt;bad&lt;/b&gt;" in figure
    words = getattr(view, "words", None) or view.x_labels
    if isinstance(view, views.Trajectory):  # each point is labelled with its step
        words = [f"{i}. {w}" for i, w in enumerate(words, start=1)]
    texts = _texts(figure)
    start = texts.index(words[0])
    assert texts[start : start + len(words)] == words  # each word once, in order, repeats included


def test_table_shows_every_row_escaped():
    figure = to_svg(EXAMPLES[views.Table])
    texts = _texts(figure)
    assert [t for t in texts if re.fullmatch(r"L\d+", t)] == [f"L{i}" for i in range(1, 16)]  # all 15 layers
    assert "<script>" not in figure and "&lt;script&gt;x&lt;/script&gt;" in figure


def test_word_curves_say_what_kind_of_curve_each_is():
    labels = {"native": "own output", "prefix": "prefix prediction"}
    figure = word_curves([_curve("native"), _curve("prefix")], ["A", "B"], "overlay", labels, None, "en")
    texts = _texts(figure)
    assert "A (own output)" in texts and "B (prefix prediction)" in texts
    lines = list(_svg(figure).iter(f"{SVG}polyline"))
    assert len(lines) == 2 and lines[0].get("stroke-dasharray") is None and lines[1].get("stroke-dasharray")


def test_kmax_graph_shows_the_strongest_edges_and_keeps_the_rest_for_its_checkbox():
    view = EXAMPLES[views.KMaxGraph]
    figure = to_svg(view, "en", "", "dcnn-1")
    svg = _svg(figure)
    strong, nodes = svg.iter(f"{SVG}g")  # the edges, then the nodes (their outline once, on their group)
    weak = ET.fromstring(re.search(r'<template class="weak-edges">(.*)</template>', figure, re.S)[1]).find("g")
    assert strong.get("class") == "strong-edges" and weak.get("class") == "weak-edges"
    # an edge is a move and a line in its width's one <path> (a <line> each made the DCNN's result 30% larger)
    for group in (strong, weak):
        assert [p.tag.removeprefix(SVG) for p in group] == ["path"] * len({p.get("stroke-width") for p in group})
    strong_edges, weak_edges = (sum(p.get("d").count("M") for p in group) for group in (strong, weak))
    assert strong_edges + weak_edges == len(view.edges())
    assert weak_edges == 6 - EDGES_PER_NODE  # the parent with 6 children keeps its 3 strongest
    assert 'class="all-edges"' in figure and f"show all {len(view.edges())} edges" in figure
    circles = list(svg.iter(f"{SVG}circle"))
    assert len(circles) == sum(len(level) for level in view.levels) == len(nodes) and nodes.get("stroke")
    assert [t for t in _texts(figure) if t.startswith(("words", "layer"))] == [
        "words",
        "layer 1 (k-max)",
        "layer 2 (k-max)",
    ]


def test_pyramid_is_a_triangle_with_gates_and_beliefs():
    view = EXAMPLES[views.Pyramid]
    figure = to_svg(view)
    cells = [
        r
        for r in _svg(figure).iter(f"{SVG}rect")
        if r.find(f"{SVG}title") is not None and "level" in r.find(f"{SVG}title").text
    ]
    units = [c for c in cells if ":" in c.find(f"{SVG}title").text and "γ" not in c.find(f"{SVG}title").text]
    assert len(units) == 4 + 3 + 2 + 1  # level t: n - t + 1 units
    xs = {float(c.get("x")) for c in units}
    assert len(xs) == 4 + 3  # level t starts half a cell further in: 4 positions, then 3 half-way between them
    assert any("compose 0.50" in c.find(f"{SVG}title").text for c in units)  # gate weights on hover
    assert sum("γ = " in c.find(f"{SVG}title").text for c in cells) == 4


def test_probability_bars_mark_the_label():
    figure = probability_bars(["neg", "pos"], {"model": [0.3, 0.7]}, "pos", "P")
    bars = [r for r in _svg(figure).iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    assert len(bars) == 2 and bars[0].get("fill") != bars[1].get("fill")
    grouped = probability_bars(["neg", "pos"], {"a": [0.3, 0.7], "b": [0.6, 0.4]}, None, "P")
    assert sum(1 for r in _svg(grouped).iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None) == 4


def test_unknown_view_type_is_an_error():
    with pytest.raises(TypeError):
        to_svg(object())


def test_every_string_the_models_send_has_chinese_words(lab):
    """Each view of each model (tiny checkpoints, both tasks) in the Chinese UI: no title, axis name, legend or
    column head is left in English (a word of three or more Latin letters, past names and symbols)."""
    allowed = {"AdaSent", "mRNN", "Lei", "sigmoid", "max", "min", "svd", "gram"}
    for task, text in (
        ("sst5", "it is not a bad film , but the plot is dull"),
        ("zh_sentiment", "这部电影不怎么好看，但是演员很棒"),
    ):
        for model in PAPER_MODELS:
            prediction = lab.predict(text, model, task=task)
            for view in [prediction.curve, *prediction.views]:
                worded = word_view(view, "zh")
                strings = [
                    getattr(worded, f)
                    for f in ("title", "score_label", "y_label", "value_label", "axis_note")
                    if isinstance(getattr(worded, f, None), str)
                ]
                strings += list(getattr(worded, "curves", {})) + list(getattr(worded, "columns", []))
                english = {w for s in strings for w in re.findall(r"[A-Za-z]{3,}", s)} - allowed
                assert not english, f"{model} {type(view).__name__}: {english} in {strings}"
