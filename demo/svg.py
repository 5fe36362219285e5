"""Small SVG drawing kit for demo/plots.py: scales, colour maps, axes, text and the figure frame.

The lab draws its views (the Treebank tab's too) as static SVG on the server, not plotly figures in the
browser: a result is one HTML string, which the browser inserts at once (plotly needed 5-7 s of browser time
for the eleven figures of "all five" on a 2-core machine, reports/browser.md). Hover text is each element's <title>.
"""

import contextlib
import contextvars
import html
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from demo.i18n import t

FONT = "system-ui, -apple-system, 'Segoe UI', 'WenQuanYi Micro Hei', 'Noto Sans CJK SC', sans-serif"
# Three colour schemes that never share a meaning. Sentiment, in every figure (class bars, the score strip of the
# curves, trajectory, pyramid, treebank): red = negative .. blue = positive (the papers' RdBu). Models, one
# colour each: no red and no blue, which would read as a class. Supports / against (the attribution
# highlight): green / purple.
# The model colours stay apart under deuteranopia, protanopia and tritanopia too (CIEDE2000 ≥ 15 between the first
# five, ≥ 8 between all eight, each at least 3:1 on white: tests/app/test_figure_access.py, docs/lab.md); a
# series also has its own marker (MARKERS), so a colour is never the only cue.
PALETTE = ["#1b9e77", "#8c6bb1", "#a6611a", "#525252", "#7a0177", "#bf812d", "#c51b8a", "#737373"]
RDBU = ["#b2182b", "#ef8a62", "#fddbc7", "#f7f7f7", "#d1e5f0", "#67a9cf", "#2166ac"]  # a sentiment score, low to high
CLASS_STOPS = ["#b2182b", "#ef8a62", "#bababa", "#67a9cf", "#2166ac"]  # classes, most negative first (neutral grey)
SUPPORT = {
    "strong_for": "#1b7837",
    "for": "#a6dba0",
    "against": "#c2a5cf",
    "strong_against": "#762a83",
    "unknown": "#c8c8c8",
}
BLUES = ["#f7fbff", "#c6dbef", "#6baed6", "#2171b5", "#08306b"]
VIRIDIS = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"]
# The CSS px a figure gets on the visitor's page (room_js measures it with each request that draws): a figure
# is drawn no wider, so that it shows at its drawn size and its text at its font size (10-13 px) on a phone too;
# None (the API, a wide page): as wide as its content needs. A context variable: set by the request's callback.
ROOM: contextvars.ContextVar[float | None] = contextvars.ContextVar("room", default=None)
NARROW = 560  # a room below this gets the narrow layouts (a tree drawn sideways, a pyramid's beliefs under it)


def room_js(selector: str, inset: int = 0, then: str = "") -> str:
    """An event's js: its last input (a hidden gr.Number) becomes the width of the figures' box `selector` (or
    of the nearest shown box around it; a tab not yet opened has none: the tabs' width less an accordion's
    padding) less `inset` px (a panel's padding); then the statements `then`."""
    return f"""(...args) => {{
  let box = document.querySelector({selector!r}), width = null;
  if (!box) width = document.querySelector('.tabs').clientWidth - 48;
  while (box && !box.clientWidth) box = box.parentElement;
  args[args.length - 1] = Math.round((width ?? (box || document.documentElement).clientWidth) - {inset});
  {then}
  return args;
}}"""


def drawn_for(room: float | None) -> None:
    """Figures drawn in this request's context get `room` CSS px (from room_js; none below 240 px)."""
    ROOM.set(max(240.0, float(room)) if room else None)


@contextlib.contextmanager
def drawn_within(room: float | None) -> Iterator[None]:
    """Figures drawn inside get `room` px (a figure beside another gets part of the request's room)."""
    token = ROOM.set(room)
    try:
        yield
    finally:
        ROOM.reset(token)


