"""The Lab tab: type a sentence, see each model's prediction, curve, attribution and own views; a
minimal pair (demo/tabs/pairs.py) compares it with a second sentence.

One click is one update: the summary, the notices and one HTML result (the figures as SVG, drawn on the
server by demo/plots.py, and a panel per model). From the click until it arrives, the page says it is
analysing and hides the previous result, so a stale panel is never shown as the answer. A link (demo/links.py:
sentence, model, task, method, intervention, DCNN map, sentence B) fills the inputs and runs them. The DCNN
panel's map choice redraws only its one-map feature graph (`draw_top_map`, a server function of the result:
only that model runs again).

Callbacks first (they only call core's Lab.compare), then the layout, then the wiring.
"""

import contextvars
import dataclasses
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import gradio as gr

from core.analysis.attribution import on_demand
from core.notices import InputError, Notice
from core.predict import ALL, AUTO, Cancelled, Comparison, Lab, Prediction
from core.views import KMaxGraph
from demo.attribution_export import build as build_export
from demo.attribution_view import build as build_method_selector
from demo.attribution_view import highlight_texts, requested, scores_table, word_scores
from demo.examples import EXAMPLES
from demo.i18n import (
    L,
    example_labels,
    failure_text,
    intervention_name,
    intervention_text,
    label_name,
    model_name,
    notice_text,
    request_lang,
    source_text,
    t,
    task_label,
    task_name,
    warn,
    word_view,
)
from demo.links import COPY_JS, LinkState, intervention_specs, number, state_to_query
from demo.owners import Visitors
from demo.plots import esc, md, probability_bars, to_svg, word_curves
from demo.runner import MODEL_POOL, RequestGate, abandoned
from demo.svg import EXPORT_JS, ROOM, SUPPORT, drawn_for, drawn_within, room_js
from demo.svg import esc as attr  # escapes quotes too: typed text inside an attribute value
from demo.tabs import pairs
from demo.tabs.checkpoints import Facts, facts
from service.owners import PUBLIC

log = logging.getLogger(__name__)
STATUS_EVERY_S = 0.5  # how often a slow analysis says how far it is

# the page hides the last result from the click until the new one is in (#analysing says so; ui.CSS); the
# figures are drawn for the width a figure in a model panel gets (its box's padding and borders: 60 px at 390);
# on a phone, where the result starts screens below the button, the page moves to the #analysing line, and
# to the summary once the result is in (DONE_JS: the page was too short to go further before)
BUSY_JS = room_js(
    "#result",
    60,
    """document.body.classList.add('lab-busy');
  document.body.dataset.asked = document.querySelector('#sentence textarea')?.value ?? '';
  const line = document.querySelector('#analysing');
  if (line && line.getBoundingClientRect().top > 0.6 * innerHeight) {
    document.body.dataset.follow = 'yes';
    line.scrollIntoView({block: 'start'});
  }""",
)
# ... from the click itself: Gradio runs BUSY_JS a moment later, after the browser may have painted a frame
BUSY_ON_CLICK_JS = """
document.addEventListener('click', (event) => {
  if (event.target.closest('#run')) document.body.classList.add('lab-busy');
}, true);
"""
# a sentence other than the one analysed (typed, an example tapped): the result of the last one is hidden and
# #stale says to press Analyse (BUSY_JS keeps the sentence asked for in body's data-asked)
STALE = """
  const typed = document.querySelector('#sentence textarea')?.value ?? '';
  const shown = document.querySelector('#result .lab-result');
  document.body.classList.toggle('lab-stale', !!shown && document.body.dataset.asked !== typed);
"""
DONE_JS = (
    """() => {
  document.body.classList.remove('lab-busy');
  if (document.body.dataset.follow) document.querySelector('#summary')?.scrollIntoView({block: 'start'});
  delete document.body.dataset.follow;"""
    + STALE
    + "}"
)
STALE_JS = "() => {" + STALE + "}"
# a Copy link's first step: the DCNN panel's map, where one other than the default (the first) is chosen
READ_MAP_JS = """(...args) => {
  const choice = document.querySelector('#result .top-map select');
  args[args.length - 1] = choice && choice.selectedIndex > 0 ? choice.value : '';
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
            f'<mark style="background:{SUPPORT[key]}" title="{attr(t(key, ui))} ({score:+.3f})">{piece}</mark>'
            if key
            else piece
        )
        pos = max(pos, token.end)
    parts.append(esc(p.text[pos:]))
    legend = "".join(
        f'<span class="key"><mark style="background:{c}">&nbsp;&nbsp;</mark> {esc(t(k, ui))}</span>'
        for k, c in SUPPORT.items()
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
    return text + (f" · {t('accuracy_paper', ui, paper=fact.paper)}" if fact.paper is not None else "")


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


def top_map_view(p: Prediction, index: int, view: KMaxGraph, fact: Facts | None, ui: str) -> str:
    """The feature graph of one top-layer map, and below it which map it is and why it is shown: what it adds
    to the predicted class's logit, beside the map that adds most."""
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
    name = model_name(p.model)
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


