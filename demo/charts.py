"""The Lab's summary charts as SVG (demo/svg.py): per-word curves of several models (or one model before and after
an intervention), a minimal pair's two curves, class probability bars; and the line chart they share with the
views' line figures (demo/plots.py). Pure functions: data and words in, an SVG string out."""

from collections.abc import Sequence

import demo.svg as svg
from core.analysis.pairs import WordAlignment
from core.views import WordCurve
from demo.i18n import t
from demo.svg import PALETTE, Data, Scale, figure, marker, text


def word_width(n: int) -> float:
    """A figure over n words: 46 px a word, within the room it gets (svg.fit)."""
    return svg.fit(max(560, min(1180, 90 + 46 * n)))


def lines_figure(
    title: str,
    series: Sequence[tuple[str, list[float], str, str, list[str]]],
    positions: Sequence[Sequence[float]],
    ticks: list[str],
    y_range: tuple[float, float],
    y_label: str,
    caption: str,
    name: str,
    tick_colours: list[str] | None = None,
    legend: bool = True,
    sentiment: bool = False,
    x_title: str = "",
    ui: str = "en",
) -> str:
    """Curves over word (or layer) positions: series = (name, values, colour, dash, hover per point), each
    series' points in its own marker (svg.marker). A sentiment score's axis carries the sentiment colours
    (svg.RDBU) as a strip, so red is negative here too. The table: a row per position (`x_title`: what a
    position is, a word by default), a column per series."""
    n = max(len(ticks), 1)
    width = word_width(n)
    low, high = y_range
    pad = 0.05 * (high - low or 1)
    left, right, top, plot_h = 62, width - 20, 36, 230
    x = Scale(0, max(n - 1, 1), left + 20, right - 20)
    y = Scale(low - pad, high + pad, top + plot_h, top)
    body = [svg.y_axis(y, low, high, left, right, y_label)]
    if sentiment:
        steps = 20
        body += [
            f'<rect x="{left - 4}" y="{y(low + (k + 1) * (high - low) / steps)}" width="4" '
            f'height="{round(plot_h / steps * (high - low) / (high - low + 2 * pad) + 0.6, 1)}" '
            f'fill="{svg.colour(low + (k + 0.5) * (high - low) / steps, low, high)}"/>'
            for k in range(steps)
        ]
    if low < 0 < high:
        body.append(f'<line x1="{left}" x2="{right}" y1="{y(0)}" y2="{y(0)}" stroke="#999"/>')
    for kind, ((_label, values, fill, dash, hovers), xs) in enumerate(zip(series, positions)):
        points = " ".join(f"{x(a)},{y(v)}" for a, v in zip(xs, values))
        dashing = f' stroke-dasharray="{dash}"' if dash else ""
        body.append(f'<polyline points="{points}" fill="none" stroke="{fill}" stroke-width="2"{dashing}/>')
        body += [marker(kind, x(a), y(v), fill, hover=h) for a, v, h in zip(xs, values, hovers)]
    bottom = top + plot_h + 4
    body.append(svg.word_ticks(ticks, x, bottom, tick_colours))
    height = bottom + svg.words_height(ticks, x) + 8
    if legend:
        items, legend_h = svg.legend(
            [(s[0], s[2], s[3], k) for k, s in enumerate(series)], left, height + 6, right - left
        )
        body.append(items)
        height += legend_h + 6
    at = [{round(a): v for a, v in zip(xs, s[1])} for s, xs in zip(series, positions)]  # each series by position
    data = Data(
        t(
            "figure_lines",
            ui,
            y=y_label,
            n=len(ticks),
            x=x_title or t("figure_word", ui),
            series=t("figure_and", ui).join(s[0] for s in series),
        ),
        [x_title or t("figure_word", ui), *(s[0] for s in series)],
        [[tick, *(values.get(i) for values in at)] for i, tick in enumerate(ticks)],
    )
    return figure("".join(body), width, height, title, caption, name, data=data, ui=ui)


def hover(
    words: list[str], values: list[float], rows: list[list[float]] | None = None, classes: list[str] | None = None
) -> list[str]:
    shown = rows if rows and classes else [[] for _ in words]  # each word's class probabilities, where given
    return [
        f"{w}: {v:.3f}" + "".join(f"\n{c} {p:.3f}" for c, p in zip(classes or [], row))
        for w, v, row in zip(words, values, shown)
    ]


def word_curves(
    curves: list[WordCurve],
    names: list[str] | None,
    title: str,
    kind_labels: dict,
    class_labels: list[str] | None,
    ui: str,
    caption: str = "",
    name: str = "curve",
) -> str:
    """One or several per-word curves over the same words ("all five" overlays them); the legend says
    which are native (the model's own per-word output), a probe, or prefix predictions."""
    first = curves[0]
    series = []
    for i, curve in enumerate(curves):
        kind = kind_labels.get(curve.kind, curve.kind)
        label = f"{names[i]} ({kind})" if names else kind
        series.append(
            (
                label,
                curve.scores,
                PALETTE[i % len(PALETTE)],
                "" if curve.kind == "native" else "4 3",
                hover(curve.words, curve.scores, curve.probs, class_labels),
            )
        )
    return lines_figure(
        title,
        series,
        [list(range(len(c.words))) for c in curves],
        first.words,
        first.score_range,
        first.score_label,
        caption,
        name,
        sentiment=True,
        ui=ui,
    )


