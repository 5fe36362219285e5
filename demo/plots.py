"""Explanation views (core.views) -> plotly figures. Pure functions: no model, no torch, no state.

`to_figure(view)` dispatches on the view's type; a new view type needs one function here. Every
figure sets an explicit height (Gradio renders an autosized plotly figure at zero height in some
versions), and every word shown on a figure is HTML-escaped: plotly reads a few HTML tags in labels,
and typed text must show as typed.
"""

import html
import re
from functools import singledispatch

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.pairs import WordAlignment
from core.views import Heatmap, KMaxGraph, LineCurves, Pyramid, Table, Trajectory, WordCurve

SENTIMENT = "RdBu"  # red = negative, blue = positive, as in the papers' figures
PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d"]
MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+!|~-])")


def esc(text: str) -> str:
    return html.escape(str(text), quote=False)


def md(text: str) -> str:
    """Text shown in Markdown as typed: HTML escaped, Markdown punctuation backslash-escaped."""
    return MARKDOWN.sub(r"\\\1", esc(text))


def _words_axis(fig: go.Figure, words: list[str], row: int | None = None, col: int | None = None, **axis) -> None:
    """Words as x tick labels at positions 0..n-1 (a categorical axis would merge repeated words)."""
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(words))), ticktext=[esc(w) for w in words],
                     tickangle=-45 if len(words) > 12 else 0, row=row, col=col, **axis)


def _layout(fig: go.Figure, title: str, height: int, **layout) -> go.Figure:
    layout.setdefault("margin", {"l": 60, "r": 20, "t": 50, "b": 60})
    fig.update_layout(title={"text": esc(title), "font": {"size": 14}}, height=height, template="plotly_white", **layout)
    return fig


@singledispatch
def to_figure(view) -> go.Figure:
    raise TypeError(f"no plot for view type {type(view).__name__}")


@to_figure.register
def _(view: WordCurve) -> go.Figure:
    return word_curves([view])


def word_curves(curves: list[WordCurve], names: list[str] | None = None, title: str | None = None,
                kind_labels: dict | None = None, class_labels: list[str] | None = None) -> go.Figure:
    """One or several per-word curves over the same words ("all five" overlays them). The legend
    and title say which curves are native (the model's own per-word output), which are a probe
    (AdaSent's classifier on single words) and which are prefix predictions."""
    fig = go.Figure()
    first = curves[0]
    if title is None:  # the localised kind label says it all; else "native: the model's own per-word output"
        title = kind_labels[first.kind] if kind_labels and first.kind in kind_labels else f"{first.kind}: {first.title}"
    kind_labels = kind_labels or {}
    for i, curve in enumerate(curves):
        kind = kind_labels.get(curve.kind, curve.kind)
        name = f"{names[i]} ({kind})" if names else kind
        classes = [esc(c) for c in class_labels] if class_labels else [f"p{c}" for c in range(len(curve.probs[0]) if curve.probs else 0)]
        hover = ["<br>".join(f"{c} {p:.3f}" for c, p in zip(classes, row)) for row in curve.probs]
        fig.add_trace(go.Scatter(
            x=list(range(len(curve.words))), y=curve.scores, mode="lines+markers", name=esc(name),
            line={"color": PALETTE[i % len(PALETTE)], "dash": "solid" if curve.kind == "native" else "dot"},
            customdata=[[esc(w), h] for w, h in zip(curve.words, hover)],
            hovertemplate="%{customdata[0]}: %{y:.3f}<br>%{customdata[1]}<extra>" + esc(name) + "</extra>"))
    low, high = first.score_range
    if low < 0 < high:
        fig.add_hline(y=0, line={"color": "#999", "width": 1})
    _words_axis(fig, first.words)
    fig.update_yaxes(title=esc(first.score_label), range=[low - 0.05 * (high - low), high + 0.05 * (high - low)])
    return _layout(fig, title, 460 if names else 360, showlegend=bool(names), legend={"orientation": "h", "y": -0.3})


def pair_curves(curve_a: WordCurve, curve_b: WordCurve, alignment: WordAlignment, names: tuple[str, str],
                title: str) -> go.Figure:
    """One model's per-word curves on the two sentences of a minimal pair, overlaid on the aligned words:
    a shared word is one x position; a word only one sentence has stands alone, its tick in that
    sentence's colour."""
    fig = go.Figure()
    colours = PALETTE[:2]
    for curve, sentence, name, colour in zip((curve_a, curve_b), ("a", "b"), names, colours):
        fig.add_trace(go.Scatter(
            x=alignment.positions(sentence), y=curve.scores, mode="lines+markers", name=esc(name),
            line={"color": colour, "dash": "solid" if sentence == "a" else "dash"},
            customdata=[esc(w) for w in curve.words],
            hovertemplate="%{customdata}: %{y:.3f}<extra>" + esc(name) + "</extra>"))
    ticks = [esc(word) if i is not None and j is not None else f'<span style="color:{colours[i is None]}">{esc(word)}</span>'
             for word, (i, j) in zip(alignment.labels(), alignment.columns)]
    low, high = curve_a.score_range
    if low < 0 < high:
        fig.add_hline(y=0, line={"color": "#999", "width": 1})
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(ticks))), ticktext=ticks,
                     tickangle=-45 if len(ticks) > 12 else 0)
    fig.update_yaxes(title=esc(curve_a.score_label), range=[low - 0.05 * (high - low), high + 0.05 * (high - low)])
    return _layout(fig, title, 380, legend={"orientation": "h", "y": -0.3})


