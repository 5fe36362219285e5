"""Explanation views: small, typed, JSON-serialisable dataclasses that a model (or the predictor)
fills and the front end draws. A view knows nothing about plotting; demo/plots.py maps each view
type to a figure. A new kind of panel means one `@view` dataclass here (its words in its model's card, or in
VIEW_TEXT with their Chinese in demo/locales/zh.toml when models share them) and one plot function there;
core.wire serialises it for the API and the model worker.

Every string a view shows (title, axis names, legend, column heads) is a `Text`: a code of VIEW_TEXT and its
parameters. It reads as its English wording (the JSON API, the CLI, the logs); the front end words the same
code in the UI language (demo/i18n.py), never by parsing the English.
"""

from dataclasses import dataclass, field
from typing import TypeVar

# The views' words, by code, in English; demo/i18n.py has the same codes in Chinese. {label} is a class name. These
# are the shared ones; each model's own come from its card (core.models.card.ModelCard.view_text, declared here).
VIEW_TEXT = {
    # core.predict: what a per-word curve is (WordCurve.title); core.views.sentiment_scores: what its score is
    "curve_native": "the model's own per-word output",
    "curve_probe": "the model's classifier applied to each word alone (a probe: the model never does this)",
    "curve_prefix": "prediction on each prefix",
    "score_expected": "expected sentiment (-2..2)",
    "score_probability": "P({label})",
    "score_top": "top class probability",
    "axis_word": "word",
    "axis_layer": "layer",
}


def declare_view_text(words: dict[str, str]) -> None:
    """Adds a model's view codes to VIEW_TEXT; ValueError for a code already worded otherwise."""
    clashing = sorted(code for code, text in words.items() if VIEW_TEXT.get(code, text) != text)
    if clashing:
        raise ValueError(f"view text codes already worded otherwise: {', '.join(clashing)}")
    VIEW_TEXT.update(words)


class Text(str):
    """A string of a view as data: `code` (a key of VIEW_TEXT) and its `params` (numbers, class names, other
    Texts). As a str it is the English wording, so JSON, f-strings and comparisons read it as before."""

    code: str
    params: dict

    def __new__(cls, code: str, **params):
        text = super().__new__(cls, VIEW_TEXT[code].format(**params))
        text.code, text.params = code, params
        return text

    def __getnewargs_ex__(self):  # copy and pickle rebuild it from its code, not from its English
        return (self.code,), self.params


V = TypeVar("V", bound=type)
VIEWS: dict[str, type] = {}  # every view type by name (core.wire tags and rebuilds them)


def view(cls: V) -> V:
    """Declares a view (a dataclass): the API tags it with its type and the model worker may rebuild it."""
    VIEWS[cls.__name__] = cls
    return cls


@view
@dataclass
class WordCurve:
    """Per-word sentiment: at each word, the class probabilities and one summary score."""

    kind: str  # "native" (the model's own per-position output), "probe" (the model's classifier on each word
    # alone, which the model itself never does) or "prefix" (prediction on words 1..i)
    words: list[str]
    scores: list[float]  # expected score sum_s s*p(s) in [-2, 2] (5-class), P(class 1) (2-class), else max prob
    probs: list[list[float]]  # (n_words, C)
    score_label: Text  # what `scores` is, e.g. "expected sentiment (-2..2)"
    score_range: tuple[float, float] = (0.0, 1.0)
    title: Text | str = ""


@view
@dataclass
class LineCurves:
    """Several named curves over x positions: words (the tensor CNN's per-layer sentiment) or
    layers (AGT's transform-gate activity per layer)."""

    title: Text
    x_labels: list[str]
    curves: dict[Text, list[float]]
    y_label: Text
    x_title: Text = field(default_factory=lambda: Text("axis_word"))
    y_range: tuple[float, float] | None = None


