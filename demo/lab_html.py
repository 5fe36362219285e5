"""The Lab's result as HTML: the figures on top (probabilities and per-word curves, drawn as SVG on the server by
demo/charts.py), the comparison table, and one panel per model (its word-attribution highlight and every view it
returned, drawn by demo/plots.py), and the scripts of the DCNN panel's map choice. Pure functions: predictions and
facts in, HTML out; nothing runs a model.
`known` is demo.tabs.checkpoints.facts: each checkpoint's accuracy and identity, by (task, model)."""

import logging
from collections.abc import Mapping

from core.notices import Notice
from core.predict import Prediction
from core.views import KMaxGraph
from demo.attribution_view import highlight_texts, scores_table, word_scores
from demo.charts import probability_bars, word_curves
from demo.i18n import (
    intervention_name,
    label_name,
    model_name,
    notice_text,
    source_text,
    t,
    task_name,
    word_view,
)
from demo.plots import esc, to_svg
from demo.svg import ROOM, SUPPORT, drawn_within, ink
from demo.svg import esc as attr  # escapes quotes too: typed text inside an attribute value
from demo.tabs.checkpoints import Facts
from service.jobs import JOB_TEXT

log = logging.getLogger(__name__)
Known = Mapping[tuple[str, str], Facts]  # demo.tabs.checkpoints.facts: each checkpoint's, by (task, model)


def support_style(key: str) -> str:
    """A highlighted word's colours: its SUPPORT colour with the text colour that contrasts most with it (the
    CSS marks each key with a line as well: ui.CSS, `.occlusion mark`)."""
    return f"background:{SUPPORT[key]};color:{ink(SUPPORT[key])}"


def attribution_html(p: Prediction, ui: str, method: str = "occlusion") -> str:
    """The analysed text, each word coloured by how much it supports the predicted class by `method`
    (relative to the largest score); unknown words as such; then the legend and the method's note."""
    scores = word_scores(p, method)
    scale = max((abs(s) for s in scores), default=0.0)
    parts, pos = [], 0
    scores = scores or [0.0] * len(p.tokens)  # none past core's attribution cap: the text, uncoloured
    for token, score in zip(p.tokens, scores):
        if token.start > pos:
            parts.append(esc(p.text[pos : token.start]))
        s = score / scale if scale > 1e-9 else 0.0
        key = (
            "unknown"
            if not token.known
            else "strong_for"
            if s > 0.6
            else "for"
            if s > 0.2
            else "strong_against"
            if s < -0.6
            else "against"
            if s < -0.2
            else None
        )
        piece = esc(p.text[max(pos, token.start) : token.end])
        parts.append(
            f'<mark class="{key}" style="{support_style(key)}" title="{attr(t(key, ui))} ({score:+.3f})">{piece}</mark>'
            if key
            else piece
        )
        pos = max(pos, token.end)
    parts.append(esc(p.text[pos:]))
    legend = "".join(
        f'<span class="key"><mark class="{k}" style="{support_style(k)}">&nbsp;&nbsp;</mark> {esc(t(k, ui))}</span>'
        for k in SUPPORT
    )
    title, note = highlight_texts(p, method, scale, ui)
    return (
        f'<div class="occlusion"><div class="occlusion-head">{esc(title)}</div>'
        f'<div class="occlusion-text">{"".join(parts)}</div><div class="occlusion-legend">{legend}</div>'
        f"<small>{esc(note)} {esc(t('source', ui))}: <code>{esc(source_text(p.source, ui))}</code></small>"
        f"{scores_table(p, ui) if len(p.attributions) > 1 else ''}</div>"
    )


def accuracy_text(p: Prediction, fact: Facts | None, ui: str) -> str:
    """ "test accuracy 42.7% on SST-5 · paper 48.5%": how good the checkpoint behind this prediction is."""
    if p.intervention != "none":  # the checkpoint's accuracy is the model's as trained, not as changed
        return t("accuracy_intervened", ui)
    if fact is None or fact.accuracy is None:
        return ""
    text = t("accuracy", ui, ours=fact.accuracy, task=fact.title or task_name(p.task, ui))
    text += f" · {t('accuracy_paper', ui, paper=fact.paper)}" if fact.paper is not None else ""
    if fact.degenerate:  # as the Train tab said when it finished (demo.tabs.train.status_text)
        text += " · ⚠️ " + notice_text(Notice(fact.degenerate["code"], fact.degenerate["params"]), ui, JOB_TEXT)
    return text


def caption(p: Prediction, fact: Facts | None, ui: str) -> str:
    return t(
        "caption",
        ui,
        model=model_name(p.model),
        task=(fact and fact.title) or task_name(p.task, ui),
        sha=(fact.sha256 if fact else "?")[:16],
        commit=fact.commit if fact else "?",
    )


