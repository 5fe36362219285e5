"""Explanation views (core.views) -> SVG figures (demo/svg.py). Pure functions: no model, no torch, no state.

`to_svg(view, ui, caption)` dispatches on the view's type; a new view type needs one function here (the Lab's
summary charts and the line chart are demo/charts.py's). The
view arrives already worded in the UI language (demo.i18n.word_view); the few words a figure adds itself
(axis names, legends) come from demo.i18n too. Every word shown is escaped (demo.svg.text): typed text
shows as typed. Each figure carries its caption (model, checkpoint sha256, commit), so an exported file
says where it came from.
"""

import html
import math
import re
from collections.abc import Sequence
from functools import singledispatch

import demo.svg as svg
from core.views import Heatmap, KMaxGraph, LineCurves, Pyramid, Table, Trajectory, WordCurve
from demo.charts import hover, lines_figure, word_curves, word_width
from demo.i18n import t
from demo.svg import PALETTE, Data, Scale, figure, text

MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+!|~-])")
EDGES_PER_NODE = 3  # the feature graph shows each node's strongest edges; a checkbox shows the rest


def esc(value: str) -> str:
    return html.escape(str(value), quote=False)


def md(value: str) -> str:
    """Text shown in Markdown as typed: HTML escaped, Markdown punctuation backslash-escaped."""
    return MARKDOWN.sub(r"\\\1", esc(value))


@singledispatch
def to_svg(view, ui: str = "en", caption: str = "", name: str = "view") -> str:
    raise TypeError(f"no plot for view type {type(view).__name__}")


@to_svg.register
def _(view: WordCurve, ui: str = "en", caption: str = "", name: str = "view") -> str:
    return word_curves([view], None, f"{view.kind}: {view.title}", {}, None, ui, caption, name)


@to_svg.register
def _(view: LineCurves, ui: str = "en", caption: str = "", name: str = "view") -> str:
    series = [
        (label, values, PALETTE[i % len(PALETTE)], "", hover(view.x_labels, values))
        for i, (label, values) in enumerate(view.curves.items())
    ]
    every = [v for values in view.curves.values() for v in values]
    y_range = view.y_range or (min(every, default=0.0), max(every, default=1.0))
    return lines_figure(
        view.title,
        series,
        [list(range(len(v))) for v in view.curves.values()],
        view.x_labels,
        y_range,
        view.y_label,
        caption,
        name,
        x_title=view.x_title,
        ui=ui,
    )


@to_svg.register
def _(view: Trajectory, ui: str = "en", caption: str = "", name: str = "view") -> str:
    xs, ys = [p[0] for p in view.points], [p[1] for p in view.points]
    width, left, top, plot_h = svg.fit(620), 56, 36, 300
    pad_x, pad_y = 0.1 * (max(xs) - min(xs) or 1), 0.12 * (max(ys) - min(ys) or 1)
    x = Scale(min(xs) - pad_x, max(xs) + pad_x, left, width - 90)
    y = Scale(min(ys) - pad_y, max(ys) + pad_y, top + plot_h, top)
    low, high = min(view.scores), max(view.scores)
    body = [
        svg.y_axis(y, min(ys) - pad_y, max(ys) + pad_y, left, width - 90, "PC2"),
        f'<polyline points="{" ".join(f"{x(a)},{y(b)}" for a, b in zip(xs, ys))}" fill="none" stroke="#bbb"/>',
    ]
    labels = [f"{i + 1}. {word}" for i, word in enumerate(view.words)]
    for label, a, b, score in zip(labels, xs, ys, view.scores):
        body.append(
            f'<circle cx="{x(a)}" cy="{y(b)}" r="6" fill="{svg.colour(score, low, high)}" stroke="#333" '
            f'stroke-width="0.5"><title>{svg.esc(f"{label}: {score:.3f}")}</title></circle>'
        )
    body += [
        text(px, py, label, size=10, anchor=anchor)
        for label, (px, py, anchor) in zip(labels, _point_labels(labels, [(x(a), y(b)) for a, b in zip(xs, ys)]))
        if px is not None
    ]
    body.append(text((left + width - 90) / 2, top + plot_h + 18, "PC1", colour_="#444"))
    body.append(svg.colour_bar(width - 80, top + 20, 160, low, high, svg.RDBU, t("plot_score", ui)))
    note_lines = svg.wrap(view.axis_note, width - 20)
    body += [
        text(8, top + plot_h + 40 + 14 * i, line, size=10, anchor="start", colour_="#666")
        for i, line in enumerate(note_lines)
    ]
    data = Data(
        t("figure_trajectory", ui, n=len(view.words), score=t("plot_score", ui)),
        [t("figure_word", ui), "PC1", "PC2", t("plot_score", ui)],
        [[label, a, b, score] for label, a, b, score in zip(labels, xs, ys, view.scores)],
    )
    return figure(
        "".join(body),
        width - 80 + svg.colour_bar_width(low, high, t("plot_score", ui)),
        top + plot_h + 40 + 14 * len(note_lines),
        view.title,
        caption,
        name,
        data=data,
        ui=ui,
    )


