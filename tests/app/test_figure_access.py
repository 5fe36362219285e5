"""Every figure reaches a student who cannot see it, or cannot tell its colours apart (WCAG 2.1 AA):

- each drawing is named (its title and what it shows, in the page's language) and carries its numbers as a table
  under "Show as a table", the same numbers it draws;
- a series is told apart by its marker as well as its colour, and the model colours stay apart under the common
  colour-vision deficiencies (Machado et al. 2009's simulation, CIEDE2000 distances);
- text on a colour (a highlighted word, a tree node's symbol, a confusion count) and the page's theme colours
  reach 4.5:1 (WCAG 1.4.3), the model colours 3:1 on white (1.4.11: graphical objects)."""

import itertools
import math
import re
import xml.etree.ElementTree as ET

import pytest
from test_plots import EXAMPLES, WORDS
from test_treebank_tree_svg import LABELS, view

from core import views
from demo import svg
from demo.charts import probability_bars, word_curves
from demo.i18n import t
from demo.plots import to_svg
from demo.treebank_plots import confusion_figure, length_figure, tree_figure

SVG = "{http://www.w3.org/2000/svg}"
CHINESE = re.compile("[\u4e00-\u9fff]")


def parts(figure: str) -> tuple[ET.Element, str, list[str], list[list[str]]]:
    """A figure's drawing, its table's caption, column heads and rows (each row's cells as shown)."""
    drawing = ET.fromstring(re.search(r"<svg .*</svg>", figure, re.S).group(0))
    data = re.search(r'<details class="figure-data">.*</details>', figure, re.S)
    assert data, "no table beside the figure"
    table = ET.fromstring(data.group(0)).find("table")
    heads = [th.text or "" for th in table.findall("thead/tr/th")]
    rows = [[cell.text or "" for cell in tr] for tr in table.findall("tbody/tr")]
    return drawing, table.find("caption").text or "", heads, rows


# every kind of figure, drawn in a language: (what it is, its HTML, its table's rows, a number it draws as shown)
def drawn(ui: str) -> dict[str, tuple[str, int, str]]:
    curves = [EXAMPLES[views.WordCurve]] * 5
    buckets = [{"bucket": "1-10", "n": 12, "accuracy": 0.625}, {"bucket": "11-20", "n": 7, "accuracy": None}]
    return {
        "word curve": (to_svg(EXAMPLES[views.WordCurve], ui), len(WORDS), f"{EXAMPLES[views.WordCurve].scores[0]:.3f}"),
        "line curves": (to_svg(EXAMPLES[views.LineCurves], ui), len(WORDS), "0.300"),
        "trajectory": (to_svg(EXAMPLES[views.Trajectory], ui), len(WORDS), "-5.000"),
        "heat map": (to_svg(EXAMPLES[views.Heatmap], ui), 3, "0.500"),
        "feature graph": (to_svg(EXAMPLES[views.KMaxGraph], ui), 6 + 3 + 2, "0.400"),
        "pyramid": (to_svg(EXAMPLES[views.Pyramid], ui), 4 + 3 + 2 + 1, "0.800"),
        "table": (to_svg(EXAMPLES[views.Table], ui), 15, "L15"),
        "five curves": (word_curves(curves, list("ABCDE"), "curves", {}, None, ui), len(WORDS), "E (native)"),
        "bars": (probability_bars(["neg", "pos"], {"m": [0.25, 0.75]}, "pos", "P", ui=ui), 2, "0.750"),
        "grouped bars": (
            probability_bars(["neg", "pos"], {"a": [0.3, 0.7], "b": [0.6, 0.4]}, None, "P", ui=ui),
            2,
            "0.600",
        ),
        "tree": (tree_figure(view(), LABELS, ["Tensor CNN", "mRNN"], "tree", ui=ui), 7, "not good"),
        "length": (length_figure(buckets, "by length", "words", "accuracy", "sentences", ui), 2, "0.625"),
        "confusion": (confusion_figure([[3, 1], [0, 4]], ["neg", "pos"], "gold", "predicted", "C", ui), 2, "4"),
    }