def intervention_section(lab: Lab, task: str, model: str, intervention: str, ui: str) -> str:
    """One sentence: the paper's claim the intervention tests (its section), in the UI language."""
    key = intervention.partition(":")[0]
    section = lab.interventions(task).get(model, {}).get(key, {}).get("section", "")
    return t("intervention_tests", ui, section=intervention_text(model, key, section, ui))


def votes_text(predictions: list[Prediction], ui: str) -> str:
    """The models' votes: a label more of them chose than any other is the majority (with its count); labels
    that share the top count are a tie, said as one ("2-2-1": no majority), never one of them picked."""
    votes = Counter(p.label for p in predictions).most_common()
    top = [label for label, count in votes if count == votes[0][1]]
    split = "-".join(str(count) for _, count in votes)
    if len(top) == 1:
        return t("majority", ui, label=md(label_name(top[0], ui)), votes=votes[0][1], n=len(predictions), split=split)
    return t(
        "tie",
        ui,
        labels=t("tie_and", ui).join(f"**{md(label_name(label, ui))}**" for label in top),
        votes=votes[0][1],
        n=len(predictions),
        split=split,
    )


def _summary(predictions: list[Prediction], ui: str, titles: dict[str, str] | None = None) -> str:
    """The headline; a visitor's task is named by its `titles` (Lab.titles: its file and date). A title or a label
    comes from a visitor's file: Markdown escaped, so that `x[a](javascript:...).csv` is never a link."""
    first = predictions[0]
    facts_ = [
        f"{t('fact_language', ui)}: {t('lang_' + first.lang, ui)} ({t('detected', ui)})",
        f"{t('fact_task', ui)}: {md((titles or {}).get(first.task) or task_name(first.task, ui))}",
    ]
    if len(predictions) == 1 or predictions[-1].intervention != "none":
        p = predictions[-1]
        head = f"### {t('prediction', ui)}: **{md(label_name(p.label, ui))}** ({max(p.probs):.2f})"
        if p.intervention != "none":
            head = t(
                "intervention_summary",
                ui,
                intervention=intervention_name(p.intervention, ui),
                after=f"{md(label_name(p.label, ui))} ({max(p.probs):.2f})",
                before=f"{md(label_name(first.label, ui))} ({max(first.probs):.2f})",
            )
        facts_ = (
            [f"{t('fact_model', ui)}: {md(model_name(p.model))}"]
            + facts_
            + [f"{t('source', ui)}: `{source_text(p.source, ui)}`"]
        )
    else:
        head = "### " + votes_text(predictions, ui)
    sentence = f"{t('fact_sentence', ui)}{t('colon', ui)}“{md(first.text)}”"  # which sentence this result is of
    return head + "\n\n" + sentence + "\n\n" + " · ".join(facts_)


