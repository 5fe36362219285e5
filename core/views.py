"""Explanation views: small, typed, JSON-serialisable dataclasses that a model (or the predictor)
fills and the front end draws. A view knows nothing about plotting; demo/plots.py maps each view
type to a figure. A new kind of panel means one dataclass here and one plot function there."""

import types
from dataclasses import dataclass, fields, is_dataclass
from typing import Union, get_args, get_origin, get_type_hints


@dataclass
class WordCurve:
    """Per-word sentiment: at each word, the class probabilities and one summary score."""

    kind: str  # "native" (the model's own per-position output), "probe" (the model's classifier on each word
    # alone, which the model itself never does) or "prefix" (prediction on words 1..i)
    words: list[str]
    scores: list[float]  # expected score sum_s s*p(s) in [-2, 2] (5-class), P(class 1) (2-class), else max prob
    probs: list[list[float]]  # (n_words, C)
    score_label: str  # what `scores` is, e.g. "expected sentiment (-2..2)"
    score_range: tuple[float, float] = (0.0, 1.0)
    title: str = ""


@dataclass
class LineCurves:
    """Several named curves over x positions: words (the tensor CNN's per-layer sentiment) or
    layers (AGT's transform-gate activity per layer)."""

    title: str
    x_labels: list[str]
    curves: dict[str, list[float]]
    y_label: str
    x_title: str = "word"
    y_range: tuple[float, float] | None = None


@dataclass
class Trajectory:
    """A 2-D path through hidden states, one point per word (e.g. the mRNN's h_1..h_T)."""

    title: str
    words: list[str]
    points: list[tuple[float, float]]
    scores: list[float]  # colour of each point (the per-step score)
    axis_note: str = ""


@dataclass
class Heatmap:
    """A matrix over words (x) and rows (y), e.g. AGT attention (layers x words)."""

    title: str
    x_labels: list[str]
    y_labels: list[str]
    values: list[list[float]]  # (len(y_labels), len(x_labels))
    value_label: str = ""
    value_range: tuple[float, float] | None = None


@dataclass
class KMaxGraph:
    """DCNN's induced feature graph (Kalchbrenner et al. 2014 §4.2).

    Level 0 is the words; level l >= 1 are the positions kept by layer l's k-max pooling, indexed
    in that layer's convolution output. links[l-1][i][j] joins node i of level l to node j of level
    l-1 inside its convolution window: how many (map, row) pairs use that edge, 0 for none. (A dense
    matrix per pair of levels: a third of the JSON nodes of an edge list for a typical sentence.)"""

    title: str
    words: list[str]
    levels: list[list[int]]  # level l: kept positions (for level 0, word indices)
    values: list[list[float]]  # level l: mean activation of each kept node over maps and rows
    links: list[list[list[int]]]  # links[l-1]: (len(levels[l]), len(levels[l-1])) edge weights

    def edges(self) -> list[tuple[int, int, int, int]]:
        """(level, parent position, child position, weight) of every edge."""
        return [(level, parent, child, weight)
                for level, matrix in enumerate(self.links, start=1)
                for parent, row in zip(self.levels[level], matrix)
                for child, weight in zip(self.levels[level - 1], row) if weight]


@dataclass
class Pyramid:
    """AdaSent's hierarchy: unit (t, j) covers words j..j+t-1."""

    title: str
    words: list[str]
    scores: list[list[float]]  # level t-1: one sentiment score per unit
    gates: list[list[tuple[float, float, float]]]  # level t-1: (left, right, compose) per unit; level 1 empty
    level_beliefs: list[float]  # gamma_t over levels 1..T
    level_probs: list[list[float]]  # p(class | level t), (T, C)
    score_label: str = ""
    score_range: tuple[float, float] = (0.0, 1.0)
    # 0: every unit with its gates; else the sentence has more words than this and the pyramid (n²/2 units)
    # is sent at reduced resolution: gates left out (empty lists), scores rounded to 3 decimals
    detail_words: int = 0


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list]


def plain(value):
    """A dataclass (a view, a token) as JSON-ready dicts and lists. Unlike dataclasses.asdict it does not
    deep-copy: a list of numbers or strings is passed on as it is, which makes serialising a
    prediction several times faster. Lists are homogeneous here, so the first item decides."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and value and (isinstance(value[0], (list, tuple, dict)) or is_dataclass(value[0])):
        return [plain(v) for v in value]
    return value


def view_to_dict(view) -> dict:
    return {"type": type(view).__name__, **plain(view)}


VIEW_TYPES = {cls.__name__: cls for cls in (WordCurve, LineCurves, Trajectory, Heatmap, KMaxGraph, Pyramid, Table)}


def view_from_dict(data: dict):
    """The inverse of view_to_dict."""
    return from_plain(VIEW_TYPES[data["type"]], data)


def from_plain(kind, value):
    """The inverse of `plain` for a value of type `kind` (a dataclass, list[...], tuple[...], dict[..., ...],
    an optional, or a plain type): JSON data back into the dataclasses and tuples it came from."""
    if value is None:
        return None
    if is_dataclass(kind):
        hints = get_type_hints(kind)
        return kind(**{f.name: from_plain(hints[f.name], value[f.name]) for f in fields(kind) if f.name in value})
    origin, args = get_origin(kind), get_args(kind)
    if origin in (Union, types.UnionType):
        return from_plain(next(a for a in args if a is not type(None)), value)
    if origin is tuple and args and args[-1] is not Ellipsis:
        return tuple(from_plain(a, v) for a, v in zip(args, value))
    if origin in (list, tuple):
        return origin(from_plain(args[0], v) for v in value)
    if origin is dict:
        return {k: from_plain(args[1], v) for k, v in value.items()}
    return value


def sentiment_scores(probs: list[list[float]], class_names: list[str] | None = None
                     ) -> tuple[list[float], str, tuple[float, float]]:
    """One number per row of class probabilities, the same way for every model: the expected
    score sum_s (s-2) p(s) in [-2, 2] for 5 classes (Lei et al. 2015 Fig. 5), P(class 1) for
    2 classes (named by the task's own class, e.g. P(objective) on SUBJ), else the top probability."""
    num_classes = len(probs[0]) if probs else 0
    if num_classes == 5:
        return [sum((s - 2) * p for s, p in enumerate(row)) for row in probs], "expected sentiment (-2..2)", (-2.0, 2.0)
    if num_classes == 2:
        return [row[1] for row in probs], f"P({class_names[1] if class_names else 'class 1'})", (0.0, 1.0)
    return [max(row) for row in probs], "top class probability", (0.0, 1.0)