@pytest.mark.parametrize("ui", ["en", "zh", "zh-TW"])
def test_every_figure_is_named_in_the_page_language_and_has_its_numbers_as_a_table(ui):
    for kind, (figure, rows_drawn, number) in drawn(ui).items():
        drawing, caption, heads, rows = parts(figure)
        name = drawing.get("aria-label") or ""
        assert drawing.get("role") in ("img", "group"), kind
        assert caption and caption in name, kind  # the name: the title and what the figure shows
        assert bool(CHINESE.search(caption)) == (ui != "en"), (kind, caption)
        assert t("figure_table", ui) in figure, kind
        assert len(rows) == rows_drawn and all(len(row) == len(heads) for row in rows), kind
        assert any(number in cell for row in rows for cell in row) or number in heads, (kind, number)


def test_the_table_holds_the_numbers_the_figure_draws():
    curve = EXAMPLES[views.WordCurve]
    _, _, heads, rows = parts(to_svg(curve))
    assert [row[0] for row in rows] == WORDS and [row[1] for row in rows] == [f"{s:.3f}" for s in curve.scores]
    _, caption, heads, rows = parts(probability_bars(["neg", "pos"], {"a": [0.3, 0.7], "b": [0.6, 0.4]}, "pos", "P"))
    assert heads == ["class", "a", "b"] and rows == [["neg", "0.300", "0.600"], ["pos", "0.700", "0.400"]]
    assert "Predicted: pos" in caption
    _, _, heads, rows = parts(to_svg(EXAMPLES[views.Pyramid]))
    assert rows[4][:4] == ["2", "it is", "0.400", "0.200"] and rows[4][4:] == ["0.200", "0.300", "0.500"]
    _, _, heads, rows = parts(confusion_figure([[3, 1], [0, 4]], ["neg", "pos"], "gold", "predicted", "C"))
    assert heads == ["gold \\ predicted", "neg", "pos"] and rows == [["neg", "3", "1"], ["pos", "0", "4"]]
    _, _, _, rows = parts(tree_figure(view(), LABELS, ["Tensor CNN", "mRNN"], "tree"))
    assert rows[4] == ["not good", "very negative", "very negative (0.50) ✓", "very positive (0.50)"]


def test_a_tree_whose_nodes_are_links_is_a_named_group_and_each_link_is_named():
    drawing, caption, _, _ = parts(tree_figure(view(), LABELS, ["Tensor CNN", "mRNN"], "tree"))
    assert drawing.get("role") == "group" and caption in drawing.get("aria-label")
    links = drawing.findall(f"{SVG}a")
    assert len(links) == 7 and all(link.find(f"{SVG}title").text for link in links)


def shapes(figure: str) -> list[tuple]:
    """The marker shapes drawn, in order: a disc or a ring, or a path's commands with its points relative to its
    first and scaled to the largest (the same shape anywhere, at any size)."""
    found = []
    for tag, attrs in re.findall(r"<(circle|path) ([^>]*)>", figure):
        if tag == "circle":
            found.append(("ring",) if 'fill="#fff"' in attrs else ("disc",))
            continue
        steps = re.findall(r"([A-Za-z])([-\d. ]*)", re.search(r'd="([^"]+)"', attrs).group(1))
        numbers = [float(v) for _, values in steps for v in values.split()]
        x0, y0 = numbers[:2]
        offsets = [v - (x0, y0)[i % 2] for i, v in enumerate(numbers)]
        scale = max(map(abs, offsets)) or 1
        found.append((*(c for c, _ in steps), *(round(v / scale, 2) for v in offsets)))
    return found


