"""reports/scaling.svg (log-log latency-versus-length charts) and dev_curves.svg (dev accuracy at every evaluation of
the runs below their paper's number), drawn directly as SVG (no plotting library)."""

import math
import statistics

from tools.bench.accuracy import MODEL_ORDER

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]


def render_svg(panels: list[tuple[str, dict[str, tuple[list[float], list[float]]]]]) -> str:
    """Log-log line charts side by side: panels = [(title, {series: (xs, ys_ms)})], with L and L² guides."""
    pw, ph, ml, mr, mt, mb = 470, 360, 62, 16, 34, 48
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{pw * len(panels)}" height="{ph + 24}" '
        f'font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    names = sorted(
        {n for _, series in panels for n in series}, key=lambda n: MODEL_ORDER.index(n) if n in MODEL_ORDER else 99
    )
    colors = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}
    for p, (title, series) in enumerate(panels):
        x0 = p * pw
        xs = [x for xv, _ in series.values() for x in xv if x > 0]
        ys = [y for _, yv in series.values() for y in yv if y > 0]
        out.append(f'<text x="{x0 + pw / 2}" y="18" text-anchor="middle" font-size="13">{title}</text>')
        if not xs or not ys:
            out.append(f'<text x="{x0 + pw / 2}" y="{ph / 2}" text-anchor="middle">not run</text>')
            continue
        lx0, lx1 = math.log10(min(xs)) - 0.05, math.log10(max(xs)) + 0.05
        ly0, ly1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
        ly1 = ly1 if ly1 > ly0 else ly0 + 1

        def px(x, y):
            return (
                x0 + ml + (math.log10(x) - lx0) / (lx1 - lx0) * (pw - ml - mr),
                mt + (1 - (math.log10(y) - ly0) / (ly1 - ly0)) * (ph - mt - mb),
            )

        left, right, top, bottom = x0 + ml, x0 + pw - mr, mt, ph - mb
        out.append(
            f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" fill="none" stroke="#999"/>'
        )
        for e in range(ly0, ly1 + 1):
            _, y = px(min(xs), 10.0**e)
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eee"/>')
            out.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{10.0**e:g}</text>')
        for x in sorted(set(xs)):
            X, _ = px(x, 10.0**ly0)
            out.append(f'<line x1="{X:.1f}" y1="{top}" x2="{X:.1f}" y2="{bottom}" stroke="#eee"/>')
            out.append(f'<text x="{X:.1f}" y="{bottom + 14}" text-anchor="middle">{x:g}</text>')
        out.append(
            f'<text x="{(left + right) / 2}" y="{bottom + 32}" text-anchor="middle">'
            "sentence length L (words, log)</text>"
        )
        out.append(
            f'<text x="{x0 + 14}" y="{(top + bottom) / 2}" text-anchor="middle" '
            f'transform="rotate(-90 {x0 + 14} {(top + bottom) / 2})">ms (log)</text>'
        )
        # guides through the geometric mean of the series at the middle length: slope 1 and slope 2
        xm = sorted(set(xs))[len(set(xs)) // 2]
        at_mid = [yv[xv.index(xm)] for xv, yv in series.values() if xm in xv]
        if at_mid:
            ym = math.exp(statistics.fmean(math.log(y) for y in at_mid))
            for k, label in ((1, "∝ L"), (2, "∝ L²")):
                pts = [(x, ym * (x / xm) ** k) for x in (min(xs), max(xs))]
                pts = [(x, min(max(y, 10.0**ly0), 10.0**ly1)) for x, y in pts]
                (a, b), (c, d) = px(*pts[0]), px(*pts[1])
                out.append(
                    f'<line x1="{a:.1f}" y1="{b:.1f}" x2="{c:.1f}" y2="{d:.1f}" stroke="#bbb" stroke-dasharray="4 3"/>'
                )
                out.append(f'<text x="{c - 4:.1f}" y="{d - 5:.1f}" text-anchor="end" fill="#999">{label}</text>')
        for name, (xv, yv) in series.items():
            pts = [px(x, y) for x, y in zip(xv, yv) if x > 0 and y > 0]
            if not pts:
                continue
            out.append(
                f'<polyline fill="none" stroke="{colors[name]}" stroke-width="1.8" points="'
                + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)
                + '"/>'
            )
            out += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2.5" fill="{colors[name]}"/>' for a, b in pts]
    for i, name in enumerate(names):
        x = 10 + i * 110
        out.append(
            f'<rect x="{x}" y="{ph + 6}" width="12" height="12" fill="{colors[name]}"/>'
            f'<text x="{x + 16}" y="{ph + 16}">{name}</text>'
        )
    return "\n".join(out + ["</svg>"]) + "\n"