def _point_labels(labels: list[str], points: list[tuple[float, float]]) -> list[tuple]:
    """Where each point's label goes: above, below, right or left of its point, the first place that
    overprints neither a label already placed nor a point; (None, None, None) where every place would (its
    point's hover still names it)."""
    taken: list[tuple[float, float, float, float]] = [(px - 6, py - 6, px + 6, py + 6) for px, py in points]
    placed = []
    for label, (px, py) in zip(labels, points):
        w = svg.text_width(label, 10)
        spot: tuple[float, float, str] | tuple[None, None, None] = (None, None, None)
        for tx, ty, anchor, x0 in (
            (px, py - 9, "middle", px - w / 2),
            (px, py + 17, "middle", px - w / 2),
            (px + 9, py + 4, "start", px + 9),
            (px - 9, py + 4, "end", px - 9 - w),
        ):
            box = (x0, ty - 10, x0 + w, ty + 2)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in taken):
                taken.append(box)
                spot = (round(tx, 1), round(ty, 1), anchor)
                break
        placed.append(spot)
    return placed


def _heat_cells(
    rows: Sequence[Sequence[float | None]],
    x0: float,
    y0: float,
    cell_w: float,
    cell_h: float,
    low: float,
    high: float,
    stops: list[str],
    hovers: list[list[str]],
) -> str:
    return "".join(
        f'<rect x="{round(x0 + j * cell_w, 1)}" y="{round(y0 + i * cell_h, 1)}" width="{round(cell_w, 1)}" '
        f'height="{round(cell_h, 1)}" fill="{svg.colour(v, low, high, stops)}">'
        f"<title>{svg.esc(hovers[i][j])}</title></rect>"
        for i, row in enumerate(rows)
        for j, v in enumerate(row)
        if v is not None
    )


@to_svg.register
def _(view: Heatmap, ui: str = "en", caption: str = "", name: str = "view") -> str:
    n = len(view.x_labels)
    every = [v for row in view.values for v in row]
    low, high = view.value_range or (min(every, default=0.0), max(every, default=1.0))
    left = 20 + max((svg.text_width(label) for label in view.y_labels), default=20)
    bar_room, narrow = svg.colour_bar_width(low, high, view.value_label), svg.narrow()
    # the cells' width: the room less the labels and the colour bar beside them (narrow: under them)
    across = (
        svg.fit(math.inf) - left - 8
        if narrow
        else min(word_width(n) - left - 90, svg.fit(math.inf) - left - 16 - bar_room)
    )
    cell_w, cell_h, top = max(8, min(56, across / max(n, 1))), 20, 36
    hovers = [
        [f"{row_label}, {word}: {v:.3f}" for word, v in zip(view.x_labels, row)]
        for row_label, row in zip(view.y_labels, view.values)
    ]
    body = [_heat_cells(view.values, left, top, cell_w, cell_h, low, high, svg.BLUES, hovers)]
    body += [
        text(left - 6, top + (i + 0.7) * cell_h, label, size=10, anchor="end") for i, label in enumerate(view.y_labels)
    ]
    bottom = top + cell_h * len(view.y_labels) + 2
    columns = [left + (j + 0.5) * cell_w for j in range(n)]
    body.append(svg.word_ticks(view.x_labels, columns, bottom))
    height = max(bottom + svg.words_height(view.x_labels, columns) + 8, top + 170)
    if narrow:
        body.append(svg.colour_bar(left, height + 24, 120, low, high, svg.BLUES, view.value_label))
        width, height = max(left + n * cell_w + 8, left + bar_room), height + 150
    else:
        body.append(svg.colour_bar(left + n * cell_w + 16, top + 20, 120, low, high, svg.BLUES, view.value_label))
        width = left + n * cell_w + 16 + bar_room
    data = Data(
        t("figure_heatmap", ui, value=view.value_label, rows=len(view.y_labels), n=n),
        [t("figure_row", ui), *view.x_labels],
        [[label, *row] for label, row in zip(view.y_labels, view.values)],
    )
    return figure("".join(body), width, height, view.title, caption, name, data=data, ui=ui)


