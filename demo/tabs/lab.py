"""The Lab tab: type a sentence, see each model's prediction, curve, attribution and own views; a
minimal pair (demo/tabs/pairs.py) compares it with a second sentence.

Callbacks first (they only call core's Lab.compare), then the layout, then the wiring.
"""

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr
import pandas as pd

from core.predict import ALL, AUTO, Cancelled, InputError, Lab, ModelFailure, Prediction
from core.views import Table
from demo.attribution_view import build as build_method_selector
from demo.attribution_view import highlight_texts, requested, scores_table, word_scores
from demo.examples import EXAMPLES
from demo.i18n import TASK_NAMES, L, label_name, model_name, msg, notice_text, request_lang, task_name
from demo.plots import esc, grouped_probability_bars, md, probability_bars, to_figure, word_curves
from demo.runner import MODEL_POOL, RequestGate, abandoned
from demo.tabs import pairs

log = logging.getLogger(__name__)

OCCLUSION_COLOURS = {"strong_for": "#1a9850", "for": "#a6d96a", "against": "#fdae61", "strong_against": "#d73027",
                     "unknown": "#c8c8c8"}


def occlusion_spans(p: Prediction, ui: str, method: str = "occlusion") -> tuple[list[tuple[str, str | None]], dict[str, str], float]:
    """The analysed text cut into (piece, category): each word binned by how much it supports the predicted
    class by `method` (relative to the largest score); unknown words as such."""
    scores = word_scores(p, method)
    scale = max((abs(s) for s in scores), default=0.0)
    spans, pos = [], 0
    scores = scores or [0.0] * len(p.tokens)  # none past core's attribution cap: the text, uncoloured
    for token, score in zip(p.tokens, scores):
        if token.start > pos:
            spans.append((p.text[pos:token.start], None))
        s = score / scale if scale > 1e-9 else 0.0
        key = ("unknown" if not token.known else "strong_for" if s > 0.6 else "for" if s > 0.2
               else "strong_against" if s < -0.6 else "against" if s < -0.2 else None)
        spans.append((p.text[max(pos, token.start):token.end], msg(key, ui) if key else None))
        pos = max(pos, token.end)
    if pos < len(p.text):
        spans.append((p.text[pos:], None))
    return spans, {msg(k, ui): c for k, c in OCCLUSION_COLOURS.items()}, scale


def _summary(predictions: list[Prediction], ui: str) -> str:
    first = predictions[0]
    facts = [f"{msg('language', ui)}: {msg('lang_' + first.lang, ui)} ({msg('detected', ui)})",
             f"{msg('task', ui)}: {esc(task_name(first.task, ui))}"]
    if len(predictions) == 1:
        p = predictions[0]
        head = f"### {msg('prediction', ui)}: **{esc(label_name(p.label, ui))}** ({max(p.probs):.2f})"
        facts = [f"{msg('model', ui)}: {esc(model_name(p.model))}"] + facts + [f"{msg('source', ui)}: `{p.source}`"]
    else:
        votes = Counter(p.label for p in predictions)
        label, count = votes.most_common(1)[0]
        head = "### " + msg("majority", ui, label=esc(label_name(label, ui)), votes=count, n=len(predictions))
    return head + "\n\n" + " · ".join(facts)


def _notices(predictions: list[Prediction], failures: list[ModelFailure], ui: str) -> str:
    by_notice: dict[str, list[str]] = {}
    for p in predictions:
        for notice in p.notices:
            by_notice.setdefault(notice_text(notice, ui), []).append(model_name(p.model))
    lines = [f"- ⚠️ {md(n)}" if len(models) == len(predictions) else f"- ⚠️ {md(', '.join(models))}: {md(n)}"
             for n, models in by_notice.items()]
    lines += [f"- ❌ {md(msg('failed', ui, model=model_name(f.model), error=f.error))}" for f in failures]
    return "\n".join(lines)


def _curve_kinds(ui: str) -> dict[str, str]:
    return {kind: msg(f"curve_{kind}", ui) for kind in ("native", "probe", "prefix")}


def _table(predictions: list[Prediction], ui: str) -> pd.DataFrame:
    kinds = _curve_kinds(ui)
    rows = [[model_name(p.model), label_name(p.label, ui), round(max(p.probs), 3), kinds.get(p.curve.kind, p.curve.kind),
             p.source] for p in predictions]
    columns = [msg(k, ui) for k in ("col_model", "col_label", "col_confidence", "col_curve", "col_source")]
    return pd.DataFrame(rows, columns=columns)


def analyse(lab: Lab, text: str, model: str, task: str, lang: str, ui: str, method: str = "occlusion") -> tuple:
    """All outputs of one click: summary, notices, probabilities, curve, comparison table, state."""
    try:
        result = lab.compare(text, task, lang, models=None if model == ALL else [model], executor=MODEL_POOL,
                             methods=requested(method), gate=RequestGate())
    except Cancelled:
        raise abandoned() from None
    except InputError as err:
        message = notice_text(err.notice, ui)
        gr.Warning(esc(message))
        return f"### {md(message)}", gr.update(value="", visible=False), None, None, gr.update(visible=False), None
    except Exception as err:  # a bug, not the input: log the trace, show one line
        log.exception("analysis failed for model %s", model)
        message = msg("internal", ui, model=model_name(model), error=type(err).__name__)
        gr.Warning(esc(message))
        return f"### {md(message)}", gr.update(value="", visible=False), None, None, gr.update(visible=False), None
    predictions, kinds = result.predictions, _curve_kinds(ui)
    first = predictions[0]
    labels = [label_name(l, ui) for l in first.labels]
    if len(predictions) == 1:
        probs = probability_bars(labels, first.probs, label_name(first.label, ui))
        curve = word_curves([first.curve], kind_labels=kinds, class_labels=labels)
    else:
        probs = grouped_probability_bars(labels, {model_name(p.model): p.probs for p in predictions})
        curve = word_curves([p.curve for p in predictions], [model_name(p.model) for p in predictions],
                            title=first.curve.score_label, kind_labels=kinds, class_labels=labels)
    notices = _notices(predictions, result.failures, ui)
    table = gr.update(value=_table(predictions, ui), visible=len(predictions) > 1)
    return (_summary(predictions, ui), gr.update(value=notices, visible=bool(notices)), probs, curve, table,
            {"ui": ui, "predictions": predictions, "method": method})


