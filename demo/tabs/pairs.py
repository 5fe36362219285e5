"""The minimal pair, inside the Lab tab: a second sentence B beside the Lab's sentence A; per model both
labels, both expected sentiments and their difference, and one figure overlaying the two per-word curves on
aligned words. core.analysis.pairs computes all of it; this module words and draws it.

Callbacks first, then the layout, then the wiring.
"""

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

import gradio as gr
import pandas as pd

from core.analysis.pairs import SENTENCES, PairComparison, PairInputError, compare_pair
from core.predict import ALL, Cancelled
from demo.charts import pair_curves
from demo.i18n import (
    L,
    failure_text,
    label_name,
    model_name,
    notice_text,
    request_lang,
    t,
    task_name,
    view_text,
    warn,
    word_view,
)
from demo.plots import esc, md
from demo.svg import EXPORT_JS, drawn_for, room_js
from service.lab import ServedLab
from web.owners import Visitors
from web.runner import MODEL_POOL, RequestGate, abandoned

log = logging.getLogger(__name__)

ROOM_JS = room_js("#pair-figures")  # the pair's figures are drawn for their box


def pair_table(comparison: PairComparison, ui: str) -> pd.DataFrame:
    """One row per model: B − A beside the model (in view on a phone, where the other columns scroll), then
    both labels and both expected sentiments."""
    rows = [
        [
            model_name(p.model),
            round(p.difference, 3),
            label_name(p.a.label, ui),
            label_name(p.b.label, ui),
            round(p.score_a, 3),
            round(p.score_b, 3),
        ]
        for p in comparison.pairs
    ]
    score = view_text(comparison.score_label, ui)
    columns = [
        t("col_model", ui),
        t("col_difference", ui),
        t("col_label_a", ui),
        t("col_label_b", ui),
        t("col_score_a", ui, score=score),
        t("col_score_b", ui, score=score),
    ]
    return pd.DataFrame(rows, columns=columns)


def pair_figures(comparison: PairComparison, known: Mapping, ui: str) -> str:
    """One SVG figure per model: its curves on A and on B over the aligned words."""
    figures = []
    for p in comparison.pairs:
        kind = t(f"curve_{p.a.curve.kind}", ui)
        names = (f"A: {label_name(p.a.label, ui)}", f"B: {label_name(p.b.label, ui)}")
        fact = known.get((p.a.task, p.model))
        caption = t(
            "caption",
            ui,
            model=model_name(p.model),
            task=(fact and fact.title) or task_name(p.a.task, ui),
            sha=fact.sha256[:16] if fact else "?",
            commit=fact.commit if fact else "?",
        )
        figures.append(
            pair_curves(
                word_view(p.a.curve, ui),
                word_view(p.b.curve, ui),
                comparison.alignment,
                names,
                f"{model_name(p.model)} · {kind}",
                caption,
                f"pair-{p.model}",
                ui,
            )
        )
    return "".join(figures)


def _summary(comparison: PairComparison, ui: str) -> str:
    first = comparison.pairs[0]
    score = md(view_text(comparison.score_label, ui))  # P(a label of a visitor's file): as typed
    if len(comparison.pairs) == 1:  # one model: which way its score went, no count
        moved = "up" if first.difference > 0 else "down" if first.difference < 0 else "same"
        head = t(f"pair_summary_one_{moved}", ui, score=score, model=model_name(first.model))
    else:
        head = t(
            "pair_summary",
            ui,
            score=score,
            n=len(comparison.pairs),
            up=sum(p.difference > 0 for p in comparison.pairs),
            down=sum(p.difference < 0 for p in comparison.pairs),
        )
    texts = t("pair_texts", ui, a=md(first.a.text), b=md(first.b.text))
    bullets = []
    for sentence in SENTENCES:  # each notice once per sentence, with its models when not all have it
        by_notice: dict[str, list[str]] = {}
        for p in comparison.pairs:
            for notice in getattr(p, sentence).notices:
                by_notice.setdefault(notice_text(notice, ui), []).append(model_name(p.model))
        bullets += [
            f"- ⚠️ {sentence.upper()}: {md(n)}"
            if len(models) == len(comparison.pairs)
            else f"- ⚠️ {sentence.upper()}, {md(', '.join(models))}: {md(n)}"
            for n, models in by_notice.items()
        ]
    bullets += [f"- ❌ {md(failure_text(f, ui))}" for f in comparison.failures]
    return f"{head}\n\n{texts}" + ("\n\n" + "\n".join(bullets) if bullets else "")