def view_name(p: Prediction, index: int, view) -> str:
    """The name an exported figure gets, e.g. dcnn-2-kmaxgraph."""
    return f"{p.model}-{index + 1}-{type(view).__name__.lower()}"


# The DCNN panel's scripts, beside its markup (top_map_panel). A Copy link's first step: the panel's map, where
# one other than the default (the first) is chosen, as the event's first input
READ_MAP_JS = """(...args) => {
  const choice = document.querySelector('#result .top-map select');
  args[0] = choice && choice.selectedIndex > 0 ? choice.value : '';
  return args;
}"""
# the DCNN panel's map choice: the server draws the chosen map's graph; a reply to an earlier choice is dropped
TOP_MAP_JS = """
element.addEventListener('change', async (event) => {
  const choice = event.target.closest('.top-map-choice select');
  if (!choice) return;
  const box = choice.closest('.top-map');
  const view = box.querySelector('.top-map-view');
  const wanted = choice.value;
  view.style.opacity = 0.4;
  const html = await server
    .draw_top_map(box.dataset.text, box.dataset.task, box.dataset.model, Number(wanted), view.clientWidth)
    .catch(() => null);
  if (choice.value !== wanted) return;
  if (html !== null) view.innerHTML = html;
  view.style.opacity = '';
});
"""


def top_map_view(p: Prediction, index: int, view: KMaxGraph, fact: Facts | None, ui: str) -> str:
    """The feature graph of one top-layer map, and below it which map it is and why it is shown: what it adds
    to the predicted class's logit, beside the map that adds most."""
    if view.top_map is None:  # the graph of all maps (model_panel draws it as any view)
        raise ValueError("the feature graph of all maps has no map to explain")
    best = max(range(len(view.contributions)), key=view.contributions.__getitem__)
    label, value = label_name(p.label, ui), view.contributions[view.top_map]
    note = (
        t("graph_map_note", ui, map=best, n=len(view.contributions), label=label, value=value)
        if view.top_map == best
        else t(
            "graph_map_chosen",
            ui,
            map=view.top_map,
            label=label,
            value=value,
            best=best,
            best_value=view.contributions[best],
        )
    )
    return (
        to_svg(word_view(view, ui), ui, caption(p, fact, ui), view_name(p, index, view))
        + f'<p class="view-note">{esc(note)}</p>'
    )


def top_map_panel(p: Prediction, index: int, view: KMaxGraph, fact: Facts | None, ui: str) -> str:
    """The one-map feature graph under a choice of every top-layer map, largest contribution first (TOP_MAP_JS)."""
    order = sorted(range(len(view.contributions)), key=lambda m: -view.contributions[m])
    options = "".join(
        f'<option value="{m}"{" selected" if m == view.top_map else ""}>'
        f"{esc(t('graph_map_option', ui, map=m, value=view.contributions[m]))}"
        f"{esc(t('graph_map_best', ui)) if m == order[0] else ''}</option>"
        for m in order
    )
    choice = t("graph_map_choice", ui, label=label_name(p.label, ui))
    return (
        f'<div class="top-map" data-text="{attr(p.text)}" data-task="{attr(p.task)}" data-model="{attr(p.model)}">'
        f'<label class="top-map-choice">{esc(choice)} <select>{options}</select></label>'
        f'<div class="top-map-view">{top_map_view(p, index, view, fact, ui)}</div></div>'
    )


def series_name(p: Prediction, ui: str) -> str:
    """The model's name, and with an intervention which one: before and after are told apart everywhere."""
    name = model_name(p.model, lang=ui)
    if p.intervention == "none":
        return name
    return f"{name} · {t('intervened', ui, intervention=intervention_name(p.intervention, ui))}"


def model_panel(p: Prediction, fact: Facts | None, ui: str, method: str = "occlusion") -> str:
    """One model's panel: its label, confidence and checkpoint accuracy, the word-attribution highlight by
    `method` (with every computed method's scores), then every view it returned (worded in the UI language)."""
    head = (
        f"<b>{esc(series_name(p, ui))}</b>: {esc(label_name(p.label, ui))} ({max(p.probs):.2f})"
        f'<span class="accuracy">{esc(accuracy_text(p, fact, ui))}</span>'
    )
    body, cap = [attribution_html(p, ui, method)], caption(p, fact, ui)
    for i, view in enumerate(p.views):
        try:
            if isinstance(view, KMaxGraph) and view.top_map is not None:
                body.append(top_map_panel(p, i, view, fact, ui))
            else:
                body.append(to_svg(word_view(view, ui), ui, cap, view_name(p, i, view)))
        except Exception:  # one view that cannot be drawn must not hide the others
            log.exception("cannot draw %s of %s", type(view).__name__, p.model)
            body.append(f"<p>⚠️ {esc(type(view).__name__)}: {esc(getattr(view, 'title', ''))}</p>")
    return (
        f'<details class="model-panel" open data-model="{attr(p.model)}" data-text="{attr(p.text)}">'
        f"<summary>{head}</summary>{''.join(body)}</details>"
    )