def fit(width: float) -> float:
    """A figure's width: what its content needs, at most the room it gets."""
    room = ROOM.get()
    return min(width, room) if room else width


def narrow() -> bool:
    room = ROOM.get()
    return room is not None and room < NARROW


LEGIBLE = 10 / 11  # a figure's words (11-12 px) are shown at 10 px or more: it may shrink to this scale, no further


def legible(width: float) -> bool:
    """Whether a drawing `width` px wide, scaled down to the room it gets, keeps its words legible."""
    room = ROOM.get()
    return room is None or width * LEGIBLE <= room


def esc(text) -> str:
    return html.escape(str(text), quote=True)


TICK = 11  # a word tick's font size (px)


def text_width(text: str, size: float = 11) -> float:
    """Approximate rendered width: CJK characters are square, Latin ones about 0.58 of the font size."""
    return sum(size if ord(c) > 0x2E80 else 0.58 * size for c in str(text))


def colour(value: float, low: float, high: float, stops: list[str] = RDBU) -> str:
    """Linear interpolation between colour stops; values outside [low, high] are clipped."""
    if value is None or high <= low:
        return "#cccccc"
    t = min(1.0, max(0.0, (value - low) / (high - low))) * (len(stops) - 1)
    i = min(int(t), len(stops) - 2)
    a, b = stops[i], stops[i + 1]
    mix = [round(int(a[k : k + 2], 16) * (1 - (t - i)) + int(b[k : k + 2], 16) * (t - i)) for k in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def class_colour(index: int, classes: int) -> str:
    """The colour of class `index` of `classes` (ordered most negative first): the one mapping every figure uses."""
    return colour(index, 0, max(1, classes - 1), CLASS_STOPS)


def luminance(hex_colour: str) -> float:
    """WCAG 2.1's relative luminance of an sRGB colour "#rrggbb"."""
    channels = [int(hex_colour[k : k + 2], 16) / 255 for k in (1, 3, 5)]
    r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2.1's contrast ratio of two colours, 1 to 21."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def ink(fill: str) -> str:
    """The text colour for text on `fill`: near-black or white, whichever contrasts more."""
    return "#111111" if contrast(fill, "#111111") >= contrast(fill, "#ffffff") else "#ffffff"


MARKERS = 8  # marker shapes, one per series (as many as PALETTE's colours): circle, square, triangles, ...


def marker(kind: int, x: float, y: float, fill: str, r: float = 3.5, hover: str = "") -> str:
    """Series `kind`'s point marker (kind % MARKERS: circle, square, triangle, diamond, triangle down, cross,
    plus, ring) centred on (x, y), `hover` its <title>: a line or bar is told apart by its shape, not only by its
    colour."""
    x, y, kind = round(x, 1), round(y, 1), kind % MARKERS
    tip = f"<title>{esc(hover)}</title>" if hover else ""
    if kind in (0, 7):  # a disc, or a ring (white inside)
        paint = f'fill="{fill}"' if kind == 0 else f'fill="#fff" stroke="{fill}" stroke-width="1.8"'
        return f'<circle cx="{x}" cy="{y}" r="{r}" {paint}>{tip}</circle>'
    a, b = 1.25 * r, 0.85 * r  # a shape's reach from its centre: a point's, a side's
    at = {"x": x, "y": y, "xa": x + a, "x_a": x - a, "xb": x + b, "x_b": x - b}
    at = {k: round(v, 1) for k, v in (at | {"ya": y + a, "y_a": y - a, "yb": y + b, "y_b": y - b}).items()}
    path = {
        1: "M{x_b} {y_b}L{xb} {y_b}L{xb} {yb}L{x_b} {yb}Z",
        2: "M{x} {y_a}L{xa} {yb}L{x_a} {yb}Z",
        3: "M{x} {y_a}L{xa} {y}L{x} {ya}L{x_a} {y}Z",
        4: "M{x} {ya}L{xa} {y_b}L{x_a} {y_b}Z",
        5: "M{x_b} {y_b}L{xb} {yb}M{xb} {y_b}L{x_b} {yb}",
        6: "M{x_a} {y}L{xa} {y}M{x} {y_a}L{x} {ya}",
    }[kind].format(**at)
    paint = f'fill="{fill}"' if kind < 5 else f'fill="none" stroke="{fill}" stroke-width="2.2"'
    return f'<path d="{path}" {paint}>{tip}</path>'


class Scale:
    """Maps data values [low, high] linearly onto pixels [start, end]."""

    def __init__(self, low: float, high: float, start: float, end: float):
        self.low, self.high, self.start, self.end = low, high if high != low else low + 1, start, end

    def __call__(self, value: float) -> float:
        return round(self.start + (value - self.low) / (self.high - self.low) * (self.end - self.start), 1)


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round tick values between low and high."""
    raw = (high - low or 1.0) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * 0.999)
    first = math.ceil(low / step - 1e-9) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step + 1e-9) + 1)]


def text(
    x: float,
    y: float,
    content: str,
    size: float = 11,
    anchor: str = "middle",
    colour_: str = "#333",
    rotate: float = 0,
    weight: str = "normal",
    **attrs,
) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{esc(v)}"' for k, v in attrs.items())
    turn = f' transform="rotate({rotate} {x} {y})"' if rotate else ""
    return (
        f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" fill="{colour_}" '
        f'font-weight="{weight}"{turn}{extra}>{esc(content)}</text>'
    )


def _tick_positions(words: list[str], x: Scale | Sequence[float]) -> list[float]:
    return [x(i) for i in range(len(words))] if isinstance(x, Scale) else list(x)


def tick_angle(words: list[str], x: Scale | Sequence[float]) -> float:
    """How far word ticks turn: 0, level; 40, slanted, when there are many or long ones; 90, upright, where
    neighbours are closer than two slanted lines need (0.64 of their distance apart, at least the font size)."""
    positions = _tick_positions(words, x)
    if not positions:
        return 0
    if len(words) <= 10 and sum(text_width(w) for w in words) <= 0.9 * abs(positions[-1] - positions[0] + 40):
        return 0
    gap = min((abs(b - a) for a, b in zip(positions, positions[1:])), default=math.inf)
    return 40 if gap * math.sin(math.radians(40)) >= TICK else 90


def word_ticks(words: list[str], x: Scale | Sequence[float], y: float, colours: Sequence[str] | None = None) -> str:
    """Words under an axis at their positions; slanted or upright when there are many (tick_angle)."""
    angle, parts = tick_angle(words, x), []
    for i, (word, px) in enumerate(zip(words, _tick_positions(words, x))):
        fill = colours[i] if colours else "#333"
        if angle == 90:  # upright: the glyphs stand left of their baseline, so it moves right to centre them
            px = round(px + 0.35 * TICK, 1)
        parts.append(text(px, y + 12, word, anchor="end" if angle else "middle", rotate=-angle, colour_=fill))
    return "".join(parts)


def words_height(words: list[str], x: Scale | Sequence[float]) -> float:
    """Room under an axis for its word ticks at positions `x` (turned words need their length)."""
    angle = tick_angle(words, x)
    longest = max((text_width(w) for w in words), default=0)
    return 26 if not angle else 20 + math.sin(math.radians(angle)) * longest


def spread(wanted: Sequence[float], gap: float, low: float, high: float) -> list[float]:
    """Positions for marks wanted at `wanted` (ascending): at least `gap` apart (less where [low, high] cannot
    hold them so), within [low, high], each as near its wish as that allows: the least-squares answer, an
    isotonic regression of wanted[i] - i * gap (pool adjacent violators)."""
    n = len(wanted)
    gap = min(gap, (high - low) / max(n - 1, 1))
    pools: list[tuple[float, int]] = []  # (mean, count) of the shifted wishes pooled so far
    for i, w in enumerate(wanted):
        pools.append((w - i * gap, 1))
        while len(pools) > 1 and pools[-2][0] > pools[-1][0]:
            (m1, c1), (m2, c2) = pools.pop(), pools.pop()
            pools.append(((m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2))
    shifted = [mean for mean, count in pools for _ in range(count)]
    return [round(min(max(z, low), high - (n - 1) * gap) + i * gap, 1) for i, z in enumerate(shifted)]


def y_axis(scale: Scale, low: float, high: float, left: float, right: float, label: str = "") -> str:
    """Grid lines and labels at round values, the axis title turned along the axis."""
    parts = []
    for v in ticks(low, high):
        py = scale(v)
        parts.append(f'<line x1="{left}" x2="{right}" y1="{py}" y2="{py}" stroke="#e5e7eb"/>')
        parts.append(text(left - 6, py + 4, f"{v:g}", size=10, anchor="end", colour_="#555"))
    if label:
        mid = (scale(low) + scale(high)) / 2
        parts.append(text(14, mid, label, size=11, rotate=-90, colour_="#444"))
    return "".join(parts)


def wrap(value: str, width: float, size: float = 11) -> list[str]:
    """Lines at most `width` pixels wide (by text_width), broken at spaces where there are any."""
    lines, line = [], ""
    for word in str(value).split(" ") if " " in str(value) else [str(value)]:
        candidate = f"{line} {word}" if line else word
        if text_width(candidate, size) > width and line:
            lines.append(line)
            line = word
        else:
            line = candidate
    while text_width(line, size) > width:  # one long word or a sentence without spaces
        cut = max(1, next((i for i in range(len(line), 0, -1) if text_width(line[:i], size) <= width), 1))
        lines.append(line[:cut])
        line = line[cut:]
    return lines + [line] if line or not lines else lines


CAPTION = 10  # the caption's font size (px): the smallest on the page


def caption_lines(caption: str, width: float, size: float = CAPTION) -> list[str]:
    """A caption's " · " parts packed into lines (a part such as "checkpoint sha256 …" is never split unless
    it alone is wider than a line)."""
    lines: list[str] = []
    for part in caption.split(" · "):
        joined = f"{lines[-1]} · {part}" if lines else part
        if lines and text_width(joined, size) <= width:
            lines[-1] = joined
        else:
            lines += wrap(part, width, size)
    return lines


def legend(items: list[tuple[str, str, str, int | None]], x: float, y: float, width: float) -> tuple[str, float]:
    """(name, colour, dash, marker kind or None) entries laid out in rows, an entry wider than the row wrapped
    onto lines of its own (never cut); returns the SVG and the height it took."""
    parts, px, py, row_h = [], x, y, 18
    for name, fill, dash, kind in items:
        lines = wrap(name, width - 30)
        w = 30 + max(text_width(line) for line in lines)
        if px + w > x + width and px > x:
            px, py, row_h = x, py + row_h, 18
        dashing = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<line x1="{px}" x2="{px + 20}" y1="{py - 4}" y2="{py - 4}" stroke="{fill}" stroke-width="2.5"{dashing}/>'
        )
        if kind is not None:
            parts.append(marker(kind, px + 10, py - 4, fill))
        parts += [text(px + 24, py + 14 * i, line, anchor="start") for i, line in enumerate(lines)]
        row_h = max(row_h, 14 * len(lines) + 4)
        px += w + 12
    return "".join(parts), py - y + row_h


def colour_bar_width(low: float, high: float, label: str) -> float:
    """The room colour_bar takes right of its x: the bar with its values, or its title if that is wider."""
    return max(16 + max(text_width(f"{v:.3g}", 10) for v in (low, high)), text_width(label, 10)) + 8


def colour_bar(x: float, y: float, height: float, low: float, high: float, stops: list[str], label: str) -> str:
    """A vertical colour scale with its low and high values and its title, which starts at the bar's left edge
    and runs right (never over what is drawn left of the bar: a heatmap's cells); colour_bar_width is its room."""
    steps = 24
    parts = [
        f'<rect x="{x}" y="{round(y + i * height / steps, 1)}" width="12" height="{round(height / steps + 0.6, 1)}" '
        f'fill="{colour(high - (i + 0.5) * (high - low) / steps, low, high, stops)}"/>'
        for i in range(steps)
    ]
    parts += [
        text(x + 16, y + 9, f"{high:.3g}", size=10, anchor="start"),
        text(x + 16, y + height, f"{low:.3g}", size=10, anchor="start"),
        text(x, y - 8, label, size=10, anchor="start", colour_="#444"),
    ]
    return "".join(parts)


@dataclass
class Data:
    """A figure's text alternative: `what` it shows, in a sentence (after its title, the drawing's accessible
    name; its table's caption), and the numbers it draws as a table: the column `heads` and the `rows`, each
    row's first cell naming it (a word, a class, a level)."""

    what: str
    heads: list[str]
    rows: list[list]


def cell(value) -> str:
    """A table cell's text: a number as the figures' hovers give it (3 decimals), none as a dash."""
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else esc(value)


def html_table(what: str, heads: list[str], rows: list[list], pick: Callable[[int], str] | None = None) -> str:
    """A table captioned `what`, its columns headed `heads`, each row headed by its first cell; it scrolls inside
    its box and is focusable, so a keyboard scrolls it too. With `pick` (row number -> the accessible name of its
    choice), a row is a choice: its header is a button, and a click anywhere on the row is the component's select
    event with the row's number (ROW_PICK_JS)."""
    heads_html = "".join(f'<th scope="col">{esc(head)}</th>' for head in heads)

    def opening(i: int, value) -> str:
        if pick is None:
            return f'<tr><th scope="row">{cell(value)}</th>'
        button = f'<button type="button" aria-label="{esc(pick(i))}">{cell(value)}</button>'
        return f'<tr data-row="{i}"><th scope="row">{button}</th>'

    body = "".join(
        opening(i, row[0]) + "".join(f"<td>{cell(v)}</td>" for v in row[1:]) + "</tr>" for i, row in enumerate(rows)
    )
    return (
        f'<table tabindex="0"><caption>{esc(what)}</caption><thead><tr>{heads_html}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


# js_on_load of a gr.HTML holding an html_table with a pick: a click on a row (or its button, by keyboard) is the
# component's select event, its index the row's number, as a Gradio table's row click is
ROW_PICK_JS = """
element.addEventListener('click', (event) => {
  const row = event.target.closest('tr[data-row]');
  if (row) trigger('select', {index: Number(row.dataset.row), value: Number(row.dataset.row)});
});
"""


def data_table(data: Data, ui: str) -> str:
    """The numbers of a figure under "Show as a table" (closed: a student opens it, a screen reader finds it
    after the drawing)."""
    table = html_table(data.what, data.heads, data.rows)
    return f'<details class="figure-data"><summary>{esc(t("figure_table", ui))}</summary>{table}</details>'


def figure(
    body: str,
    width: float,
    height: float,
    title: str,
    caption: str = "",
    name: str = "view",
    controls: str = "",
    *,
    data: Data,
    ui: str = "en",
    links: bool = False,
) -> str:
    """One view: the SVG (title on top, the caption at the bottom, wrapped, never cut: both are part of what is
    exported), its SVG/PNG download buttons (the page's export script reads data-name) and its `data` as a
    table. On the page it scales to its container (the viewBox; CSS width 100%), never above its drawn size, so
    the whole figure is always in view; on a narrow screen a tap shows it at its drawn size, scrolling inside
    its box (EXPORT_JS). The drawing is an image named by its title and what it shows, in the page's language
    `ui`; one whose nodes are `links` is a group instead, so that its links stay reachable."""
    room = ROOM.get()
    width = round(max(width, min(text_width(title, 13) + 30, room or math.inf)))
    titles = wrap(title, width - 16, 13)  # a title wider than the room takes lines of its own
    shift = 16 * (len(titles) - 1)
    height = round(height) + shift
    lines = caption_lines(caption, width - 16, CAPTION) if caption else []
    total = height + (6 + 13 * len(lines) if lines else 0)
    foot = "".join(
        text(8, height + 12 + 13 * i, line, size=CAPTION, anchor="start", colour_="#666")
        for i, line in enumerate(lines)
    )
    heading = "".join(
        text(width / 2, 20 + 16 * i, line, size=13, weight="600", colour_="#222") for i, line in enumerate(titles)
    )
    # on the page it shrinks to its room, but not below LEGIBLE: a wider drawing scrolls inside its box instead
    style = f"max-width:{width}px" + (f";min-width:{math.ceil(width * LEGIBLE)}px" if room else "")
    drawing = f'<g transform="translate(0 {shift})">{body}</g>' if shift else body
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {total}" width="{width}" height="{total}" '
        f'style="{style}" font-family="{esc(FONT)}" role="{"group" if links else "img"}" '
        f'aria-label="{esc(t("figure_name", ui, title=title, what=data.what))}">'
        '<rect width="100%" height="100%" fill="#fff"/>'
        f"{heading}{drawing}{foot}</svg>"
    )
    # 1:1 only where the figure may show smaller than drawn: drawn for no room, or wider than the room it got
    zoom = '<button type="button" class="zoom">1:1</button>' if not room or width > room else ""
    buttons = (
        '<span class="export"><button type="button" data-export="svg">SVG</button>'
        f'<button type="button" data-export="png">PNG</button>{zoom}</span>'
    )
    return f'<figure class="view" data-name="{esc(name)}">{buttons}{controls}{svg}{data_table(data, ui)}</figure>'


# js_on_load of the gr.HTML holding figures: its SVG/PNG buttons download the figure beside them as it is
# drawn (PNG at twice the size, through a canvas); a feature graph's checkbox adds or removes its other edges
EXPORT_JS = """
element.addEventListener('change', (event) => {
  const box = event.target.closest('.all-edges');
  if (!box) return;
  const figure = box.closest('figure.view');
  const svg = figure.querySelector(':scope > svg');
  if (box.checked)
    svg.querySelector('.strong-edges').before(figure.querySelector('template.weak-edges').content.querySelector('g').cloneNode(true));
  else svg.querySelector('g.weak-edges')?.remove();
});
element.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-export]');
  const zoom = event.target.closest('button.zoom');
  const drawing = zoom
    ? zoom.closest('figure.view').querySelector(':scope > svg')
    : event.target.closest('figure.view > svg');
  const shrunk = drawing && drawing.getBoundingClientRect().width < drawing.viewBox.baseVal.width - 1;
  if (drawing && !event.target.closest('a') && (shrunk || drawing.parentElement.classList.contains('zoomed')))
    drawing.parentElement.classList.toggle('zoomed');
  if (!button) return;
  const figure = button.closest('figure.view');
  const svg = figure.querySelector(':scope > svg').cloneNode(true);
  const source = new XMLSerializer().serializeToString(svg);
  const kind = button.dataset.export;
  const save = (blob) => {
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = figure.dataset.name + '.' + kind;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  };
  if (kind === 'svg') return save(new Blob([source], {type: 'image/svg+xml'}));
  const image = new Image();
  image.onload = () => {
    const canvas = document.createElement('canvas');
    canvas.width = 2 * svg.viewBox.baseVal.width;
    canvas.height = 2 * svg.viewBox.baseVal.height;
    const context = canvas.getContext('2d');
    context.scale(2, 2);
    context.drawImage(image, 0, 0);
    canvas.toBlob(save, 'image/png');
  };
  image.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(source);
});
"""