def edge_paths(edges: list[tuple]) -> str:
    """Edges (x1, y1, x2, y2, stroke width) as one <path> per width, a move and a line per edge: a third of the
    bytes of a <line> each (a 20-word DCNN graph has thousands), drawn alike (their group holds colour and opacity)."""
    by_width: dict[float, list[str]] = {}
    for x1, y1, x2, y2, width in edges:
        by_width.setdefault(width, []).append(f"M{x1} {y1}L{x2} {y2}")
    return "".join(f'<path stroke-width="{width}" d="{"".join(d)}"/>' for width, d in by_width.items())


@to_svg.register
def _(view: KMaxGraph, ui: str = "en", caption: str = "", name: str = "view") -> str:
    """Words at the bottom, each k-max layer above; a node sits over the mean position of its children, moved
    aside as little as keeps it clear of its neighbours (svg.spread). Each node shows its EDGES_PER_NODE strongest
    edges to the level below; a checkbox adds the others (a 20-word sentence has thousands)."""
    n_levels = len(view.levels)
    every = [v for values in view.values for v in values]
    low, high = min(every, default=0.0), max(every, default=1.0)
    bar_room = svg.colour_bar_width(low, high, t("graph_value", ui))
    width = word_width(len(view.words)) - (max(0, bar_room - 60) if svg.ROOM.get() else 0)
    # a layer's name left of its row; on a narrow page above it, so that the words get the width
    left, row_h, top = (24, 80, 56) if svg.narrow() else (120, 80, 44)
    x = Scale(0, max(len(view.words) - 1, 1), left, width - 90)
    y = {level: top + (n_levels - 1 - level) * row_h for level in range(n_levels)}
    # a node's radius: the fullest level's nodes side by side within the width, never overlapping (svg.spread)
    fullest = max((len(positions) for positions in view.levels), default=1)
    radius = min(6.0, max(2.5, ((x.end - x.start) / max(fullest - 1, 1) - 1) / 2))
    pos = {(0, p): x(i) for i, p in enumerate(view.levels[0])}  # a node's x in px
    edges = view.edges()
    children: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for level, parent, child, weight in edges:
        children.setdefault((level, parent), []).append((weight, child))
    for level in range(1, n_levels):
        wanted = {}
        for p in view.levels[level]:
            below = [pos[(level - 1, c)] for _, c in children.get((level, p), []) if (level - 1, c) in pos]
            wanted[p] = sum(below) / len(below) if below else x(p)
        order = sorted(wanted, key=wanted.__getitem__)
        placed = svg.spread([wanted[p] for p in order], 2 * radius + 1, x.start, x.end)
        pos |= {(level, p): px for p, px in zip(order, placed)}
    max_weight = max((w for *_, w in edges), default=1)
    strong: list[tuple] = []
    weak: list[tuple] = []
    for (level, parent), kids in children.items():
        ranked = sorted(kids, reverse=True)
        for rank, (weight, child) in enumerate(ranked):
            if (level - 1, child) not in pos:
                continue
            edge = (pos[(level - 1, child)], y[level - 1], pos[(level, parent)], y[level])
            (strong if rank < EDGES_PER_NODE else weak).append((*edge, round(0.5 + 2.5 * weight / max_weight, 2)))
    body = [f'<g class="strong-edges" stroke="#8aa" opacity="0.7" fill="none">{edge_paths(strong)}</g>']
    rows = []  # the table: a row per node, bottom level first
    nodes = []  # their circles, outlined by their group (one stroke for hundreds of nodes)
    for level, (positions, values) in enumerate(zip(view.levels, view.values)):
        label = t("graph_words", ui) if level == 0 else t("graph_layer", ui, layer=level)
        body.append(text(8, y[level] + (4 if left > 24 else -12), label, size=10, anchor="start", colour_="#555"))
        for p, v in zip(positions, values):
            what = view.words[p] if level == 0 and p < len(view.words) else t("graph_position", ui, position=p)
            rows.append([label, what, v])
            nodes.append(
                f'<circle cx="{pos[(level, p)]}" cy="{y[level]}" r="{round(radius, 1)}" '
                f'fill="{svg.colour(v, low, high, svg.VIRIDIS)}">'
                f"<title>{svg.esc(f'{label}, {what}: {v:.3f}')}</title></circle>"
            )
    body.append(f'<g stroke="#333" stroke-width="0.6">{"".join(nodes)}</g>')
    bottom = y[0] + 8
    body.append(svg.word_ticks(view.words, x, bottom))
    body.append(svg.colour_bar(width - 60, top + 20, 140, low, high, svg.VIRIDIS, t("graph_value", ui)))
    width += max(0, bar_room - 60)
    shown = t("graph_edges", ui, shown=len(strong), total=len(strong) + len(weak), per_node=EDGES_PER_NODE)
    # the other edges wait in a <template> (inert: no style, no layout) until the checkbox adds them (EXPORT_JS)
    controls = (
        f'<label class="graph-edges"><input type="checkbox" class="all-edges"> {svg.esc(shown)}</label>'
        f'<template class="weak-edges"><svg><g class="weak-edges" stroke="#bcc" opacity="0.5" fill="none">'
        f"{edge_paths(weak)}</g></svg></template>"
        if weak
        else ""
    )
    data = Data(
        t("figure_graph", ui, n=len(view.words), layers=n_levels - 1, value=t("graph_value", ui)),
        [t("figure_level", ui), t("figure_node", ui), t("graph_value", ui)],
        rows,
    )
    height = bottom + svg.words_height(view.words, x) + 8
    return figure("".join(body), width, height, view.title, caption, name, controls, data=data, ui=ui)


