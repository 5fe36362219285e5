"""The figures' texts and marks never overprint on a phone or a laptop (the issue's "DCNN layer-2 nodes, the
pyramid's "bad film" overlap", "the accuracy-by-length chart overlaps its counts and breaks "11-15" across lines");
an intervention's notice names its model once; the Treebank's sentence menu lists every sentence found."""

import html
import math
import re

import pytest
from test_narrow_figures import ROOM, drawn

from core.analysis.treebank import MAX_HITS
from demo import build_demo, svg
from demo.i18n import word_view
from demo.lab_text import notices_text
from demo.plots import to_svg
from demo.treebank_plots import length_figure
from service.settings import Settings

TEXT = re.compile(r'<text x="([-\d.]+)" y="([-\d.]+)" font-size="([\d.]+)" text-anchor="(\w+)"([^>]*)>([^<]*)</text>')
TURN = re.compile(r"rotate\(([-\d.]+) ")
CIRCLE = re.compile(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"')
SENTENCE = "It is not a bad film, but the plot is dull."  # the issue's: 13 words
# the SST test set's buckets as the Treebank tab shows them (make evaluate-all: phrases per length)
BUCKETS = [
    *(
        {"bucket": str(n), "n": count, "accuracy": acc}
        for n, count, acc in zip(
            range(1, 11),
            [42405, 9861, 6000, 3755, 2891, 2405, 1986, 1707, 1382, 1210],
            [0.89, 0.79, 0.73, 0.67, 0.66, 0.64, 0.6, 0.57, 0.56, 0.55],
        )
    ),
    *(
        {"bucket": name, "n": count, "accuracy": acc}
        for name, count, acc in zip(
            ["11-15", "16-20", "21-30", "31-40", "41+"], [4189, 2361, 1941, 454, 53], [0.53, 0.52, 0.48, 0.42, 0.38]
        )
    ),
]


def text_boxes(figure: str) -> list[tuple[str, list[tuple[float, float]]]]:
    """Every text's box (by svg.text_width: from its baseline 0.75 of its size up, 0.2 down) as the four corners
    it has on the figure, turned with the text."""
    boxes = []
    for match in TEXT.finditer(figure):
        x, y, size = map(float, match.groups()[:3])
        turn = TURN.search(match.group(5))
        anchor, turn, content = match.group(4), float(turn.group(1)) if turn else 0.0, html.unescape(match.group(6))
        w = svg.text_width(content, size)
        left = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
        corners = [
            (left, y - 0.75 * size),
            (left + w, y - 0.75 * size),
            (left + w, y + 0.2 * size),
            (left, y + 0.2 * size),
        ]
        a = math.radians(turn)
        turned = [
            (x + (px - x) * math.cos(a) - (py - y) * math.sin(a), y + (px - x) * math.sin(a) + (py - y) * math.cos(a))
            for px, py in corners
        ]
        boxes.append((content, turned))
    return boxes


def overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> bool:
    """Two convex quadrilaterals overlap unless an edge's normal separates them (by more than half a pixel)."""
    for quad in (a, b):
        for (x1, y1), (x2, y2) in zip(quad, quad[1:] + quad[:1]):
            nx, ny = y2 - y1, x1 - x2
            length = math.hypot(nx, ny) or 1
            pa = [(px * nx + py * ny) / length for px, py in a]
            pb = [(px * nx + py * ny) / length for px, py in b]
            if max(pa) <= min(pb) + 0.5 or max(pb) <= min(pa) + 0.5:
                return False
    return True


def overprinted(figure: str, among=lambda content: True) -> list[tuple[str, str]]:
    boxes = [box for box in text_boxes(figure) if among(box[0]) and box[0].strip()]
    return [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if overlap(a[1], b[1])]


@pytest.mark.parametrize("room", [ROOM, 560, None])  # a phone's figure box, a laptop's half width, the API
def test_the_length_chart_keeps_its_counts_and_bucket_names_apart(room):
    figure = drawn(room, length_figure, BUCKETS, "Accuracy by n-gram length", "length in words", "accuracy", "phrases")
    assert not overprinted(figure), overprinted(figure)
    shown = [content for content, _ in text_boxes(figure)]
    assert all(b["bucket"] in shown for b in BUCKETS), shown  # a name whole, never "11-1" and "5"


@pytest.mark.parametrize("room", [ROOM, None])
def test_the_word_ticks_of_the_pyramid_and_the_feature_graph_never_overprint(lab, room):
    words = set(SENTENCE.replace(",", " ,").replace(".", " .").lower().split())
    for model in ("adasent", "dcnn"):
        views = lab.predict(SENTENCE, model, task="sst5", lang="en").views
        for view in views:
            figure = drawn(room, to_svg, word_view(view, "en"), "en", "caption")
            assert not overprinted(figure, lambda content: content in words), (model, room, overprinted(figure))


@pytest.mark.parametrize("room", [ROOM, None])
def test_the_feature_graphs_nodes_never_overlap(lab, room):
    for view in lab.predict(SENTENCE, "dcnn", task="sst5", lang="en").views:
        figure = drawn(room, to_svg, word_view(view, "en"), "en", "caption")
        rows: dict[float, list[tuple[float, float]]] = {}
        for cx, cy, r in CIRCLE.findall(figure):
            rows.setdefault(float(cy), []).append((float(cx), float(r)))
        if not rows:
            continue
        for row in rows.values():
            row.sort()
            assert all(b[0] - a[0] >= a[1] + b[1] for a, b in zip(row, row[1:])), (room, row)


def test_spread_moves_marks_apart_as_little_as_it_can():
    assert svg.spread([10, 50, 90], 12, 0, 100) == [10, 50, 90]  # apart already: where they were wished
    assert svg.spread([50, 50, 50], 12, 0, 100) == [38, 50, 62]  # a cluster: spread about its centre
    assert svg.spread([0, 0, 0], 12, 0, 100) == [0, 12, 24]  # never past the edge
    assert svg.spread([50] * 11, 12, 0, 100) == [10 * i for i in range(11)]  # no room for 12: evenly, all in


def test_an_interventions_notice_names_its_model_once(lab):
    text = "the film is not good"
    before, after = (lab.predict(text, "dcnn", task="sst5", intervention=i) for i in ("none", "max_pool"))
    shown = notices_text([before, after], [], "en")
    assert "Intervention" in shown and shown.count("Kalchbrenner") == 1, shown


def test_the_treebank_lists_every_sentence_found(lab):
    demo = build_demo(lab, "checkpoints", Settings.load())
    menu = next(block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "tb-sentence")
    assert menu.num_choices_shown >= MAX_HITS  # Gradio's default, 100, left "137 sentences found" listing 100
