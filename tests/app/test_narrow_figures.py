"""Figures drawn for the width they get (issue 45): with a phone's room (318 px: a model panel's figure box at
390 px), every figure kind of the Lab (all five, the pyramid, the k-max graph, the heatmap, the trajectory, the
tables) and of the Treebank (the tree, drawn sideways; the dataset charts) is no wider than the room, so it
shows at its drawn size, every text of it at least 10 px and none past the figure's edge; without a room (the
API, a wide page) the figures keep their wide layouts."""

import contextvars
import re
import statistics

import pytest
from test_figure_legibility import assert_complete, view_box
from test_treebank_tree_svg import LABELS, MODELS, centres, node, view

from core.analysis.treebank import TreeView
from core.models import PAPER_MODELS
from demo import svg
from demo.charts import probability_bars, word_curves
from demo.i18n import word_view
from demo.plots import to_svg
from demo.treebank_plots import confusion_figure, length_figure, tree_figure

ROOM = 318
SIZES = re.compile(r'font-size="([\d.]+)"')
SENTENCE = "It is not a bad film, but the plot is dull and the actors are wasted."


def drawn(room, draw, *args):
    """`draw(*args)` in a context whose figures get `room` px, as a request's callback draws them."""

    def run():
        svg.drawn_for(room)
        return draw(*args)

    return contextvars.copy_context().run(run)


def assert_fits(figure: str, room: float = ROOM) -> None:
    assert view_box(figure)[0] <= room and 'class="zoom"' not in figure, view_box(figure)  # no 1:1 needed
    assert min(float(size) for size in SIZES.findall(figure)) >= 10
    assert_complete(figure)


@pytest.mark.parametrize("model", PAPER_MODELS)
def test_every_view_of_every_model_fits_a_phone(lab, model):
    p = lab.predict(SENTENCE, model, task="sst5", lang="en")
    figures = [drawn(ROOM, to_svg, word_view(v, "en"), "en", "caption · checkpoint sha256 0123abcd") for v in p.views]
    assert figures
    for figure in figures:
        assert_fits(figure)


def test_all_five_fit_a_phone(lab):
    predictions = [lab.predict(SENTENCE, model, task="sst5", lang="en") for model in PAPER_MODELS]
    labels = predictions[0].labels
    rows = {p.model: p.probs for p in predictions}
    assert_fits(drawn(ROOM, probability_bars, labels, rows, None, "Class probabilities"))
    curves = [p.curve for p in predictions]
    assert_fits(drawn(ROOM, word_curves, curves, PAPER_MODELS, "Per-word sentiment", {}, labels, "en"))


def test_the_tree_is_drawn_sideways_on_a_phone_and_top_down_on_a_laptop():
    names = ["Tensor CNN", "mRNN"]
    narrow = drawn(ROOM, tree_figure, view(), LABELS, names, "SST-5: test #7")
    assert_fits(narrow)
    at = centres(narrow)
    assert at[0][0] < at[2][0] < at[4][0] < at[5][0]  # the root on the left, each depth further right
    assert [at[leaf][1] for leaf in (1, 3, 5, 6)] == sorted(at[leaf][1] for leaf in (1, 3, 5, 6))  # a line per word
    assert len({at[leaf][0] for leaf in (1, 3, 5, 6)}) == 1
    wide = drawn(None, tree_figure, view(), LABELS, names, "SST-5: test #7")
    assert centres(wide)[0][1] < centres(wide)[2][1]  # top-down


def long_view(n: int = 21) -> TreeView:
    """A right-branching sentence of `n` words: the length where a top-down tree shrank to 0.54x at 768 px."""
    words = [f"word{i}" for i in range(n)]
    nodes, parent = [], None
    for start in range(n):  # each inner node: its first word as a leaf, then the rest
        inner = len(nodes)
        if start < n - 1:
            nodes.append(node(inner, parent, start, n, n - start - 1, " ".join(words[start:]), 2))
            nodes.append(node(inner + 1, inner, start, start + 1, 0, words[start], 3))
            parent = inner
        else:
            nodes.append(node(inner, parent, start, n, 0, words[start], 1))
    return TreeView("test", 414, "sst5", LABELS, MODELS, words, nodes)


@pytest.mark.parametrize("room", [318, 700])
def test_a_long_sentence_s_tree_keeps_its_words_legible(room):
    """Top-down, 21 words need ~1,200 px; where that would shrink them below 10 px, the tree is drawn sideways, and
    a drawing still too wide for the room scrolls in its box rather than shrink its words below 10 px."""
    names = ["Tensor CNN", "mRNN"]
    figure = drawn(room, tree_figure, long_view(), LABELS, names, "SST-5: test #414")
    assert min(shown_sizes(figure, room)) >= 10
    at = centres(figure)
    assert at[0][0] < at[2][0]  # sideways: the root on the left
    assert centres(drawn(1400, tree_figure, long_view(), LABELS, names, "t"))[0][1] < at[2][1]  # a laptop: top-down


def shown_sizes(figure: str, room: float) -> list[float]:
    """A figure's text sizes as the page's CSS shows them: the drawing at 100% of its room, at most its drawn
    size, at least its min-width (svg.LEGIBLE)."""
    least = float(re.search(r'<svg [^>]*style="[^"]*min-width:([\d.]+)px', figure).group(1))
    width = view_box(figure)[0]
    scale = max(least / width, min(1.0, room / width))
    return [scale * float(size) for size in SIZES.findall(figure)]


@pytest.mark.parametrize("room", [318, 700])
def test_a_long_sentence_s_figures_keep_a_median_of_10_px(lab, room):
    """36 words: every view of every model, drawn for a phone's and a tablet's room, shows its text at a median of
    10 px or more (the pyramid's numbers were 10 px: 9.1 px once shrunk)."""
    long = " ".join([SENTENCE] * 3)[:200]
    for model in PAPER_MODELS:
        p = lab.predict(long, model, task="sst5", lang="en")
        for v in p.views:
            figure = drawn(room, to_svg, word_view(v, "en"), "en", "")
            assert statistics.median(shown_sizes(figure, room)) >= 10, (model, type(v).__name__)


def test_the_dataset_charts_fit_a_phone():
    buckets = [{"bucket": f"{a}-{a + 4}", "n": 10 + a, "accuracy": 0.5 + a / 100} for a in range(1, 40, 5)]
    assert_fits(drawn(ROOM, length_figure, buckets, "Accuracy by sentence length", "words", "accuracy", "sentences"))
    confusion = [[3, 1, 0, 0, 0], [1, 4, 1, 0, 0], [0, 1, 5, 1, 0], [0, 0, 1, 4, 1], [0, 0, 0, 1, 3]]
    assert_fits(drawn(ROOM, confusion_figure, confusion, LABELS, "gold", "predicted", "Confusion"))


def test_without_a_room_a_figure_is_as_wide_as_its_content():
    labels = ["very negative", "negative", "neutral", "positive", "very positive"]
    rows = {f"model {i}": [0.2] * 5 for i in range(5)}
    assert view_box(drawn(None, probability_bars, labels, rows, None, "Class probabilities"))[0] == 720
    assert view_box(drawn(1200, probability_bars, labels, rows, None, "Class probabilities"))[0] == 720