def test_each_series_has_its_own_marker_so_colour_is_never_the_only_cue():
    kinds = {shapes(svg.marker(k, 10, 10, "#000"))[0] for k in range(svg.MARKERS)}  # 8 shapes
    assert len(kinds) == svg.MARKERS
    curves = word_curves([EXAMPLES[views.WordCurve]] * 5, list("ABCDE"), "curves", {}, None, "en")
    drawn_shapes = shapes(curves)
    per_series = [drawn_shapes[i * len(WORDS)] for i in range(5)]  # each series' points, then the legend's
    assert len(set(per_series)) == 5 and drawn_shapes[5 * len(WORDS) :] == per_series  # the legend shows them
    bars = probability_bars(["neg", "pos"], {m: [0.5, 0.5] for m in "abc"}, None, "P")
    assert len(set(shapes(bars))) == 3  # a marker on each model's bar, and in the legend


# Machado, Oliveira & Fernandes (2009), "A physiologically-based model for simulation of color vision deficiency",
# IEEE TVCG 15(6): the matrices at severity 1.0 (dichromacy), applied to linear sRGB
MACHADO = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.3039]],
}


def linear(hex_colour: str) -> list[float]:
    channels = [int(hex_colour[k : k + 2], 16) / 255 for k in (1, 3, 5)]
    return [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]


