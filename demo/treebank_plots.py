"""The Treebank tab's figures (core.analysis.treebank.TreeView, core.analysis.dataset_view.DatasetView -> SVG,
drawn by demo/svg.py like the Lab's figures). Pure functions like demo/plots.py; words and labels arrive
already in the UI language. Every node of the tree is a link that opens its phrase in the Lab, in a new browser
tab: the tree stays where it was."""

import math

import demo.svg as svg
from core.analysis.treebank import TreeView
from demo.i18n import t
from demo.links import LinkState, state_to_query
from demo.svg import PALETTE, Data, Scale, figure, text

SYMBOLS = {5: ["−−", "−", "0", "+", "++"], 2: ["−", "+"]}  # gold label inside a node, by number of classes
NO_GOLD = "#ffffff"
ROW = 58  # pixels from one depth of the tree to the next
RADIUS = 12
SQUARE = 7  # a model's prediction square under its node
LINE = 2 * RADIUS + SQUARE + 9  # a word's line in the sideways tree (a narrow page): its leaf and its squares


def label_symbols(labels: list[str]) -> list[str]:
    return SYMBOLS.get(len(labels), [label[:2] for label in labels])


def node_link(phrase: str, task: str) -> str:
    """The Lab with the node's phrase on the tree's task (the Lab's own link: ?text=...&task=...)."""
    return "?" + state_to_query(LinkState(text=phrase, task=task))


def _slot(word: str, models: int) -> float:
    return max(2 * RADIUS, models * (SQUARE + 1), svg.text_width(word, 12)) + 14


def tree_layout(view: TreeView) -> tuple[dict[int, float], dict[int, int], list[float]]:
    """x of every node (a leaf over its word; a parent over the middle of its children), its depth from the
    root, and the x of every word: each word gets the room its text (and its leaf's row of model squares)
    needs, written horizontally."""
    centres, x = [], 16.0
    for word in view.words:
        slot = _slot(word, len(view.models))
        centres.append(x + slot / 2)
        x += slot
    depth: dict[int, int] = {}
    for n in view.nodes:  # pre-order: a parent before its children
        depth[n.id] = 0 if n.parent is None else depth[n.parent] + 1
    pos: dict[int, float] = {}
    for n in reversed(view.nodes):  # children before their parent
        kids = [k.id for k in view.nodes if k.parent == n.id]
        pos[n.id] = sum(pos[k] for k in kids) / len(kids) if kids else (centres[n.start] + centres[n.end - 1]) / 2
    return pos, depth, centres