def uncompared(summary: str = "") -> tuple:
    """The comparison's outputs with no comparison: `summary` alone, the table hidden, no figures (what a failed
    comparison shows, and another tab's single sentence leaves of the last one)."""
    return summary, gr.update(visible=False), ""


def analyse_pair(
    lab: ServedLab, known: Mapping, text_a: str, text_b: str, model: str, task: str, lang: str, ui: str
) -> tuple:
    """All outputs of one pair comparison: summary, table, the figures (one per model)."""
    try:
        comparison = compare_pair(
            lab,
            text_a,
            text_b,
            task,
            lang,
            models=None if model == ALL else [model],
            run=partial(RequestGate().run, executor=MODEL_POOL),  # one request: both sentences in its lanes
        )
    except Cancelled:
        raise abandoned() from None
    except PairInputError as err:
        message = t("pair_error", ui, sentence=err.sentence.upper(), message=notice_text(err, ui))
        warn(esc(message), ui)
        return uncompared(f"### {md(message)}")
    except Exception as err:  # a bug, not the input: log the trace, show one line
        log.exception("pair comparison failed for model %s", model)
        message = t("internal", ui, model=model_name(model), error=type(err).__name__)
        warn(esc(message), ui)
        return uncompared(f"### {md(message)}")
    return (
        _summary(comparison, ui),
        gr.update(value=pair_table(comparison, ui), visible=True),
        pair_figures(comparison, known, ui),
    )


@dataclass
class PairView:
    """The pair's components another tab fills (demo/tabs/lab.py's open_with)."""

    text_b: gr.Textbox
    box: gr.Accordion
    outputs: list  # what a comparison fills: the summary, the table, the figures (analyse_pair's outputs)


def build(
    lab: ServedLab,
    known: Mapping,
    text: gr.Textbox,
    model: gr.Dropdown,
    task: gr.Dropdown,
    lang: gr.Radio,
    visitors: Visitors,
) -> PairView:
    """The accordion under the Lab's sentence box; `text` is sentence A, and model, task and language are
    the Lab's own choices; `known` holds each checkpoint's facts (demo.tabs.checkpoints.facts)."""
    with gr.Accordion(L("pair"), open=False, elem_id="pair") as box:
        gr.Markdown(L("pair_md"))
        text_b = gr.Textbox(label=L("sentence_b"), lines=2, elem_id="sentence-b")
        run = gr.Button(L("run_pair"), elem_id="run-pair")
        summary = gr.Markdown(elem_id="pair-summary")
        table = gr.Dataframe(visible=False, interactive=False, wrap=True, elem_id="pair-table")
        figures = gr.HTML("", elem_id="pair-figures", elem_classes="figures", js_on_load=EXPORT_JS)

    room = gr.Number(visible=False)  # the width the figures get (ROOM_JS measures it)
    inputs, outputs = [text, text_b, model, task, lang, room], [summary, table, figures]

    def on_pair(text_a, text_b_value, model_value, task_value, lang_value, width, request: gr.Request):
        drawn_for(width)
        return analyse_pair(
            visitors.lab(lab, request),
            known,
            text_a,
            text_b_value,
            model_value,
            task_value,
            lang_value,
            request_lang(request),
        )

    for trigger in (run.click, text_b.submit):
        trigger(on_pair, inputs, outputs, api_visibility="private", concurrency_id="model", js=ROOM_JS)

    return PairView(text_b, box, outputs)
