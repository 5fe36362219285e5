"""Every figure complete on screen and in its SVG/PNG export: no text runs past the figure's edge (legends
and captions wrap; the caption keeps the checkpoint's sha256 and the commit), a colour bar's title never
covers the cells beside it, the trajectory's point labels never overprint, and each figure scales to its
container within limits that keep its text legible."""

import html
import re

from core.views import Heatmap, Trajectory, WordCurve
from demo import svg
from demo.charts import probability_bars, word_curves
from demo.plots import to_svg

TEXT = re.compile(r'<text x="([-\d.]+)" y="([-\d.]+)" font-size="([\d.]+)" text-anchor="(\w+)"[^>]*>([^<]*)</text>')
CAPTION = (
    "AdaSent (Zhao et al. 2015) · SST fine-grained (5 classes) · checkpoint sha256 0123456789abcdef · "
    "commit 5a1cee6fedcba98"
)


def view_box(figure: str) -> tuple[float, float]:
    width, height = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', figure).groups()
    return float(width), float(height)


def extents(figure: str) -> list[tuple[float, float, float, float, str]]:
    """(left, right, top, bottom, text) of every unrotated text, by svg.text_width."""
    boxes = []
    for match in TEXT.finditer(figure):
        if "rotate(" in match.group(0):
            continue
        x, y, size, anchor, content = *map(float, match.groups()[:3]), match.group(4), html.unescape(match.group(5))
        w = svg.text_width(content, size)
        left = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
        boxes.append((left, left + w, y - size, y + 2, content))
    return boxes


def assert_complete(figure: str) -> None:
    width, height = view_box(figure)
    for left, right, _, bottom, content in extents(figure):
        assert left >= 0 and right <= width + 0.5 and bottom <= height + 0.5, (content, left, right, width)


def test_a_long_caption_wraps_and_keeps_the_commit():
    bars = probability_bars(["negative", "positive"], {"m": [0.3, 0.7]}, "positive", "Class probabilities", CAPTION)
    assert_complete(bars)
    shown = " ".join(content for *_, content in extents(bars))
    assert "5a1cee6fedcba98" in shown and "0123456789abcdef" in shown


def test_a_legend_entry_wider_than_the_figure_wraps():
    curve = WordCurve("probe", ["a", "good", "film"], [0.1, 0.5, 0.4], [], "P(positive)", (0.0, 1.0), "probe")
    long_kind = "probe: the model's classifier on each word alone, which the model itself never does"
    names = [f"Model {i} (Someone et al. 2015)" for i in range(4)] + ["AdaSent (Zhao et al. 2015)"]
    figure = word_curves([curve] * 5, names, "Per-word sentiment", {"probe": long_kind}, None, "en", CAPTION)
    assert_complete(figure)
    assert "AdaSent (Zhao et al. 2015)" in " ".join(content for *_, content in extents(figure))


def test_the_colour_bar_title_never_covers_the_heatmap():
    words = ["the", "acting", "is", "great", "but", "the", "plot", "is", "not", "good", "."]
    heat = Heatmap(
        "AGT attention",
        words,
        ["layer 1", "layer 2", "layer 3"],
        [[0.1] * len(words)] * 3,
        "attention weight",
        (0.0, 1.0),
    )
    figure = to_svg(heat, "en", CAPTION)
    assert_complete(figure)
    cells_right = max(
        float(x) + float(w)
        for x, w in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="20(?:\.0)?" fill', figure)
    )
    title = next(box for box in extents(figure) if box[4] == "attention weight")
    assert title[0] >= cells_right  # starts right of the last cell


def test_trajectory_labels_never_overprint():
    words = ["the", "acting", "is", "great", ",", "but", "the", "plot"]
    points = [(0.0, 0.0), (1.0, 0.2), (2.0, 0.1), (2.05, 0.12), (2.1, 0.11), (3.0, 1.0), (3.02, 1.01), (4.0, 0.5)]
    figure = to_svg(Trajectory("mRNN states", words, points, [0.1 * i for i in range(len(words))], "PC1/PC2"))
    assert_complete(figure)
    labels = [box for box in extents(figure) if re.match(r"\d+\. ", box[4])]
    assert labels and all(
        a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2]
        for i, a in enumerate(labels)
        for b in labels[i + 1 :]
    )
    assert figure.count("<circle") == len(words)  # every point drawn; a label left out is in its hover


def test_figures_scale_down_to_their_container_never_above_their_drawn_size():
    bars = probability_bars(["negative", "positive"], {"m": [0.3, 0.7]}, "positive", "P")
    width, _ = view_box(bars)
    style = re.search(r'<svg [^>]*style="([^"]+)"', bars).group(1)
    assert style == f"max-width:{round(width)}px"  # no min-width: a phone sees the whole figure (a tap zooms)