@view
@dataclass
class Trajectory:
    """A 2-D path through hidden states, one point per word (e.g. the mRNN's h_1..h_T)."""

    title: Text
    words: list[str]
    points: list[tuple[float, float]]
    scores: list[float]  # colour of each point (the per-step score)
    axis_note: Text | str = ""


@view
@dataclass
class Heatmap:
    """A matrix over words (x) and rows (y), e.g. AGT attention (layers x words)."""

    title: Text
    x_labels: list[str]
    y_labels: list[str]
    values: list[list[float]]  # (len(y_labels), len(x_labels))
    value_label: Text | str = ""
    value_range: tuple[float, float] | None = None


@view
@dataclass
class KMaxGraph:
    """DCNN's induced feature graph (Kalchbrenner et al. 2014 §4.2).

    Level 0 is the words; level l >= 1 are the positions kept by layer l's k-max pooling, indexed
    in that layer's convolution output. links[l-1][i][j] joins node i of level l to node j of level
    l-1 inside its convolution window: how many (map, row) pairs use that edge, 0 for none. (A dense
    matrix per pair of levels: a third of the JSON nodes of an edge list for a typical sentence.)"""

    title: Text
    words: list[str]
    levels: list[list[int]]  # level l: kept positions (for level 0, word indices)
    values: list[list[float]]  # level l: mean activation of each kept node over maps and rows
    links: list[list[list[int]]]  # links[l-1]: (len(levels[l]), len(levels[l-1])) edge weights
    top_map: int | None = None  # the graph of this top-layer map only; None: of all maps
    # with top_map: each top-layer map's contribution to the predicted class's logit (its output weights times
    # its k-max values; they and the bias sum to the logit), which says why a map is worth a look
    contributions: list[float] = field(default_factory=list)

    def edges(self) -> list[tuple[int, int, int, int]]:
        """(level, parent position, child position, weight) of every edge."""
        return [
            (level, parent, child, weight)
            for level, matrix in enumerate(self.links, start=1)
            for parent, row in zip(self.levels[level], matrix)
            for child, weight in zip(self.levels[level - 1], row)
            if weight
        ]


@view
@dataclass
class Pyramid:
    """AdaSent's hierarchy: unit (t, j) covers words j..j+t-1."""

    title: Text
    words: list[str]
    scores: list[list[float]]  # level t-1: one sentiment score per unit
    gates: list[list[tuple[float, float, float]]]  # level t-1: (left, right, compose) per unit; level 1 empty
    level_beliefs: list[float]  # gamma_t over levels 1..T
    level_probs: list[list[float]]  # p(class | level t), (T, C)
    score_label: Text | str = ""
    score_range: tuple[float, float] = (0.0, 1.0)
    # 0: every unit with its gates; else the sentence has more words than this and the pyramid (n²/2 units)
    # is sent at reduced resolution: gates left out (empty lists), scores rounded to 3 decimals
    detail_words: int = 0


@view
@dataclass
class Table:
    title: Text
    columns: list[Text]
    rows: list[list]


def sentiment_scores(
    probs: list[list[float]], class_names: list[str] | None = None
) -> tuple[list[float], Text, tuple[float, float]]:
    """One number per row of class probabilities, the same way for every model: the expected
    score sum_s (s-2) p(s) in [-2, 2] for 5 classes (Lei et al. 2015 Fig. 5), P(class 1) for
    2 classes (named by the task's own class, e.g. P(objective) on SUBJ), else the top probability."""
    num_classes = len(probs[0]) if probs else 0
    if num_classes == 5:
        return [sum((s - 2) * p for s, p in enumerate(row)) for row in probs], Text("score_expected"), (-2.0, 2.0)
    if num_classes == 2:
        return (
            [row[1] for row in probs],
            Text("score_probability", label=class_names[1] if class_names else "class 1"),
            (0.0, 1.0),
        )
    return [max(row) for row in probs], Text("score_top"), (0.0, 1.0)