def curve_kinds(ui: str) -> dict[str, str]:
    return {kind: t(f"curve_{kind}", ui) for kind in ("native", "probe", "prefix")}


def comparison_table(predictions: list[Prediction], known: Known, ui: str) -> str:
    """One row per model: label, probability, curve kind, checkpoint accuracy, checkpoint."""
    kinds = curve_kinds(ui)
    heads = [t(k, ui) for k in ("col_model", "col_label", "col_confidence", "col_curve", "col_accuracy", "col_source")]
    rows = [
        [
            series_name(p, ui),
            label_name(p.label, ui),
            f"{max(p.probs):.3f}",
            kinds.get(p.curve.kind, p.curve.kind),
            accuracy_text(p, known.get((p.task, p.model)), ui),
            source_text(p.source, ui),
        ]
        for p in predictions
    ]
    cells = "".join(
        "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row[:-1]) + f"<td><code>{esc(row[-1])}</code></td></tr>"
        for row in rows
    )  # the last column is a path
    return (
        f'<table id="comparison" tabindex="0"><caption>{esc(t("comparison", ui))}</caption><thead><tr>'
        + "".join(f"<th>{esc(h)}</th>" for h in heads)
        + f"</tr></thead><tbody>{cells}</tbody></table>"
    )


def top_figures(predictions: list[Prediction], known: Known, ui: str) -> tuple[str, str]:
    """The class probabilities and the per-word curves of every model analysed."""
    first, kinds = predictions[0], curve_kinds(ui)
    labels = [label_name(label, ui) for label in first.labels]
    score = word_view(first.curve, ui).score_label
    if len(predictions) == 2 and predictions[1].intervention != "none":  # the same model before and after
        cap = caption(first, known.get((first.task, first.model)), ui)
        names = [
            t("plain_model", ui),
            t("intervened", ui, intervention=intervention_name(predictions[1].intervention, ui)),
        ]
        probs = probability_bars(
            labels, dict(zip(names, (p.probs for p in predictions))), None, t("probabilities", ui), cap, ui=ui
        )
        curve = word_curves(
            [word_view(p.curve, ui) for p in predictions],
            names,
            t("curve_title", ui, score=score),
            kinds,
            labels,
            ui,
            cap,
        )
    elif len(predictions) == 1:
        cap = caption(first, known.get((first.task, first.model)), ui)
        probs = probability_bars(
            labels,
            {model_name(first.model): first.probs},
            label_name(first.label, ui),
            t("probabilities", ui),
            cap,
            ui=ui,
        )
        curve = word_curves(
            [word_view(first.curve, ui)], None, t("curve_title", ui, score=score), kinds, labels, ui, cap
        )
    else:
        cap = " · ".join(
            f"{model_name(p.model).split(' (')[0]} {known[(p.task, p.model)].sha256[:8]}"
            for p in predictions
            if (p.task, p.model) in known
        )
        cap = t(
            "caption",
            ui,
            model=t("all_models", ui),
            task=(fact.title if (fact := known.get((first.task, first.model))) else "") or task_name(first.task, ui),
            sha=cap,
            commit=next(iter(known.values())).commit if known else "?",
        )
        probs = probability_bars(
            labels, {model_name(p.model): p.probs for p in predictions}, None, t("probabilities", ui), cap, ui=ui
        )
        curve = word_curves(
            [word_view(p.curve, ui) for p in predictions],
            [model_name(p.model) for p in predictions],
            t("curve_title", ui, score=score),
            kinds,
            labels,
            ui,
            cap,
        )
    return probs, curve


def top_room(room: float | None) -> float | None:
    """The room of each top figure, from a model panel's figure room: side by side (CSS: #result .top-figures,
    flex-basis 480 px and a 1 em gap) where the result box (the panel's room and its 60 px) holds two."""
    box = room + 60 if room else None
    return (box - 40) / 2 if box and box >= 2 * 480 + 16 else room  # the gap, and each figure's border


def result_html(predictions: list[Prediction], known: Known, ui: str, method: str = "occlusion") -> str:
    """Everything below the summary: probabilities, per-word curves, the comparison, one panel per model."""
    first = predictions[0]
    with drawn_within(top_room(ROOM.get())):
        probs, curve = top_figures(predictions, known, ui)
    table = comparison_table(predictions, known, ui) if len(predictions) > 1 else ""
    panels = "".join(model_panel(p, known.get((p.task, p.model)), ui, method) for p in predictions)
    return (
        f'<div class="lab-result" data-text="{attr(first.text)}"><div class="top-figures">{probs}{curve}</div>'
        f"{table}<h2>{esc(t('panels' if len(predictions) > 1 else 'panels_one', ui))}</h2>{panels}</div>"
    )