GATE_COLOURS = ("#1b9e77", "#d4a017", "#222222")  # w_l, w_r, w_c: apart from the cells' red-blue scores


def _gate_bar(x: float, y: float, width: float, height: float, gates: tuple[float, float, float]) -> str:
    """A unit's local gates (Eq. 5, 7: copy the left unit below, copy the right one, compose anew) as one bar
    split in their proportions, outlined in white so it stands apart from the cell's colour."""
    parts, px = [], x
    for weight, fill in zip(gates, GATE_COLOURS):
        parts.append(
            f'<rect x="{round(px, 1)}" y="{round(y, 1)}" width="{round(width * weight, 1)}" '
            f'height="{round(height, 1)}" fill="{fill}" class="gate"/>'
        )
        px += width * weight
    outline = f'<rect x="{round(x, 1)}" y="{round(y, 1)}" width="{round(width, 1)}" height="{round(height, 1)}" '
    return "".join(parts) + outline + 'fill="none" stroke="#fff" stroke-width="0.8"/>'


def _swatches(title: str, items: list[tuple[str, str]], x: float, y: float, width: float) -> tuple[str, float]:
    """A legend: its title, then (name, colour) square swatches, in rows no wider than `width`; the SVG and its
    height."""
    titles = svg.wrap(title, width)  # a title wider than the figure takes lines of its own
    parts = [text(x, y + 18 * i, line, anchor="start", colour_="#444") for i, line in enumerate(titles)]
    px, py = x + svg.text_width(titles[-1]) + 10, y + 18 * (len(titles) - 1)
    for name, fill in items:
        w = 16 + svg.text_width(name)
        if px + w > x + width and px > x:
            px, py = x, py + 18
        parts.append(f'<rect x="{round(px, 1)}" y="{py - 10}" width="12" height="12" fill="{fill}"/>')
        parts.append(text(px + 16, py, name, anchor="start"))
        px += w + 14
    return f'<g class="legend">{"".join(parts)}</g>', py - y + 18