def _notices(predictions: list[Prediction], failures: list, ui: str, method: str = "occlusion") -> str:
    """The notices, each once with the models it concerns; one about attribution methods names only the
    method the highlight shows (core lists every method the request computed, the defaults too)."""
    by_notice: dict[str, list[str]] = {}
    for p in predictions:
        for notice in p.notices:
            if method in notice.params.get("methods", ()):
                notice = Notice(notice.code, notice.params | {"methods": [method]})
            by_notice.setdefault(notice_text(notice, ui), []).append(model_name(p.model))
    lines = [
        f"- ⚠️ {md(n)}" if len(models) == len(predictions) else f"- ⚠️ {md(', '.join(models))}: {md(n)}"
        for n, models in by_notice.items()
    ]
    lines += [f"- ❌ {md(failure_text(f, ui))}" for f in failures]
    return "\n".join(lines)


def _curve_kinds(ui: str) -> dict[str, str]:
    return {kind: t(f"curve_{kind}", ui) for kind in ("native", "probe", "prefix")}


def comparison_table(predictions: list[Prediction], known: dict, ui: str) -> str:
    """One row per model: label, probability, curve kind, checkpoint accuracy, checkpoint."""
    kinds = _curve_kinds(ui)
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
        f'<table id="comparison"><caption>{esc(t("comparison", ui))}</caption><thead><tr>'
        + "".join(f"<th>{esc(h)}</th>" for h in heads)
        + f"</tr></thead><tbody>{cells}</tbody></table>"
    )


