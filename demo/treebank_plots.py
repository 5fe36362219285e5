"""The Treebank tab's figures (core.analysis.treebank.TreeView, core.analysis.dataset_view.DatasetView -> plotly: the tree
is zoomable and hoverable). Pure functions like demo/plots.py, whose escaping and palette they use; words
and labels arrive already in the UI language."""

import plotly.graph_objects as go

from core.analysis.treebank import TreeView
from demo.plots import PALETTE, esc

SYMBOLS = {5: ["−−", "−", "0", "+", "++"], 2: ["−", "+"]}  # gold label inside a node, by number of classes
NO_GOLD = "#bdbdbd"
SQUARE = 0.17  # a model's prediction square: its width in word units, beside the others under the node


def _words_axis(fig: go.Figure, words: list[str], **axis) -> None:
    """Words as x tick labels at positions 0..n-1 (a categorical axis would merge repeated words)."""
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(words))), ticktext=[esc(w) for w in words],
                     tickangle=-45 if len(words) > 12 else 0, **axis)


def _layout(fig: go.Figure, title: str, height: int, **layout) -> go.Figure:
    layout.setdefault("margin", {"l": 60, "r": 20, "t": 50, "b": 60})
    fig.update_layout(title={"text": esc(title), "font": {"size": 14}}, height=height, template="plotly_white", **layout)
    return fig


def label_symbols(labels: list[str]) -> list[str]:
    return SYMBOLS.get(len(labels), [label[:2] for label in labels])


def _sentiment_colour(label: int, classes: int) -> str:
    """Red (the first, most negative class) .. blue (the last), as demo/plots.SENTIMENT (RdBu)."""
    scale = ["#b2182b", "#ef8a62", "#d9d9d9", "#67a9cf", "#2166ac"]
    return scale[round(label * (len(scale) - 1) / max(1, classes - 1))]


def tree_figure(view: TreeView, labels: list[str], model_names: list[str], title: str) -> go.Figure:
    """The gold tree, leaves (the words) on the x axis, each node above the middle of its span at its
    height: a circle with the gold label, coloured by how many models predict it, and one small square
    per model under it, coloured by that model's prediction. Hover: the phrase and every prediction."""
    fig = go.Figure()
    x = [(n.start + n.end - 1) / 2 for n in view.nodes]
    y = [n.height for n in view.nodes]
    edges_x, edges_y = [], []
    for n in view.nodes:
        if n.parent is not None:
            edges_x += [x[n.parent], x[n.id], None]
            edges_y += [y[n.parent], y[n.id], None]
    fig.add_trace(go.Scatter(x=edges_x, y=edges_y, mode="lines", line={"color": "#9e9e9e", "width": 1},
                             hoverinfo="skip", showlegend=False))
    symbols, k = label_symbols(labels), len(view.models)
    hover = []
    for n in view.nodes:
        phrase = n.text if len(n.text) <= 90 else n.text[:87] + "…"
        rows = [f"{esc(name)}: {esc(labels[n.predictions[m]])} ({n.confidence[m]:.2f})"
                + (" ✓" if n.predictions[m] == n.gold else "") for m, name in zip(view.models, model_names)]
        gold = esc(labels[n.gold]) if n.gold is not None else "–"
        hover.append(f"<b>{esc(phrase)}</b><br>gold: {gold}<br>" + "<br>".join(rows))
    fig.add_trace(go.Scatter(
        x=x, y=y, mode="markers+text", text=[symbols[n.gold] if n.gold is not None else "·" for n in view.nodes],
        textfont={"size": 9, "color": "#111"}, hovertext=hover, hoverinfo="text", showlegend=False,
        marker={"size": 17, "line": {"width": 1, "color": "#555"},
                "color": [_agreement_colour(n.agree / k) if n.gold is not None else NO_GOLD for n in view.nodes]}))
    offsets = [(j - (k - 1) / 2) * SQUARE for j in range(k)]  # one trace for every square: plotly validates per trace
    fig.add_trace(go.Scatter(
        x=[xi + o for xi in x for o in offsets], y=[yi - 0.42 for yi in y for _ in offsets], mode="markers",
        hoverinfo="skip", showlegend=False,
        marker={"symbol": "square", "size": 6, "line": {"width": 0.5, "color": "#333"},
                "color": [_sentiment_colour(n.predictions[m], len(labels)) for n in view.nodes for m in view.models]}))
    _words_axis(fig, view.words, showgrid=False, zeroline=False, range=[-0.8, len(view.words) - 0.2])
    if len(view.words) > 12:
        fig.update_xaxes(tickangle=-65, tickfont={"size": 11})
    top = max(y)
    fig.update_yaxes(visible=False, range=[-0.8, top + 0.6])
    return _layout(fig, title, height=160 + 30 * (top + 1), margin={"l": 20, "r": 20, "t": 40, "b": 110})


def _agreement_colour(share: float) -> str:
    """Red (no model right) .. yellow .. green (every model right)."""
    scale = ["#d73027", "#fc8d59", "#fee08b", "#d9ef8b", "#91cf60", "#1a9850"]
    return scale[round(share * (len(scale) - 1))]


def length_figure(buckets: list[dict], title: str, x_title: str, y_title: str, count_title: str) -> go.Figure:
    """Accuracy per length bucket (Socher et al. 2013, Fig. 4), with the number of items as bars."""
    names = [b["bucket"] for b in buckets]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=names, y=[b["n"] for b in buckets], name=esc(count_title), yaxis="y2",
                         marker={"color": "#e0e0e0"}, hovertemplate="%{x}: %{y}<extra></extra>"))
    fig.add_trace(go.Scatter(x=names, y=[b["accuracy"] for b in buckets], mode="lines+markers", name=esc(y_title),
                             line={"color": PALETTE[0], "width": 3}, hovertemplate="%{x}: %{y:.1%}<extra></extra>"))
    fig.update_layout(xaxis={"title": esc(x_title), "type": "category"},
                      yaxis={"title": esc(y_title), "tickformat": ".0%", "range": [0, 1]},
                      yaxis2={"title": esc(count_title), "overlaying": "y", "side": "right", "showgrid": False},
                      legend={"orientation": "h", "x": 1, "xanchor": "right", "y": 1.02, "yanchor": "bottom"})
    return _layout(fig, title, height=360)


def confusion_figure(confusion: list[list[int]], labels: list[str], gold_title: str, predicted_title: str) -> go.Figure:
    """Counts (rows gold, columns predicted); colour = the share of the gold row."""
    shares = [[c / max(1, sum(row)) for c in row] for row in confusion]
    names = [esc(label) for label in labels]
    fig = go.Figure(go.Heatmap(z=shares, x=names, y=names, colorscale="Blues", zmin=0, zmax=1, text=confusion,
                               texttemplate="%{text}", hovertemplate="%{y} → %{x}: %{text}<extra></extra>", showscale=False))
    fig.update_layout(xaxis={"title": esc(predicted_title)}, yaxis={"title": esc(gold_title), "autorange": "reversed"})
    return _layout(fig, "", height=360, margin={"l": 110, "r": 20, "t": 20, "b": 80})