def lab(rgb: list[float]) -> tuple[float, float, float]:
    """CIELAB (D65) of a linear sRGB colour."""
    r, g, b = (min(1.0, max(0.0, c)) for c in rgb)
    xyz = (
        (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047,
        0.2126729 * r + 0.7151522 * g + 0.0721750 * b,
        (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883,
    )
    fx, fy, fz = (v ** (1 / 3) if v > 216 / 24389 else (24389 / 27 * v + 16) / 116 for v in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def ciede2000(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """The CIEDE2000 colour difference (Sharma, Wu & Dalal 2005's formulation)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    mean_c = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(mean_c**7 / (mean_c**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1, h2 = math.degrees(math.atan2(b1, a1)) % 360, math.degrees(math.atan2(b2, a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else h2 - h1 - 360 * round((h2 - h1) / 360)  # the short way round
    big_dh = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    mean_l, mean_c = (l1 + l2) / 2, (c1 + c2) / 2
    mean_h = h1 + h2 if c1 * c2 == 0 else (h1 + h2) / 2 + (180 if abs(h1 - h2) > 180 else 0)
    tt = (
        1
        - 0.17 * math.cos(math.radians(mean_h - 30))
        + 0.24 * math.cos(math.radians(2 * mean_h))
        + 0.32 * math.cos(math.radians(3 * mean_h + 6))
        - 0.20 * math.cos(math.radians(4 * mean_h - 63))
    )
    rotation = (
        -2
        * math.sqrt(mean_c**7 / (mean_c**7 + 25**7))
        * math.sin(math.radians(60 * math.exp(-(((mean_h - 275) / 25) ** 2))))
    )
    sl = 1 + 0.015 * (mean_l - 50) ** 2 / math.sqrt(20 + (mean_l - 50) ** 2)
    sc, sh = 1 + 0.045 * mean_c, 1 + 0.015 * mean_c * tt
    dl, dc, dhh = (l2 - l1) / sl, (c2 - c1) / sc, big_dh / sh
    return math.sqrt(dl**2 + dc**2 + dhh**2 + rotation * dc * dhh)


def seen(hex_colour: str, vision: str) -> tuple[float, float, float]:
    rgb = linear(hex_colour)
    if vision in MACHADO:
        rgb = [sum(m * c for m, c in zip(row, rgb)) for row in MACHADO[vision]]
    return lab(rgb)


def closest(colours: list[str], vision: str) -> float:
    return min(ciede2000(seen(a, vision), seen(b, vision)) for a, b in itertools.combinations(colours, 2))


def test_ciede2000_matches_sharmas_published_pairs():
    """Pairs 1, 7 and 17 of Sharma, Wu & Dalal (2005) Table 1."""
    assert ciede2000((50, 2.6772, -79.7751), (50, 0, -82.7485)) == pytest.approx(2.0425, abs=1e-4)
    assert ciede2000((50, 0, 0), (50, -1, 2)) == pytest.approx(2.3669, abs=1e-4)
    assert ciede2000((50, 2.5, 0), (73, 25, -18)) == pytest.approx(27.1492, abs=1e-4)


@pytest.mark.parametrize("vision", ["normal", *MACHADO])
def test_the_model_colours_stay_apart_under_colour_vision_deficiencies(vision):
    """ΔE00 ≈ 1 is a just-noticeable difference between large patches side by side; a 2 px line or a 7 px marker
    on a projector needs many times that. The five models ("all five") get ≥ 15 in every vision, which the
    best five colours of 3:1 on white and neither red nor blue reach (18.2; docs/lab.md); the eight (a view with
    more series, rare) ≥ 8, where the markers tell them apart as well. The former palette: 4.9 and 2.5."""
    assert closest(svg.PALETTE[:5], vision) >= 15
    assert closest(svg.PALETTE, vision) >= 8


def test_the_model_colours_are_graphics_of_3_to_1_and_never_read_as_a_class():
    assert all(svg.contrast(c, "#ffffff") >= 3 for c in svg.PALETTE)
    classes = [svg.class_colour(i, 5) for i in (0, 1, 3, 4)]  # red .. blue; the neutral grey aside
    assert min(ciede2000(seen(m, "normal"), seen(c, "normal")) for m in svg.PALETTE for c in classes) >= 15


@pytest.mark.parametrize("vision", ["normal", *MACHADO])
def test_the_class_colours_and_the_highlights_stay_apart(vision):
    for classes in (2, 3, 5):
        assert closest([svg.class_colour(i, classes) for i in range(classes)], vision) >= 10
    support = svg.SUPPORT
    assert closest([support["strong_for"], support["strong_against"]], vision) >= 10
    assert closest([support["for"], support["against"], support["unknown"]], vision) >= 5


def test_text_on_a_colour_reaches_4_5_to_1():
    backgrounds = [*svg.SUPPORT.values(), *svg.BLUES, *svg.VIRIDIS, svg.colour(0.65, 0, 1, svg.BLUES)]
    backgrounds += [svg.class_colour(i, n) for n in (2, 3, 5) for i in range(n)]
    assert all(svg.contrast(svg.ink(fill), fill) >= 4.5 for fill in backgrounds)
    from demo.lab_html import support_style

    assert support_style("strong_against") == f"background:{svg.SUPPORT['strong_against']};color:#ffffff"


def test_the_figures_grey_text_reaches_4_5_to_1():
    """The caption and the counts over bars (10 px), on the figure's white."""
    figure = length_figure([{"bucket": "1-10", "n": 12, "accuracy": 0.5}], "t", "x", "y", "n")
    figure += to_svg(EXAMPLES[views.Heatmap], "en", "AdaSent · checkpoint sha256 0123")
    for fill in set(re.findall(r'<text [^>]*fill="(#[0-9a-f]{3,6})"', figure)):
        full = "#" + "".join(2 * c for c in fill[1:]) if len(fill) == 4 else fill
        assert svg.contrast(full, "#ffffff") >= 4.5, fill


def test_the_theme_text_colours_reach_4_5_to_1():
    """Gradio's Soft theme as the page uses it (demo.ui.THEME): each text colour on the colour it sits on."""
    from demo.ui import THEME

    def resolve(value: str) -> str:
        while value.startswith("*"):
            value = getattr(THEME, value[1:])
        return {"white": "#ffffff"}.get(value, value)

    pairs = [
        ("block_label_text_color", "block_label_background_fill"),
        ("block_title_text_color", "block_title_background_fill"),
        ("button_primary_text_color", "button_primary_background_fill"),
        ("checkbox_label_text_color_selected", "checkbox_label_background_fill_selected"),
        ("color_accent", "background_fill_primary"),  # the selected tab's name
        ("body_text_color_subdued", "background_fill_primary"),  # the footer
        ("block_info_text_color", "block_background_fill"),  # a control's info line
    ]
    for text, background in pairs:
        ratio = svg.contrast(resolve(getattr(THEME, text)), resolve(getattr(THEME, background)))
        assert ratio >= 4.5, (text, background, round(ratio, 2))