def render_dev_curves(
    panels: list[tuple[str, dict[str, tuple[list[float], list[float]]], float]], columns: int = 3
) -> str:
    """Linear charts in a grid: panels = [(title, {run: (epochs, dev %)}, paper %)], one line per run and the
    paper's (test) number dashed, so a missed bar shows where dev peaked and how far below the paper."""
    pw, ph, ml, mr, mt, mb = 400, 280, 48, 12, 30, 40
    rows = math.ceil(len(panels) / columns)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{pw * min(columns, len(panels))}" height="{ph * rows}" '
        f'font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    for p, (title, series, paper) in enumerate(panels):
        x0, y0 = (p % columns) * pw, (p // columns) * ph
        xs = [x for xv, _ in series.values() for x in xv]
        ys = [y for _, yv in series.values() for y in yv] + [paper]
        xmax, ylo, yhi = max(xs), math.floor(min(ys) / 5) * 5, math.ceil(max(ys) / 5) * 5
        yhi = yhi if yhi > ylo else ylo + 5
        left, right, top, bottom = x0 + ml, x0 + pw - mr, y0 + mt, y0 + ph - mb

        def px(x, y):
            return left + x / xmax * (right - left), bottom - (y - ylo) / (yhi - ylo) * (bottom - top)

        out.append(f'<text x="{x0 + pw / 2}" y="{y0 + 18}" text-anchor="middle">{title}</text>')
        out.append(
            f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" fill="none" stroke="#999"/>'
        )
        for y in range(ylo, yhi + 1, 5 if yhi - ylo <= 40 else 10):
            _, Y = px(0, y)
            out.append(
                f'<line x1="{left}" y1="{Y:.1f}" x2="{right}" y2="{Y:.1f}" stroke="#eee"/>'
                f'<text x="{left - 4}" y="{Y + 4:.1f}" text-anchor="end">{y}</text>'
            )
        for x in range(0, math.ceil(xmax) + 1, max(1, math.ceil(xmax / 8))):
            X, _ = px(x, ylo)
            out.append(f'<text x="{X:.1f}" y="{bottom + 14}" text-anchor="middle">{x}</text>')
        out.append(
            f'<text x="{(left + right) / 2}" y="{bottom + 30}" text-anchor="middle">epochs; dev accuracy %</text>'
        )
        (a, b), (c, _) = px(0, paper), px(xmax, paper)
        out.append(
            f'<line x1="{a:.1f}" y1="{b:.1f}" x2="{c:.1f}" y2="{b:.1f}" stroke="#555" stroke-dasharray="5 3"/>'
            f'<text x="{c - 4:.1f}" y="{b - 4:.1f}" text-anchor="end" fill="#555">paper (test) {paper:g}</text>'
        )
        for i, (name, (xv, yv)) in enumerate(series.items()):
            color = PALETTE[i % len(PALETTE)]
            out.append(
                f'<polyline fill="none" stroke="{color}" stroke-width="1.4" points="'
                + " ".join("{:.1f},{:.1f}".format(*px(x, y)) for x, y in zip(xv, yv))
                + '"/>'
            )
            out.append(
                f'<text x="{right - 6}" y="{bottom - 8 - 13 * (len(series) - 1 - i)}" text-anchor="end" '
                f'fill="{color}">{name}</text>'
            )  # bottom right: rising curves leave it empty
    return "\n".join(out + ["</svg>"]) + "\n"