# the pyramid's numbers (levels, beliefs) at 11 px: a long sentence's pyramid, shrunk to its room (at most to
# svg.LEGIBLE), keeps them at 10 px
PYRAMID_TEXT = 11


@to_svg.register
def _(view: Pyramid, ui: str = "en", caption: str = "", name: str = "view") -> str:
    """Unit (t, j) covers words j..j+t-1: level t is a row of cells starting half a word in per level, so
    each unit sits centred over its span and the rows form a triangle. Each unit above level 1 carries its
    local gates as a bar along its foot (a legend names them); beside the triangle the level beliefs γ_t,
    on a scale from 0 to 1 with each value written where there is room. On a narrow page the triangle and the
    beliefs share its width, and the score's colour bar goes under the figure."""
    n, narrow = len(view.words), svg.narrow()
    left, bar_w, gap = (40, 70, 16) if narrow else (70, 160, 30)
    low, high = view.score_range
    beside = gap + bar_w + 30 + (0 if narrow else svg.colour_bar_width(low, high, view.score_label))
    across = min(760, svg.fit(math.inf) - left - beside)  # the triangle's width: the room less what is beside it
    cell_w = max(6 if narrow else 10, min(50, across / max(n, 1)))
    cell_h, top = max(8, min(22, 600 / max(n, 1))), 36
    gate_h = max(3.0, 0.35 * cell_h)
    body, rows = [], []  # rows: the table, a row per unit
    level_belief = dict(enumerate(view.level_beliefs, start=1))
    for level, (scores, gates) in enumerate(zip(view.scores, view.gates), start=1):
        for j, s in enumerate(scores):  # unit (t, j), centred over words j..j+t-1
            gate = t("pyramid_gates", ui, left=gates[j][0], right=gates[j][1], compose=gates[j][2]) if gates else ""
            span = " ".join(view.words[j : j + level])
            rows.append([level, span, s, level_belief.get(level), *(gates[j] if gates else [None] * 3)])
            hover = f"{t('pyramid_level', ui, level=level)}: {span}: {s:.3f}{gate}"
            x, y = left + (j + (level - 1) / 2) * cell_w, top + (level - 1) * cell_h
            body.append(
                f'<rect x="{round(x, 1)}" y="{round(y, 1)}" width="{round(cell_w, 1)}" height="{round(cell_h, 1)}" '
                f'fill="{svg.colour(s, low, high)}"><title>{svg.esc(hover)}</title></rect>'
            )
            if gates:
                body.append(_gate_bar(x + 1.5, y + cell_h - gate_h - 1, cell_w - 3, gate_h, gates[j]))
    body += [
        text(left - 6, top + (level - 0.3) * cell_h, str(level), size=PYRAMID_TEXT, anchor="end")
        for level in range(1, n + 1)
        if n <= 30 or level % 5 == 0 or level == 1
    ]
    body.append(text(16, top + n * cell_h / 2, t("pyramid_axis", ui), size=PYRAMID_TEXT, rotate=-90))
    bottom = top + n * cell_h + 2
    columns = [left + (j + 0.5) * cell_w for j in range(n)]
    body.append(svg.word_ticks(view.words, columns, bottom))
    bars_x = left + n * cell_w + gap
    beliefs = Scale(0, 1, bars_x, bars_x + bar_w)
    body.append(text(bars_x + bar_w / 2, top - 4, t("pyramid_beliefs", ui), size=PYRAMID_TEXT))
    scale = [  # the beliefs' scale: grid lines through the bars, their values under them
        f'<line x1="{beliefs(v)}" x2="{beliefs(v)}" y1="{top}" y2="{bottom}" stroke="#d1d5db"/>'
        + text(beliefs(v), bottom + 11, f"{v:g}", size=PYRAMID_TEXT, colour_="#555")
        for v in (0, 0.5, 1)
    ]
    body.append(f'<g class="belief-scale">{"".join(scale)}</g>')
    for level, (belief, probs) in enumerate(zip(view.level_beliefs, view.level_probs), start=1):
        hover = f"{t('pyramid_level', ui, level=level)}: γ = {belief:.3f}; p = " + ", ".join(f"{p:.2f}" for p in probs)
        y = top + (level - 1) * cell_h
        body.append(
            f'<rect x="{bars_x}" y="{round(y + 1, 1)}" width="{round(beliefs(belief) - bars_x, 1)}" '
            f'height="{round(cell_h - 2, 1)}" fill="#777"><title>{svg.esc(hover)}</title></rect>'
        )
        if cell_h >= PYRAMID_TEXT + 1:  # a value a projector shows: the bar's length alone reads to a tenth at best
            value = f"{belief:.2f}"
            body.append(text(beliefs(belief) + 3, y + cell_h / 2 + 3.5, value, size=PYRAMID_TEXT, anchor="start"))
    bar_right = bars_x + bar_w + 30
    height = max(bottom + svg.words_height(view.words, columns) + 8, top + 170)
    if narrow:
        body.append(svg.colour_bar(left, height + 24, 120, low, high, svg.RDBU, view.score_label))
        width, height = max(bar_right, left + svg.colour_bar_width(low, high, view.score_label)), height + 150
    else:
        body.append(svg.colour_bar(bar_right, top + 40, 120, low, high, svg.RDBU, view.score_label))
        width = bar_right + svg.colour_bar_width(low, high, view.score_label)
    names = [t(f"pyramid_gate_{part}", ui) for part in ("left", "right", "compose")]
    if any(view.gates):  # a long sentence's pyramid comes without gates (core.views.Pyramid.detail_words)
        items, legend_h = _swatches(
            t("pyramid_gate_title", ui), list(zip(names, GATE_COLOURS)), 8, height + 10, width - 16
        )
        body.append(items)
        height += legend_h + 10
    gated = any(view.gates)
    data = Data(
        t("figure_pyramid", ui, units=len(rows), n=n, score=view.score_label),
        [t("figure_level", ui), t("graph_words", ui), view.score_label, t("pyramid_beliefs", ui), *names[: 3 * gated]],
        [row[: 7 if gated else 4] for row in rows],
    )
    return figure("".join(body), width, height, view.title, caption, name, data=data, ui=ui)