def pair_curves(
    curve_a: WordCurve,
    curve_b: WordCurve,
    alignment: WordAlignment,
    names: tuple[str, str],
    title: str,
    caption: str = "",
    name: str = "pair",
    ui: str = "en",
) -> str:
    """One model's per-word curves on the two sentences of a minimal pair over the aligned words: a shared
    word is one x position; a word only one sentence has stands alone, its tick in that sentence's colour (and
    the table has its value in that sentence's column only)."""
    colours = PALETTE[:2]
    series = [
        (n, c.scores, colour, dash, hover(c.words, c.scores))
        for n, c, colour, dash in zip(names, (curve_a, curve_b), colours, ("", "6 4"))
    ]
    ticks = alignment.labels()
    tick_colours = ["#333" if i is not None and j is not None else colours[i is None] for i, j in alignment.columns]
    return lines_figure(
        title,
        series,
        [alignment.positions("a"), alignment.positions("b")],
        ticks,
        curve_a.score_range,
        curve_a.score_label,
        caption,
        name,
        tick_colours,
        sentiment=True,
        ui=ui,
    )


def probability_bars(
    labels: list[str],
    rows: dict[str, list[float]],
    predicted: str | None,
    title: str,
    caption: str = "",
    name: str = "probabilities",
    ui: str = "en",
) -> str:
    """Class probabilities: one bar per class in its class colour (svg.class_colour), the predicted class
    outlined and its name bold; or a group per class with one bar per model (model colours, and the model's
    marker on its bar), each class name beside a swatch of its class colour. The table: a row per class, a
    column per model."""
    # at most 720 px: five classes by five models fit it, and it stays legible shrunk to a phone or half a laptop
    groups, width = len(labels), svg.fit(min(720, max(520, 90 * len(labels) * max(1, len(rows)) ** 0.5)))
    left, right, top, plot_h = 50, width - 16, 36, 200
    y = Scale(0, 1.0, top + plot_h, top)
    slot = (right - left) / max(groups, 1)
    bar = min(46, 0.8 * slot / len(rows))
    # each class name under its swatch, in lines no wider than its slot (at 10 px where a word of 11 px is wider)
    size = 11 if all(svg.text_width(word) < slot - 2 for label in labels for word in label.split()) else 10
    names = [svg.wrap(label, slot - 2, size) for label in labels]
    body = [svg.y_axis(y, 0, 1.0, left, right, "P")]
    for g, label in enumerate(labels):
        start = left + g * slot + (slot - bar * len(rows)) / 2
        for i, (series, probs) in enumerate(rows.items()):
            fill = svg.class_colour(g, groups) if len(rows) == 1 else PALETTE[i % len(PALETTE)]
            mark = ' stroke="#111" stroke-width="2.5" class="predicted"' if label == predicted else ""
            px, p = round(start + i * bar, 1), probs[g]
            body.append(
                f'<rect x="{px}" y="{y(p)}" width="{round(bar - 2, 1)}" height="{round(y(0) - y(p), 1)}" '
                f'fill="{fill}"{mark}><title>{svg.esc(f"{series}: {label} {p:.3f}")}</title></rect>'
            )
            if len(rows) == 1:
                body.append(text(px + bar / 2, y(p) - 4, f"{p:.2f}", size=10))
            else:
                body.append(marker(i, px + bar / 2 - 1, y(p) - 6, fill, r=min(3.5, bar / 4)))
        middle = left + (g + 0.5) * slot
        body.append(
            f'<rect x="{round(middle - 5, 1)}" y="{top + plot_h + 5}" width="10" height="10" '
            f'fill="{svg.class_colour(g, groups)}"/>'
        )
        body += [
            text(middle, top + plot_h + 28 + 13 * i, line, size, weight="700" if label == predicted else "normal")
            for i, line in enumerate(names[g])
        ]
    height: float = top + plot_h + 28 + 13 * max(len(lines) for lines in names)
    if len(rows) > 1:
        items, legend_h = svg.legend(
            [(s, PALETTE[i % len(PALETTE)], "", i) for i, s in enumerate(rows)], left, height + 6, right - left
        )
        body.append(items)
        height += legend_h + 6
    what = t("figure_bars", ui, n=groups, series=t("figure_and", ui).join(rows))
    data = Data(
        what + (t("figure_predicted", ui, label=predicted) if predicted else ""),
        [t("figure_class", ui), *rows],
        [[label, *(probs[g] for probs in rows.values())] for g, label in enumerate(labels)],
    )
    return figure("".join(body), width, height, title, caption, name, data=data, ui=ui)