def tree_figure(
    view: TreeView,
    labels: list[str],
    model_names: list[str],
    title: str,
    gold_word: str = "gold",
    caption: str = "",
    ui: str = "en",
) -> str:
    """The gold tree, root on top and one row per depth, the words along the bottom under their leaves. A
    node: a circle in its gold class's colour (svg.class_colour) with the gold symbol, and one small square
    per model under it in the colour of that model's prediction. Each node links to the Lab with its phrase;
    its hover (the link's name) names the phrase and every prediction, and so does its row of the table."""
    pos, depth, centres = tree_layout(view)
    deepest, top = max(depth.values()), 44
    symbols, k, classes = label_symbols(labels), len(view.models), len(labels)
    top_down_width = centres[-1] + _slot(view.words[-1], k) / 2 + 16
    # sideways (the root on the left, a line per word) on a narrow page, or where a long sentence drawn top-down
    # would shrink its words below 10 px (21 words at 768 px: 0.54x)
    if svg.narrow() or not svg.legible(top_down_width):
        longest = max(svg.text_width(word, 12) for word in view.words)
        step = max(RADIUS + 6, min(ROW, (svg.fit(math.inf) - 2 * RADIUS - longest - 40) / max(deepest, 1)))
        lines: dict[int, float] = {n.id: top + n.start * LINE for n in view.nodes if n.end - n.start == 1}
        for n in reversed(view.nodes):  # children before their parent
            kids = [lines[k.id] for k in view.nodes if k.parent == n.id]
            lines.setdefault(n.id, sum(kids) / max(len(kids), 1))
        y = {n.id: round(lines[n.id], 1) for n in view.nodes}
        leaf_x = 16 + RADIUS + deepest * step
        pos = {n.id: leaf_x if n.end - n.start == 1 else 16 + RADIUS + depth[n.id] * step for n in view.nodes}
        words = [
            text(leaf_x + RADIUS + 8, top + i * LINE + 4, word, size=12, anchor="start", colour_="#222")
            for i, word in enumerate(view.words)
        ]
        width, height = leaf_x + RADIUS + 8 + longest + 16, top + len(view.words) * LINE
    else:
        y = {n.id: top + (deepest if n.end - n.start == 1 else depth[n.id]) * ROW for n in view.nodes}
        words_y = top + deepest * ROW + RADIUS + 2 * SQUARE + 18
        words = [text(round(cx, 1), words_y, word, size=12, colour_="#222") for word, cx in zip(view.words, centres)]
        width, height = top_down_width, words_y + 12
    edges = "".join(
        f'<line x1="{pos[n.parent]}" y1="{y[n.parent]}" x2="{pos[n.id]}" y2="{y[n.id]}"/>'
        for n in view.nodes
        if n.parent is not None
    )
    body, table = [f'<g stroke="#9e9e9e" stroke-width="1.2">{edges}</g>'], []
    for n in view.nodes:
        cx, cy = round(pos[n.id], 1), y[n.id]
        fill = svg.class_colour(n.gold, classes) if n.gold is not None else NO_GOLD
        predicted = [
            f"{labels[n.predictions[m]]} ({n.confidence[m]:.2f})" + (" ✓" if n.predictions[m] == n.gold else "")
            for m in view.models
        ]
        gold = labels[n.gold] if n.gold is not None else "–"
        table.append([n.text, gold, *predicted])
        rows = [f"{name}: {p}" for name, p in zip(model_names, predicted)]
        hover = "\n".join([n.text, f"{gold_word}: {gold}", *rows])
        squares = "".join(
            f'<rect x="{round(cx + (j - k / 2) * (SQUARE + 1), 1)}" y="{cy + RADIUS + 3}" width="{SQUARE}" '
            f'height="{SQUARE}" fill="{svg.class_colour(n.predictions[m], classes)}" stroke="#333" stroke-width="0.4"/>'
            for j, m in enumerate(view.models)
        )
        body.append(
            f'<a class="tree-node" href="{svg.esc(node_link(n.text, view.task))}" target="_blank" rel="noopener" '
            f'data-node="{n.id}"><title>{svg.esc(hover)}</title>'
            f'<circle cx="{cx}" cy="{cy}" r="{RADIUS}" fill="{fill}" stroke="#444" stroke-width="1"/>'
            + text(
                cx,
                cy + 4,
                symbols[n.gold] if n.gold is not None else "·",
                size=11,
                weight="700",
                colour_=svg.ink(fill),
            )
            + f"{squares}</a>"
        )
    data = Data(t("figure_tree", ui, nodes=len(view.nodes)), [t("figure_phrase", ui), gold_word, *model_names], table)
    return figure("".join(body + words), width, height, title, caption, "treebank-tree", data=data, ui=ui, links=True)