def top_figures(predictions: list[Prediction], known: dict, ui: str) -> tuple[str, str]:
    """The class probabilities and the per-word curves of every model analysed."""
    first, kinds = predictions[0], _curve_kinds(ui)
    labels = [label_name(label, ui) for label in first.labels]
    score = word_view(first.curve, ui).score_label
    if len(predictions) == 2 and predictions[1].intervention != "none":  # the same model before and after
        cap = caption(first, known.get((first.task, first.model)), ui)
        names = [
            t("plain_model", ui),
            t("intervened", ui, intervention=intervention_name(predictions[1].intervention, ui)),
        ]
        probs = probability_bars(
            labels, dict(zip(names, (p.probs for p in predictions))), None, t("probabilities", ui), cap
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
            labels, {model_name(first.model): first.probs}, label_name(first.label, ui), t("probabilities", ui), cap
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
            labels, {model_name(p.model): p.probs for p in predictions}, None, t("probabilities", ui), cap
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


def result_html(predictions: list[Prediction], known: dict, ui: str, method: str = "occlusion") -> str:
    """Everything below the summary: probabilities, per-word curves, the comparison, one panel per model."""
    first = predictions[0]
    with drawn_within(top_room(ROOM.get())):
        probs, curve = top_figures(predictions, known, ui)
    table = comparison_table(predictions, known, ui) if len(predictions) > 1 else ""
    panels = "".join(model_panel(p, known.get((p.task, p.model)), ui, method) for p in predictions)
    return (
        f'<div class="lab-result" data-text="{attr(first.text)}"><div class="top-figures">{probs}{curve}</div>'
        f"{table}<h2>{esc(t('panels', ui))}</h2>{panels}</div>"
    )


def analyse(
    lab: Lab,
    known: dict,
    text: str,
    model: str,
    task: str,
    lang: str,
    ui: str,
    method: str = "occlusion",
    intervention: str = "none",
    top_map: int | None = None,
    gate: RequestGate | None = None,
) -> tuple:
    """All outputs of one click: summary, notices, the result HTML. With an intervention (one model), the
    model as trained and the model with the intervention, side by side. `top_map`: the DCNN panel's map (a
    link's; None: the one that adds most). `gate`: the request's (RequestGate)."""
    gate = gate or RequestGate()
    try:
        if intervention not in (None, "", "none"):
            if model == ALL:
                warn(esc(t("intervention_needs_one", ui)), ui)
                return f"### {md(t('intervention_needs_one', ui))}", gr.update(value="", visible=False), ""
            result = Comparison(
                [
                    lab.predict(text, model, task, lang, methods=requested(method), gate=gate, intervention=chosen)
                    for chosen in (None, intervention)
                ],
                [],
            )
        else:
            result = lab.compare(
                text,
                task,
                lang,
                models=None if model == ALL else [model],
                executor=MODEL_POOL,
                methods=requested(method),
                gate=gate,
            )
    except Cancelled:
        raise abandoned() from None
    except InputError as err:
        message = notice_text(err, ui)
        warn(esc(message), ui)
        return f"### {md(message)}", gr.update(value="", visible=False), ""
    except Exception as err:  # a bug, not the input: log the trace, show one line
        log.exception("analysis failed for model %s", model)
        message = t("internal", ui, model=model_name(model), error=type(err).__name__)
        warn(esc(message), ui)
        return f"### {md(message)}", gr.update(value="", visible=False), ""
    notices = _notices(result.predictions, result.failures, ui, method)
    summary = _summary(result.predictions, ui, lab.titles)
    if len(result.predictions) == 2 and result.predictions[1].intervention != "none":
        first = result.predictions[0]
        summary += "\n\n" + md(
            intervention_section(lab, first.task, first.model, result.predictions[1].intervention, ui)
        )
    return (
        summary,
        gr.update(value=notices, visible=bool(notices)),
        result_html(on_top_map(lab, result.predictions, top_map), known, ui, method),
    )


def on_top_map(lab: Lab, predictions: list[Prediction], top_map: int | None) -> list[Prediction]:
    """The predictions with each one-map feature graph on map `top_map` (the model runs again for its views
    alone, as redraw_top_map does); a model without such a map keeps the one that adds most."""
    if top_map is None:
        return predictions
    drawn = []
    for p in predictions:
        if any(isinstance(v, KMaxGraph) and v.top_map is not None for v in p.views):
            chosen = None if p.intervention == "none" else p.intervention
            try:
                again = lab.predict(
                    p.text,
                    p.model,
                    p.task,
                    methods=["occlusion"],
                    view_options={"top_map": top_map},
                    intervention=chosen,
                )
                p = dataclasses.replace(p, views=again.views)
            except ValueError:  # no such map (DCNN.views); InputError is one too, and the text passed already
                pass
        drawn.append(p)
    return drawn


class CountingGate(RequestGate):
    """The request's gate, counting the models that have answered: the status line of a slow analysis."""

    def __init__(self):
        super().__init__()
        self.answered = 0

    def run(self, job, here):
        outcome = super().run(job, here)
        self.answered += 1
        return outcome


def streamed(
    work: Callable[[], tuple], status: Callable[[float], str], done: str, poll: float = STATUS_EVERY_S
) -> Iterator[tuple]:
    """`work` (an analysis: summary, notices, result) in a thread of its own, with this request's context; while
    it runs, `status(seconds)` for #analysing every `poll` seconds, then #analysing back to `done` and the outputs.
    A slow attribution method takes seconds per model: the page says how far it is, not only "Analysing"."""
    start = time.monotonic()
    with ThreadPoolExecutor(1, thread_name_prefix="lab-analysis") as pool:
        future = pool.submit(contextvars.copy_context().run, work)
        while True:
            try:
                outputs = future.result(timeout=poll)
                break
            except TimeoutError:
                yield status(time.monotonic() - start), gr.update(), gr.update(), gr.update()
    yield done, *outputs


def redraw_top_map(lab: Lab, known: dict, text: str, task: str, model: str, top_map: int, ui: str) -> str:
    """The panel's graph of another top-layer map (top_map_view): the one model runs again on the analysed
    text, the others not at all. Bad input (a map or text the page never offers) gets a line, not a figure."""
    try:
        p = lab.predict(text, model, task, methods=["occlusion"], view_options={"top_map": int(top_map)})
    except InputError as err:  # before ValueError, which it is
        return f'<p class="view-note">⚠️ {esc(notice_text(err, ui))}</p>'
    except (ValueError, TypeError):  # not a number, no such map (DCNN.views), or a model without maps
        return f'<p class="view-note">⚠️ {esc(t("graph_map_error", ui, map=top_map))}</p>'
    index, view = next((i, v) for i, v in enumerate(p.views) if isinstance(v, KMaxGraph) and v.top_map is not None)
    return top_map_view(p, index, view, known.get((p.task, p.model)), ui)


def intervention_choices(lab: Lab, model: str, task: str, ui: str) -> list[tuple[str, str]]:
    specs = intervention_specs(lab, model, task)
    return [(t("intervention_none", ui), "none")] + [(intervention_name(key, ui), key) for key in specs]


def intervention_value(key: str, index: float | None, specs: dict[str, dict]) -> str:
    """What Lab.predict takes: "none", "key" or "key:index"; the index only where the intervention has one."""
    if key in (None, "", "none") or key not in specs:
        return "none"
    return key if specs[key]["index"] is None or index is None else f"{key}:{int(index)}"


def task_choices(lab: Lab) -> list[tuple]:
    """The task dropdown's choices: auto, then every task of `lab` (the Train tab adds the ones it trains, named
    by their file and date)."""
    return [(L("auto"), AUTO)] + [(lab.titles.get(task) or task_label(task), task) for task in lab.tasks()]


@dataclass
class LabView:
    """What another tab fills to open a sentence or a pair here (the Probes tab opens its failures)."""

    text: gr.Textbox
    task: gr.Dropdown
    pair: pairs.PairView
    analyse_after: Callable  # (event, gr.State: was a pair opened?) -> both analyses, once the event succeeded
    open_link: Callable  # (demo, gr.State of a LinkState) -> once it is set, the Lab fills and runs it
    model: gr.Dropdown  # a probe failure opens with the model that failed


def build(lab: Lab, visitors: Visitors) -> LabView:
    known = facts(lab)
    public = lab.visible_to(PUBLIC)  # the page everybody is sent; a page load adds the visitor's own tasks
    with gr.Row(equal_height=False):  # two columns side by side where they fit, else the choices under the text
        with gr.Column(scale=3, min_width=320):
            text = gr.Textbox(label=L("sentence"), placeholder=L("placeholder"), lines=3, elem_id="sentence")
            with gr.Row():
                run = gr.Button(L("run"), variant="primary", elem_id="run", scale=3)
                copy = gr.Button(L("copy_link"), elem_id="copy-link", scale=1)
        with gr.Column(scale=2, min_width=320):
            model = gr.Dropdown(
                [(L("all_models"), ALL)] + [(model_name(m), m) for m in public.models()],
                value=ALL,
                label=L("model"),
                info=L("model_info"),
                elem_id="model",
            )
            with gr.Row(equal_height=False):
                task = gr.Dropdown(
                    task_choices(public),
                    value=AUTO,
                    label=L("task"),
                    info=L("task_info"),
                    elem_id="task",
                    visible=len(public.tasks()) > 1,
                    allow_custom_value=True,  # a task that went away meanwhile: core's notice, not Gradio's error
                    min_width=260,  # "SST fine-grained (5 classes)" in full; the language goes under it if need be
                )
                lang = gr.Radio(
                    [(L("auto"), AUTO), (L("english"), "en"), (L("chinese"), "zh")],
                    value=AUTO,
                    label=L("language"),
                    elem_id="lang",
                )
            with gr.Row(visible=False) as intervention_row:
                intervention = gr.Dropdown(
                    [("none", "none")],
                    value="none",
                    label=L("intervention"),
                    info=L("intervention_info"),
                    elem_id="intervention",
                    scale=2,
                    # a run may carry a choice the server has just reset (another model chosen a moment before
                    # Analyse): the run answers without it (intervention_value), never with Gradio's error
                    allow_custom_value=True,
                )
                intervention_index = gr.Number(
                    1, precision=0, label=L("intervention_index"), visible=False, elem_id="intervention-index", scale=1
                )
    method = build_method_selector(lab, model, task, visitors)
    link = gr.Markdown(elem_id="permalink")
    shown_map = gr.Textbox(visible=False)  # the DCNN panel's map when Copy link is clicked (READ_MAP_JS)
    room = gr.Number(visible=False)  # the width the figures get (BUSY_JS measures it)
    examples = gr.Examples(
        [[s] for _, s in EXAMPLES],
        inputs=[text],
        label=L("examples"),
        examples_per_page=len(EXAMPLES),
        example_labels=example_labels("en"),
        elem_id="examples",
    )
    pair = pairs.build(lab, known, text, model, task, lang, visitors)
    analysing = gr.Markdown(L("analysing"), elem_id="analysing")
    gr.Markdown(L("stale"), elem_id="stale")
    summary = gr.Markdown(elem_id="summary")
    notices = gr.Markdown(visible=False, elem_id="notices")

    def draw_top_map(args: list, request: gr.Request) -> str:  # TOP_MAP_JS calls it with the panel's data
        text_value, task_value, model_value, top_map, width = args
        drawn_for(width)
        return redraw_top_map(
            visitors.lab(lab, request), known, text_value, task_value, model_value, top_map, request_lang(request)
        )

    result = gr.HTML(
        "",
        elem_id="result",
        elem_classes="figures",
        js_on_load=EXPORT_JS + BUSY_ON_CLICK_JS + TOP_MAP_JS,
        server_functions=[draw_top_map],
    )
    build_export(lab, visitors, model, task, lang)

    def on_run(
        text_value,
        model_value,
        task_value,
        lang_value,
        method_value,
        key,
        index,
        width,
        request: gr.Request,
        top_map=None,
    ):
        """The analysis, its figures drawn for `width` px; with a slow attribution method (integrated gradients,
        SmoothGrad) the #analysing line says meanwhile which method runs, how many models have answered and for
        how long."""
        drawn_for(width)
        seen, ui = visitors.lab(lab, request), request_lang(request)
        specs = intervention_specs(seen, model_value, task_value)
        chosen = intervention_value(key, index, specs)
        if key not in (None, "", "none") and key not in specs and model_value != ALL:
            gr.Warning(esc(t("intervention_dropped", ui, intervention=key, model=model_name(model_value))))
        inputs = (seen, known, text_value, model_value, task_value, lang_value, ui, method_value, chosen, top_map)
        if not on_demand(tuple(requested(method_value))):
            yield gr.update(), *analyse(*inputs)
            return
        gate = CountingGate()  # made here, in the request's context: it follows the request's client
        name = t(f"attr_name_{method_value}", ui)

        def status(seconds: float) -> str:
            return t("analysing_slow", ui, method=name, answered=gate.answered, seconds=seconds)

        yield from streamed(lambda: analyse(*inputs, gate=gate), status, t("analysing", ui))

    def on_model(model_value, task_value, request: gr.Request):
        """One model: its interventions to choose from (none chosen); all five: no menu. On the visitor's own
        choice only (`input`): a link sets the model and its intervention together (on_link)."""
        choices = intervention_choices(visitors.lab(lab, request), model_value, task_value, request_lang(request))
        return gr.update(visible=len(choices) > 1), gr.update(choices=choices, value="none"), gr.update(visible=False)

    def on_intervention(key, model_value, task_value, request: gr.Request):
        """The index box, for an intervention that takes one: its range on the model's checkpoint (a word or a
        level: up to the sentence's length), starting at its lowest value."""
        seen, ui = visitors.lab(lab, request), request_lang(request)
        spec = intervention_specs(seen, model_value, task_value).get(key)
        if not spec or spec["index"] is None:
            return gr.update(visible=False)
        net = next(c.model for (tk, m), c in seen.checkpoints.items() if m == model_value and task_value in (AUTO, tk))
        lowest, highest = net.intervention_range(key)
        kind = t(f"intervention_kind_{spec['index']}", ui)
        if spec["index"] in ("word", "level"):  # the sentence bounds it (core.predict checks it)
            label, highest = t("intervention_range_words", ui, kind=kind, lowest=lowest), None
        else:
            label = t("intervention_range", ui, kind=kind, lowest=lowest, highest=highest)
        return gr.update(visible=True, value=lowest, minimum=lowest, maximum=highest, label=label)

    for trigger in (model.input, task.input):
        trigger(
            on_model,
            [model, task],
            [intervention_row, intervention, intervention_index],
            api_visibility="private",
            show_progress="hidden",
        )
    intervention.input(
        on_intervention,
        [intervention, model, task],
        [intervention_index],
        api_visibility="private",
        show_progress="hidden",
    )

    outputs = [summary, notices, result]
    run_outputs = [analysing, *outputs]  # an analysis event says how far it is in #analysing (on_run)
    inputs = [text, model, task, lang, method, intervention, intervention_index]
    run_inputs = [*inputs, room]
    # every analysis event: private, in the model lanes, the page marked busy until its answer
    run_event = dict(api_visibility="private", concurrency_id="model", js=BUSY_JS, show_progress="hidden")
    # another method, intervention or index runs on demand; the visitor's own choice only (`input`): a link
    # sets the method with the rest and runs once (open_link)
    for trigger in (run.click, text.submit, method.input, intervention.input, intervention_index.submit):
        trigger(on_run, run_inputs, run_outputs, **run_event).then(None, js=DONE_JS)

    def on_copy(
        text_value, model_value, task_value, lang_value, method_value, key, index, b, top_map, request: gr.Request
    ):
        """The link of what the Lab shows (COPY_JS puts the page's address in front)."""
        spec = intervention_specs(visitors.lab(lab, request), model_value, task_value).get(key)
        state = LinkState(
            text=text_value or "",
            b=b or "",
            model=model_value,
            task=task_value,
            lang=lang_value,
            method=method_value,
            intervention=key if spec else "none",
            index=int(index) if spec and spec["index"] is not None and index is not None else None,
            map=number(top_map),
        )
        return state_to_query(state)

    text.change(None, None, None, js=STALE_JS)
    copy_inputs = [*inputs, pair.text_b, shown_map]
    copied = copy.click(on_copy, copy_inputs, [link], js=READ_MAP_JS, api_visibility="private", show_progress="hidden")
    copied.then(None, [link], [link], js=COPY_JS)

    def analyse_after(dependency, is_pair: gr.State):
        analysed = dependency.success(on_run, run_inputs, run_outputs, **run_event)
        analysed.then(None, js=DONE_JS)
        return pair.analyse_after(analysed, is_pair)

    def on_labels(request: gr.Request):
        return gr.Dataset(sample_labels=example_labels(request_lang(request)))

    def on_link(state: LinkState, request: gr.Request):
        """The inputs the link names, checked against the model (demo/links.py); its sentence B with the pair
        open."""
        seen = visitors.lab(lab, request)
        has_menu = bool(intervention_specs(seen, state.model, state.task))
        return (
            state.text,
            state.model,
            state.task,
            state.lang,
            state.method,
            gr.update(visible=has_menu),
            gr.update(
                choices=intervention_choices(seen, state.model, state.task, request_lang(request)),
                value=state.intervention,
            ),
            gr.update(visible=state.index is not None, value=state.index),
            state.b,
            gr.Accordion(open=bool(state.b)),
            bool(state.b),
        )

    def on_link_run(
        state, text_value, model_value, task_value, lang_value, method_value, key, index, width, request: gr.Request
    ):
        """The analysis of the filled inputs, on the link's DCNN map."""
        inputs = (text_value, model_value, task_value, lang_value, method_value, key, index, width)
        yield from on_run(*inputs, request, state.map)

    def open_link(demo: gr.Blocks, state: gr.State) -> None:
        """On page load the examples' labels in the page's language; once `state` is set (a link names a
        sentence), the inputs filled and analysed, and the pair if it names sentence B."""
        demo.load(on_labels, None, [examples.dataset], api_visibility="private")
        is_pair = gr.State(False)
        filled = state.change(
            on_link,
            [state],
            [*inputs[:5], intervention_row, intervention, intervention_index, pair.text_b, pair.box, is_pair],
            api_visibility="private",
        )
        analysed = filled.then(on_link_run, [state, *run_inputs], run_outputs, **run_event)
        analysed.then(None, js=DONE_JS)
        pair.analyse_after(analysed, is_pair)

    return LabView(text, task, pair, analyse_after, open_link, model)