@to_svg.register
def _(view: Table, ui: str = "en", caption: str = "", name: str = "view") -> str:
    """Every row and every cell in full: long cells wrap."""
    cells = [[str(c) for c in view.columns]] + [[str(v) for v in row] for row in view.rows]
    widths = [
        max(svg.text_width(cells[0][c], 12) + 16, min(300, max(svg.text_width(row[c]) for row in cells) + 14))
        for c in range(len(view.columns))
    ]
    while sum(widths) + 16 > svg.fit(math.inf) and max(widths) > 60:  # wider than the room: the widest column wraps
        widths[widths.index(max(widths))] -= 4
    wrapped = [[svg.wrap(v, w - 13, 12 if r == 0 else 11) for v, w in zip(row, widths)] for r, row in enumerate(cells)]
    body, top = [], 36
    for r, row in enumerate(wrapped):
        h = 14 * max(len(lines) for lines in row) + 8
        if r == 0:
            body.append(f'<rect x="8" y="{top}" width="{sum(widths)}" height="{h}" fill="#eef2f7"/>')
        body.append(f'<line x1="8" x2="{8 + sum(widths)}" y1="{top + h}" y2="{top + h}" stroke="#ddd"/>')
        x0 = 8.0
        for lines, w in zip(row, widths):
            body += [
                text(x0 + 7, top + 15 + 14 * i, line, anchor="start", weight="600" if r == 0 else "normal")
                for i, line in enumerate(lines)
            ]
            x0 += w
        top += h
    data = Data(t("figure_table_view", ui, rows=len(view.rows)), cells[0], [list(row) for row in view.rows])
    return figure(
        "".join(body), svg.fit(max(400, sum(widths) + 16)), top + 8, view.title, caption, name, data=data, ui=ui
    )