def length_figure(buckets: list[dict], title: str, x_title: str, y_title: str, count_title: str, ui: str = "en") -> str:
    """Accuracy per length bucket (Socher et al. 2013, Fig. 4) as a line, the number of items as grey bars, their
    counts in a row above the plot (upright where one is wider than its slot): never under the line. A bucket's
    name is never broken (svg.word_ticks slants them where they do not fit)."""
    names, counts = [str(b["bucket"]) for b in buckets], [str(b["n"]) for b in buckets]
    width, left, plot_h = svg.fit(max(420, 120 + 70 * len(names))), 56, 220
    right = width - 20
    slot = (right - left) / max(1, len(names))
    upright = any(svg.text_width(count, 10) > slot - 2 for count in counts)
    top = 36 + (4 + max((svg.text_width(count, 10) for count in counts), default=0) if upright else 14)
    y = Scale(0, 1.0, top + plot_h, top)
    most = max((b["n"] for b in buckets), default=1) or 1
    body = [svg.y_axis(y, 0, 1.0, left, right, y_title)]
    centres = [left + (i + 0.5) * slot for i in range(len(buckets))]
    for cx, b, count in zip(centres, buckets, counts):
        h = round(plot_h * b["n"] / most, 1)
        body.append(
            f'<rect x="{round(cx - 0.3 * slot, 1)}" y="{top + plot_h - h}" width="{round(0.6 * slot, 1)}" '
            f'height="{h}" fill="#e0e0e0"><title>{svg.esc(str(b["bucket"]))}: {b["n"]}</title></rect>'
        )
        if upright:  # reading upwards from the plot's top, centred over the bar
            body.append(text(round(cx + 3.5, 1), top - 4, count, 10, "start", "#666", rotate=-90))
        else:
            body.append(text(round(cx, 1), top - 6, count, size=10, colour_="#666"))
    body.append(svg.word_ticks(names, centres, top + plot_h + 4))
    points = [(cx, y(b["accuracy"])) for cx, b in zip(centres, buckets) if b["accuracy"] is not None]
    body.append(
        f'<polyline points="{" ".join(f"{round(a, 1)},{c}" for a, c in points)}" fill="none" '
        f'stroke="{PALETTE[0]}" stroke-width="3"/>'
    )
    body += [svg.marker(0, a, c, PALETTE[0], r=4) for a, c in points]
    below = top + plot_h + 4 + svg.words_height(names, centres)
    body.append(text((left + right) / 2, below + 12, x_title, colour_="#444"))
    items, legend_h = svg.legend(
        [(y_title, PALETTE[0], "", 0), (count_title, "#cfcfcf", "", None)], left, below + 34, right - left
    )
    body.append(items)
    data = Data(
        t("figure_length", ui, y=y_title, n=len(buckets)),
        [x_title, y_title, count_title],
        [[b["bucket"], b["accuracy"], b["n"]] for b in buckets],
    )
    return figure("".join(body), width, below + 34 + legend_h, title, name="treebank-length", data=data, ui=ui)


def confusion_figure(
    confusion: list[list[int]],
    labels: list[str],
    gold_title: str,
    predicted_title: str,
    title: str = "",
    ui: str = "en",
) -> str:
    """Counts (rows gold, columns predicted); colour = the share of the gold row."""
    widest = max((svg.text_width(label) for label in labels), default=0)
    left, top, n = 30 + widest, 40, len(labels)
    cell = max(30, min(max(48, widest + 12), (svg.fit(math.inf) - left - 20) / max(n, 1)))  # within the room
    heads = [svg.wrap(label, cell - 4) for label in labels]  # a column's class name in lines as wide as its cell
    body = []
    for i, row in enumerate(confusion):
        total = max(1, sum(row))
        for j, count in enumerate(row):
            share, x0, y0 = count / total, left + j * cell, top + i * cell * 0.6
            fill = svg.colour(share, 0, 1, svg.BLUES)
            body.append(
                f'<rect x="{x0}" y="{round(y0, 1)}" width="{cell}" height="{round(cell * 0.6, 1)}" '
                f'fill="{fill}" stroke="#fff">'
                f"<title>{svg.esc(f'{labels[i]} → {labels[j]}: {count}')}</title></rect>"
            )
            body.append(text(x0 + cell / 2, round(y0 + cell * 0.3 + 4, 1), str(count), colour_=svg.ink(fill)))
    body += [
        text(left - 6, round(top + (i + 0.5) * cell * 0.6 + 4, 1), label, anchor="end")
        for i, label in enumerate(labels)
    ]
    bottom = top + n * cell * 0.6
    body += [
        text(left + (j + 0.5) * cell, bottom + 16 + 13 * i, line)
        for j, lines in enumerate(heads)
        for i, line in enumerate(lines)
    ]
    bottom += 13 * (max((len(lines) for lines in heads), default=1) - 1)
    body.append(text(left + n * cell / 2, bottom + 36, predicted_title, colour_="#444"))
    body.append(text(14, top + n * cell * 0.3, gold_title, rotate=-90, colour_="#444"))
    data = Data(
        t("figure_confusion", ui, n=n),
        [f"{gold_title} \\ {predicted_title}", *labels],
        [[label, *row] for label, row in zip(labels, confusion)],
    )
    return figure("".join(body), left + n * cell + 20, bottom + 46, title, name="treebank-confusion", data=data, ui=ui)
