"""The Treebank's gold tree in the lab's own SVG: a real layout with depth (root on top, each child a row
below its parent), horizontal words each with the room its text needs, gold labels in the sentiment
colours, one square per model, and every node a link that opens its phrase in the Lab on the tree's task."""

import re
from urllib.parse import parse_qs, urlparse

import pytest

from core.analysis.treebank import TreeNode, TreeView
from demo import svg
from demo.treebank_plots import ROW, confusion_figure, length_figure, tree_figure, tree_layout

LABELS = ["very negative", "negative", "neutral", "positive", "very positive"]
MODELS = ["tensor_cnn", "mrnn"]


def node(id_, parent, start, end, height, text, gold):
    return TreeNode(
        id_, parent, start, end, height, text, gold, {"tensor_cnn": gold, "mrnn": 4}, {m: 0.5 for m in MODELS}, 1
    )


def view() -> TreeView:
    """it (is (not good)): a right-branching four-word sentence, three levels below the root."""
    nodes = [
        node(0, None, 0, 4, 3, "it is not good", 1),
        node(1, 0, 0, 1, 0, "it", 2),
        node(2, 0, 1, 4, 2, "is not good", 1),
        node(3, 2, 1, 2, 0, "is", 2),
        node(4, 2, 2, 4, 1, "not good", 0),
        node(5, 4, 2, 3, 0, "not", 1),
        node(6, 4, 3, 4, 0, "good", 4),
    ]
    return TreeView("test", 7, "sst5", LABELS, MODELS, ["it", "is", "not", "good"], nodes)


def centres(figure: str) -> dict[int, tuple[float, float]]:
    return {
        int(n): (float(x), float(y))
        for n, x, y in re.findall(r'data-node="(\d+)"><title>[^<]*</title><circle cx="([\d.]+)" cy="([\d.]+)"', figure)
    }


def test_the_tree_has_depth_and_parents_over_their_children():
    figure = tree_figure(view(), LABELS, ["Tensor CNN", "mRNN"], "SST-5: test #7")
    at = centres(figure)
    assert len(at) == 7
    assert at[0][1] < at[2][1] < at[4][1]  # root, then each inner node a row lower: not a flat line
    assert at[2][1] - at[0][1] == at[4][1] - at[2][1] == ROW
    assert {at[n][1] for n in (1, 3, 5, 6)} == {max(y for _, y in at.values())}  # the leaves on the bottom row
    assert at[4][0] == pytest.approx((at[5][0] + at[6][0]) / 2, abs=0.1) and at[5][0] < at[6][0]  # over its children
    _, depth, _ = tree_layout(view())
    assert depth == {0: 0, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3}


def test_words_are_horizontal_with_room_and_labels_readable():
    figure = tree_figure(view(), LABELS, ["Tensor CNN", "mRNN"], "t")
    words = re.findall(r'<text x="([\d.]+)" y="[\d.]+" font-size="12"[^>]*>([^<]+)</text>', figure)
    assert [w for _, w in words] == ["it", "is", "not", "good"] and "rotate" not in figure
    at = [(float(x), svg.text_width(w, 12)) for x, w in words]
    assert all(b - a >= (wa + wb) / 2 for (a, wa), (b, wb) in zip(at, at[1:]))  # left to right, never overlapping
    assert all(
        size >= 11 for size in map(float, re.findall(r'font-size="([\d.]+)"', figure.split("</text>", 1)[1])[:-1])
    )  # every label but the caption at a readable size


def test_every_node_is_a_link_to_the_lab_with_its_phrase_and_task():
    figure = tree_figure(view(), LABELS, ["Tensor CNN", "mRNN"], "t")
    links = re.findall(r'<a class="tree-node" href="([^"]+)"', figure)
    assert len(links) == 7
    queries = [parse_qs(urlparse(link.replace("&amp;", "&")).query) for link in links]
    assert [q["text"][0] for q in queries] == [n.text for n in view().nodes]
    assert all(q["task"] == ["sst5"] for q in queries)


def test_nodes_use_the_sentiment_colours_gold_and_predictions():
    figure = tree_figure(view(), LABELS, ["Tensor CNN", "mRNN"], "t")
    root = figure.split('data-node="0"')[1].split("</a>")[0]
    assert f'fill="{svg.class_colour(1, 5)}"' in root  # gold: negative
    assert root.count("<rect") == 2 and f'fill="{svg.class_colour(4, 5)}"' in root  # mRNN predicts very positive
    assert "mRNN: very positive (0.50)" in root and "Tensor CNN: negative (0.50) ✓" in root


def test_the_dataset_figures_are_svg_too():
    buckets = [{"bucket": "1-5", "n": 10, "accuracy": 0.5}, {"bucket": "6-10", "n": 4, "accuracy": 0.75}]
    length = length_figure(buckets, "Accuracy by length", "words", "accuracy", "sentences")
    assert "<svg" in length and "<polyline" in length and ">10<" in length
    confusion = confusion_figure([[3, 1], [0, 4]], ["negative", "positive"], "gold", "predicted", "Confusion")
    assert confusion.count("</title></rect>") == 4 and ">Confusion<" in confusion