def probability_bars(labels: list[str], probs: list[float], label: str, title: str = "") -> go.Figure:
    colours = ["#e45756" if l == label else "#9bb7d4" for l in labels]
    fig = go.Figure(go.Bar(x=[esc(l) for l in labels], y=probs, marker_color=colours, text=[f"{p:.2f}" for p in probs],
                           textposition="outside", hovertemplate="%{x}: %{y:.3f}<extra></extra>"))
    fig.update_yaxes(range=[0, 1.08], title="P")
    return _layout(fig, title, 300)


def grouped_probability_bars(labels: list[str], rows: dict[str, list[float]], title: str = "") -> go.Figure:
    fig = go.Figure([go.Bar(name=esc(name), x=[esc(l) for l in labels], y=probs, marker_color=PALETTE[i % len(PALETTE)],
                            hovertemplate="%{x}: %{y:.3f}<extra>" + esc(name) + "</extra>")
                     for i, (name, probs) in enumerate(rows.items())])
    fig.update_yaxes(range=[0, 1.0], title="P")
    return _layout(fig, title, 320, barmode="group", legend={"orientation": "h", "y": -0.25})


@to_figure.register
def _(view: LineCurves) -> go.Figure:
    fig = go.Figure()
    for i, (name, values) in enumerate(view.curves.items()):
        fig.add_trace(go.Scatter(x=list(range(len(values))), y=values, mode="lines+markers", name=esc(name),
                                 line={"color": PALETTE[i % len(PALETTE)]},
                                 customdata=[esc(x) for x in view.x_labels],
                                 hovertemplate="%{customdata}: %{y:.3f}<extra>" + esc(name) + "</extra>"))
    _words_axis(fig, view.x_labels, title=esc(view.x_title))
    fig.update_yaxes(title=esc(view.y_label), range=list(view.y_range) if view.y_range else None)
    return _layout(fig, view.title, 340, legend={"orientation": "h", "y": -0.3})


@to_figure.register
def _(view: Trajectory) -> go.Figure:
    xs, ys = [p[0] for p in view.points], [p[1] for p in view.points]
    labels = [f"{i + 1}. {esc(w)}" for i, w in enumerate(view.words)]
    fig = go.Figure(go.Scatter(
        x=xs, y=ys, mode="lines+markers+text", text=labels, textposition="top center",
        line={"color": "#bbb"}, marker={"size": 11, "color": view.scores, "colorscale": SENTIMENT, "showscale": True,
                                        "colorbar": {"title": "score", "thickness": 12}},
        hovertemplate="%{text}<br>score %{marker.color:.3f}<extra></extra>"))
    fig.update_xaxes(title="PC1", zeroline=True)
    fig.update_yaxes(title="PC2", zeroline=True)
    fig.add_annotation(text=esc(view.axis_note), xref="paper", yref="paper", x=0, y=-0.22, showarrow=False,
                       font={"size": 10, "color": "#666"}, align="left")
    return _layout(fig, view.title, 420, margin={"l": 60, "r": 20, "t": 50, "b": 90})


@to_figure.register
def _(view: Heatmap) -> go.Figure:
    low, high = view.value_range or (None, None)
    fig = go.Figure(go.Heatmap(
        z=view.values, x=list(range(len(view.x_labels))), y=[esc(y) for y in view.y_labels], zmin=low, zmax=high,
        colorscale="Blues", colorbar={"title": esc(view.value_label), "thickness": 12},
        customdata=[[esc(w) for w in view.x_labels]] * len(view.y_labels),
        hovertemplate="%{y}, %{customdata}: %{z:.3f}<extra></extra>"))
    _words_axis(fig, view.x_labels)
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, view.title, max(280, 22 * len(view.y_labels) + 130))


