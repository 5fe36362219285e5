"""What a projector shows without hovering: AdaSent's local gates drawn on each unit of the pyramid (a bar split
in the three weights, with a legend in the UI language), and a scale on every bar chart (the level beliefs γ_t,
the class probabilities). The figure is the exported file too, so the SVG holding them is what is checked."""

import re
import xml.etree.ElementTree as ET

import pytest
from test_figure_legibility import assert_complete

from core.views import Pyramid
from demo.charts import probability_bars
from demo.i18n import t
from demo.plots import GATE_COLOURS, to_svg

SVG = "{http://www.w3.org/2000/svg}"
GATES = [
    [],  # level 1: words, no gates
    [(0.2, 0.3, 0.5), (0.1, 0.1, 0.8), (0.6, 0.3, 0.1)],
    [(0.3, 0.3, 0.4), (0.05, 0.9, 0.05)],
    [(0.5, 0.25, 0.25)],
]


def pyramid(gates=GATES) -> Pyramid:
    return Pyramid(
        "pyramid",
        ["it", "is", "not", "bad"],
        [[0.1, 0.2, 0.3, 0.4], [0.4, 0.5, 0.6], [0.6, 0.7], [0.8]],
        gates,
        [0.1, 0.6, 0.25, 0.05],
        [[0.5, 0.5], [0.4, 0.6], [0.3, 0.7], [0.2, 0.8]],
        "P(positive)",
        (0.0, 1.0),
    )


def parse(figure: str) -> ET.Element:
    return ET.fromstring(re.search(r"<svg xmlns=.*</svg>", figure, re.S)[0])


def texts(element: ET.Element) -> list[str]:
    return [e.text or "" for e in element.iter(f"{SVG}text")]


def gate_bars(figure: ET.Element) -> list[list[float]]:
    """The widths of each unit's gate segments, in drawing order (three per unit)."""
    widths = [float(r.get("width")) for r in figure.iter(f"{SVG}rect") if r.get("class") == "gate"]
    return [widths[i : i + 3] for i in range(0, len(widths), 3)]


@pytest.mark.parametrize("ui", ["en", "zh"])
def test_every_unit_above_the_words_shows_its_three_gates_in_proportion(ui):
    figure = parse(to_svg(pyramid(), ui))
    bars = gate_bars(figure)
    drawn = [gates for level in GATES for gates in level]
    assert len(bars) == len(drawn) == 3 + 2 + 1
    for widths, gates in zip(bars, drawn):
        assert [w / sum(widths) for w in widths] == pytest.approx(gates, abs=0.02)
    fills = [r.get("fill") for r in figure.iter(f"{SVG}rect") if r.get("class") == "gate"]
    assert fills == list(GATE_COLOURS) * len(drawn)


@pytest.mark.parametrize("ui", ["en", "zh"])
def test_the_gates_have_a_legend_in_the_ui_language(ui):
    legend = next(g for g in parse(to_svg(pyramid(), ui)).iter(f"{SVG}g") if g.get("class") == "legend")
    names = [t(f"pyramid_gate_{part}", ui) for part in ("left", "right", "compose")]
    assert texts(legend) == [t("pyramid_gate_title", ui), *names]
    assert [r.get("fill") for r in legend.iter(f"{SVG}rect")] == list(GATE_COLOURS)


def test_a_pyramid_sent_without_gates_draws_none_and_no_legend():
    figure = parse(to_svg(pyramid([[] for _ in GATES])))
    assert gate_bars(figure) == []
    assert not any(g.get("class") == "legend" for g in figure.iter(f"{SVG}g"))


def test_the_level_beliefs_have_a_scale_and_their_values():
    figure = parse(to_svg(pyramid()))
    scale = next(g for g in figure.iter(f"{SVG}g") if g.get("class") == "belief-scale")
    assert texts(scale) == ["0", "0.5", "1"]
    ticks = {e.text: float(e.get("x")) for e in scale.iter(f"{SVG}text")}
    bars = [r for r in figure.iter(f"{SVG}rect") if "γ = " in (r.findtext(f"{SVG}title") or "")]
    for bar, belief in zip(bars, [0.1, 0.6, 0.25, 0.05]):
        assert float(bar.get("x")) == ticks["0"]  # each bar starts at the scale's 0 and runs to its value
        assert float(bar.get("width")) == pytest.approx(belief * (ticks["1"] - ticks["0"]), abs=0.2)
    assert {"0.10", "0.60", "0.25", "0.05"} <= set(texts(figure))


def test_the_class_probability_bars_stand_on_an_axis_from_0_to_1():
    for rows in ({"DCNN": [0.3, 0.7]}, {"DCNN": [0.3, 0.7], "AGT": [0.6, 0.4]}):
        labels = texts(parse(probability_bars(["negative", "positive"], rows, "positive", "P(class)")))
        assert {"0", "0.2", "1", "P"} <= set(labels)  # ticks every 0.2, the axis named


@pytest.mark.parametrize("ui", ["en", "zh"])
def test_the_legend_and_the_scale_stay_inside_the_figure(ui):
    two_words = Pyramid("p", ["not", "bad"], [[0.2, 0.3], [0.6]], [[], [(0.2, 0.3, 0.5)]], [0.4, 0.6], [[0.5, 0.5]] * 2)
    for view in (two_words, pyramid()):
        assert_complete(to_svg(view, ui, "AdaSent (Zhao et al. 2015) · checkpoint sha256 0123456789abcdef"))