def model_panel(p: Prediction, ui: str, method: str = "occlusion") -> None:
    """One model's panel: its word-attribution highlight (by `method`), every method's scores, then every
    view it returned."""
    with gr.Accordion(f"{model_name(p.model)}: {label_name(p.label, ui)}", open=True, elem_classes="model-panel"):
        spans, colours, scale = occlusion_spans(p, ui, method)
        title, note = highlight_texts(p, method, scale, ui)
        gr.HighlightedText(spans, color_map=colours, show_legend=True, show_inline_category=False,
                           label=title, elem_classes="occlusion")
        gr.Markdown(f"<small>{esc(note)} {msg('source', ui)}: `{p.source}`</small>")
        if p.attributions:
            gr.Dataframe(scores_table(p, ui), label=msg("attr_scores", ui, label=label_name(p.label, ui)))
        for view in p.views:
            try:
                if isinstance(view, Table):
                    gr.Dataframe(pd.DataFrame(view.rows, columns=view.columns), label=view.title, wrap=True)
                else:
                    gr.Plot(to_figure(view), show_label=False, elem_classes="view-plot")
            except Exception:  # one view that cannot be drawn must not hide the others
                log.exception("cannot draw %s of %s", type(view).__name__, p.model)
                gr.Markdown(f"⚠️ {esc(type(view).__name__)}: {esc(getattr(view, 'title', ''))} (not drawable)")


def task_choices(lab: Lab) -> list[tuple]:
    """The task dropdown's choices: auto, then every task loaded (the Train tab adds the ones it trains)."""
    return [(L("auto"), AUTO)] + [(L(f"task_{t}") if t in TASK_NAMES["en"] else t, t) for t in lab.tasks()]


@dataclass
class LabView:
    """What another tab fills to open a sentence or a pair here (the Probes tab opens its failures)."""

    text: gr.Textbox
    task: gr.Dropdown
    pair: pairs.PairView
    analyse_after: Callable  # (event, gr.State: was a pair opened?) -> both analyses, once the event succeeded


def build(lab: Lab) -> LabView:
    with gr.Row():
        with gr.Column(scale=3):
            text = gr.Textbox(label=L("sentence"), placeholder=L("placeholder"), lines=3, elem_id="sentence")
            run = gr.Button(L("run"), variant="primary", elem_id="run")
        with gr.Column(scale=2):
            model = gr.Dropdown([(L("all_models"), ALL)] + [(model_name(m), m) for m in lab.models()], value=ALL,
                                label=L("model"), info=L("model_info"), elem_id="model")
            with gr.Row():
                task = gr.Dropdown(task_choices(lab), value=AUTO, label=L("task"), info=L("task_info"), elem_id="task",
                                   visible=len(lab.tasks()) > 1)
                lang = gr.Radio([(L("auto"), AUTO), (L("english"), "en"), (L("chinese"), "zh")], value=AUTO,
                                label=L("language"), elem_id="lang")
    method = build_method_selector(lab, model, task)
    gr.Examples([[s] for _, s in EXAMPLES], inputs=[text], label=L("examples"), examples_per_page=len(EXAMPLES),
                example_labels=[f"{what}: {s}" for what, s in EXAMPLES])
    pair = pairs.build(lab, text, model, task, lang)
    summary = gr.Markdown(elem_id="summary")
    notices = gr.Markdown(visible=False, elem_id="notices")
    table = gr.Dataframe(visible=False, label=L("comparison"), interactive=False, elem_id="comparison")
    with gr.Row():
        probs = gr.Plot(label=L("probabilities"), elem_id="probs")
        curve = gr.Plot(label=L("curve"), elem_id="curve")
    state = gr.State(None)
    gr.Markdown(L("panels"))

    @gr.render(inputs=[state])
    def panels(result):
        for p in (result or {}).get("predictions", []):
            model_panel(p, result["ui"], result["method"])

    def on_run(text_value, model_value, task_value, lang_value, method_value, request: gr.Request):
        return analyse(lab, text_value, model_value, task_value, lang_value, request_lang(request), method_value)

    inputs, outputs = [text, model, task, lang, method], [summary, notices, probs, curve, table, state]
    for trigger in (run.click, text.submit, method.change):  # another method runs on demand
        trigger(on_run, inputs, outputs, api_visibility="private", concurrency_id="model")

    def analyse_after(dependency, is_pair: gr.State):
        analysed = dependency.success(on_run, inputs, outputs, api_visibility="private", concurrency_id="model")
        return pair.analyse_after(analysed, is_pair)

    return LabView(text, task, pair, analyse_after)