@to_figure.register
def _(view: KMaxGraph) -> go.Figure:
    """Words at the bottom, each k-max layer above; a node sits over the mean position of its children."""
    x = {(0, p): float(i) for i, p in enumerate(view.levels[0])}
    edges = view.edges()
    children: dict[tuple[int, int], list[int]] = {}
    for level, parent, child, _ in edges:
        children.setdefault((level, parent), []).append(child)
    for level in range(1, len(view.levels)):
        for p in view.levels[level]:
            below = [x[(level - 1, c)] for c in children.get((level, p), []) if (level - 1, c) in x]
            x[(level, p)] = sum(below) / len(below) if below else float(p)
    fig = go.Figure()
    max_weight = max((w for *_, w in edges), default=1)
    for lo, hi, width in ((0.0, 0.34, 0.6), (0.34, 0.67, 1.4), (0.67, 1.01, 2.6)):  # three edge widths by weight
        ex, ey = [], []
        for level, parent, child, weight in edges:
            if lo <= weight / max_weight < hi and (level, parent) in x and (level - 1, child) in x:
                ex += [x[(level - 1, child)], x[(level, parent)], None]
                ey += [level - 1, level, None]
        fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line={"color": "#9aa", "width": width},
                                 hoverinfo="skip", showlegend=False))
    nodes = [(level, p, v) for level, (ps, vs) in enumerate(zip(view.levels, view.values)) for p, v in zip(ps, vs)]
    fig.add_trace(go.Scatter(
        x=[x[(l, p)] for l, p, _ in nodes], y=[l for l, _, _ in nodes], mode="markers", showlegend=False,
        marker={"size": 12, "color": [v for *_, v in nodes], "colorscale": "Viridis", "showscale": True,
                "colorbar": {"title": "mean activation", "thickness": 12}, "line": {"width": 1, "color": "#333"}},
        customdata=[[l, p, esc(view.words[p]) if l == 0 and p < len(view.words) else f"position {p}"] for l, p, _ in nodes],
        hovertemplate="level %{customdata[0]}, %{customdata[2]}<br>value %{marker.color:.3f}<extra></extra>"))
    _words_axis(fig, view.words)
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(view.levels))),
                     ticktext=["words"] + [f"layer {l} (k-max)" for l in range(1, len(view.levels))],
                     range=[-0.5, len(view.levels) - 0.5])
    return _layout(fig, view.title, 130 + 90 * len(view.levels))


@to_figure.register
def _(view: Pyramid) -> go.Figure:
    """Unit (t, j) covers words j..j+t-1: level t is drawn as a row of two-column cells starting at
    column 2j + t - 1, so each unit sits centred over its span and the rows form a triangle."""
    n = len(view.words)
    z = [[None] * (2 * n) for _ in range(n)]
    text = [[""] * (2 * n) for _ in range(n)]
    detailed = n <= 80  # hover text for every span is heavy on long sentences
    for t, (scores, gates) in enumerate(zip(view.scores, view.gates), start=1):
        for j, score in enumerate(scores):
            start = 2 * j + t - 1
            if detailed:
                phrase = esc(" ".join(view.words[j:j + t]))
                gate = f"<br>gates left {gates[j][0]:.2f} · right {gates[j][1]:.2f} · compose {gates[j][2]:.2f}" if gates else ""
                info = f"level {t}: {phrase}<br>score {score:.3f}{gate}"
            else:
                info = f"level {t}, words {j + 1}..{j + t}: score {score:.3f}"
            for c in (start, start + 1):
                z[t - 1][c], text[t - 1][c] = score, info
    low, high = view.score_range
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, column_widths=[0.8, 0.2], horizontal_spacing=0.03,
                        subplot_titles=("", "level belief γ_t"))
    fig.add_trace(go.Heatmap(z=z, x=[c / 2 for c in range(2 * n)], y=list(range(1, n + 1)), text=text,
                             hovertemplate="%{text}<extra></extra>", colorscale=SENTIMENT, zmin=low, zmax=high,
                             colorbar={"title": esc(view.score_label), "thickness": 12, "x": 1.02}, hoverongaps=False),
                  row=1, col=1)
    fig.add_trace(go.Bar(x=view.level_beliefs, y=list(range(1, len(view.level_beliefs) + 1)), orientation="h",
                         marker_color="#4c78a8", showlegend=False,
                         customdata=[[f"{p:.2f}" for p in row] for row in view.level_probs],
                         hovertemplate="level %{y}: γ = %{x:.3f}<br>p(class | level) = %{customdata}<extra></extra>"),
                  row=1, col=2)
    fig.update_xaxes(tickmode="array", tickvals=[j + 0.25 for j in range(n)], ticktext=[esc(w) for w in view.words],
                     tickangle=-45 if n > 12 else 0, row=1, col=1)
    fig.update_xaxes(range=[0, 1], row=1, col=2)
    fig.update_yaxes(title="level t (span length)", row=1, col=1)
    return _layout(fig, view.title, max(320, min(900, 28 * n + 160)))


@to_figure.register
def _(view: Table) -> go.Figure:
    columns = list(zip(*view.rows)) if view.rows else [[] for _ in view.columns]
    fig = go.Figure(go.Table(header={"values": [esc(c) for c in view.columns], "align": "left"},
                             cells={"values": [[esc(v) for v in col] for col in columns], "align": "left"}))
    return _layout(fig, view.title, 60 + 28 * (len(view.rows) + 2))
