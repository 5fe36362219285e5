"""What the Lab tab's events do, apart from the page: one analysis (core's Lab.compare or, with an intervention,
Lab.predict before and after) into the summary, the notices and the result HTML (demo/lab_text.py,
demo/lab_html.py); the streamed status of a slow one; the DCNN panel's redraw of another map; the menus'
choices. No component is built here."""

import contextvars
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import gradio as gr

from core.analysis.attribution import on_demand
from core.notices import InputError
from core.predict import ALL, AUTO, Cancelled, Comparison, Plan, Request
from core.views import KMaxGraph
from demo.attribution_view import requested
from demo.i18n import L, intervention_name, model_name, notice_text, t, task_label, warn
from demo.lab_html import Known, result_html, top_map_view
from demo.lab_text import intervention_section, notices_text, summary_text
from demo.links import LinkState, intervention_specs, number, state_to_query
from demo.plots import esc, md
from demo.svg import ROOM
from service.lab import ServedLab
from web.runner import MODEL_POOL, RequestGate, abandoned

log = logging.getLogger(__name__)
STATUS_EVERY_S = 0.5  # how often a slow analysis says how far it is


@dataclass(frozen=True)
class Ask:
    """What the Lab's inputs ask for, each from the component of its name (demo/tabs/lab.py's `inputs`)."""

    text: str
    model: str
    task: str
    lang: str
    method: str
    intervention: str | None  # the menu's key
    index: float | None  # the index box's, for an intervention that takes one


@dataclass(frozen=True)
class Opened:
    """What another tab opens in the Lab: sentence A on its task, a sentence B to compare it with ("": none, and
    an old comparison is cleared), and the model to show (None: the Lab's own choice)."""

    text: str
    task: str
    b: str = ""
    model: str | None = None


def run_analysis(lab: ServedLab, known: Known, ask: Ask, ui: str, top_map: int | None = None) -> Iterator[tuple]:
    """One analysis event's outputs: #analysing, then analyse's. With a slow attribution method (integrated
    gradients, SmoothGrad) #analysing says meanwhile which method runs, how many models have answered and for
    how long. An intervention the model lacks (the menu was reset meanwhile) is dropped with a warning."""
    specs = intervention_specs(lab, ask.model, ask.task)
    chosen = intervention_value(ask.intervention, ask.index, specs)
    if ask.intervention not in (None, "", "none") and ask.intervention not in specs and ask.model != ALL:
        gr.Warning(esc(t("intervention_dropped", ui, intervention=ask.intervention, model=model_name(ask.model))))
    inputs = (lab, known, ask.text, ask.model, ask.task, ask.lang, ui, ask.method, chosen, top_map)
    if not on_demand(tuple(requested(ask.method))):
        yield gr.update(), *analyse(*inputs)
        return
    gate = CountingGate()  # made here, in the request's context: it follows the request's client
    name = t(f"attr_name_{ask.method}", ui)

    def status(seconds: float) -> str:
        return t("analysing_slow", ui, method=name, answered=gate.answered, seconds=seconds)

    yield from streamed(lambda: analyse(*inputs, gate=gate), status, t("analysing", ui))


def link_query(lab: ServedLab, ask: Ask, b: str | None, top_map: str | None) -> str:
    """The query of a link to what the Lab shows (copy_js puts the page's address in front): sentence B and the
    DCNN panel's map (READ_MAP_JS) besides the inputs."""
    spec = intervention_specs(lab, ask.model, ask.task).get(ask.intervention or "none")
    state = LinkState(
        text=ask.text or "",
        b=b or "",
        model=ask.model,
        task=ask.task,
        lang=ask.lang,
        method=ask.method,
        intervention=ask.intervention if spec and ask.intervention else "none",
        index=int(ask.index) if spec and spec["index"] is not None and ask.index is not None else None,
        map=number(top_map),
    )
    return state_to_query(state)


def analyse(
    lab: ServedLab,
    known: Known,
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
    link's; None, or a map the model lacks: the one that adds most), drawn in the same run. `gate`: the
    request's (RequestGate)."""
    gate, options = gate or RequestGate(), None if top_map is None else {"top_map": top_map}
    try:
        if intervention not in (None, "", "none"):
            if model == ALL:
                warn(esc(t("intervention_needs_one", ui)), ui)
                return f"### {md(t('intervention_needs_one', ui))}", gr.update(value="", visible=False), ""
            plans = [
                lab.plan_predict(
                    Request(
                        text,
                        models=(model,),
                        task=task,
                        lang=lang,
                        methods=requested(method),
                        view_options=options,
                        intervention=chosen,
                    )
                )
                for chosen in (None, intervention)
            ]
        else:
            models = None if model == ALL else [model]
            plans = [
                lab.plan_compare(
                    Request(text, task=task, lang=lang, models=models, methods=requested(method), view_options=options)
                )
            ]
        if len(plans) == 2:  # the model as trained, then with the intervention
            result = Comparison([gate.run(plan).predictions[0] for plan in plans], [])
        else:
            result = gate.run(plans[0], MODEL_POOL)
        # drawn once per screen width while every model answers; a crowd asking at once waits for that drawing
        # (the models ran above, each request in its own client's turn: web.runner)
        keys, kept = answer_keys(plans), lab.answers
        if keys is None or kept is None:
            summary, notices, html, _ = _drawn(lab, known, result, ui, method)
        else:
            key = ("drawn", keys, ui, method, ROOM.get())
            summary, notices, html, _ = kept.kept(key, lambda: _drawn(lab, known, result, ui, method), lambda d: d[3])
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
    return summary, gr.update(value=notices, visible=bool(notices)), html


def _drawn(lab: ServedLab, known: Known, result: Comparison, ui: str, method: str) -> tuple[str, str, str, bool]:
    """The analysis drawn: the summary, the notices, the result HTML, and whether every model answered."""
    notices = notices_text(result.predictions, result.failures, ui, method)
    summary = summary_text(result.predictions, ui, lab.titles)
    if len(result.predictions) == 2 and result.predictions[1].intervention != "none":
        first = result.predictions[0]
        summary += "\n\n" + md(
            intervention_section(lab, first.task, first.model, result.predictions[1].intervention, ui)
        )
    return summary, notices, result_html(result.predictions, known, ui, method), not result.failures


def answer_keys(plans: list[Plan]) -> tuple | None:
    """The keys of the plans' answers among the kept ones (the request as checked, each checkpoint's identity and
    owner: core.answers), which an analysis drawn for the page is kept under too, with the page's language, method
    and the room its figures were drawn for (a few widths serve most screens: Gradio caps the page's width in
    steps). None when an answer is not kept (a long text, or nothing is)."""
    keys = [plan.keys[m] for plan in plans for m in plan.models]
    return None if any(k is None for k in keys) else tuple(keys)


class CountingGate(RequestGate):
    """The request's gate, counting the models that have answered: the status line of a slow analysis."""

    def __init__(self):
        super().__init__()
        self.answered = 0

    def run_job(self, job, here):
        outcome = super().run_job(job, here)
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


def sent_once(outputs: Iterator[tuple]) -> Iterator[tuple]:
    """An event's `outputs` (a generator's chunks), then one that changes nothing: Gradio sends a generator's last
    chunk again when it ends (`handle_streaming_diffs`), and the page applies it again; the Lab's result is most of
    an answer's bytes (an intervention's 133 KB), so what is sent again is this empty chunk, not the result."""
    last = None
    for last in outputs:
        yield last
    if last is not None:
        yield (gr.skip(),) * len(last)


def redraw_top_map(lab: ServedLab, known: Known, text: str, task: str, model: str, top_map: int, ui: str) -> str:
    """The panel's graph of another top-layer map (top_map_view): the one model runs again on the analysed
    text, the others not at all. Bad input (a map or text the page never offers) gets a line, not a figure."""
    try:
        p = lab.predict(text, model, task=task, methods=["occlusion"], view_options={"top_map": int(top_map)})
    except InputError as err:  # before ValueError, which it is
        return f'<p class="view-note">⚠️ {esc(notice_text(err, ui))}</p>'
    except (ValueError, TypeError):  # not a number
        return f'<p class="view-note">⚠️ {esc(t("graph_map_error", ui, map=top_map))}</p>'
    drawn = [(i, v) for i, v in enumerate(p.views) if isinstance(v, KMaxGraph) and v.top_map == int(top_map)]
    if not drawn:  # a map the model lacks (view_option_values), or a model without maps
        return f'<p class="view-note">⚠️ {esc(t("graph_map_error", ui, map=top_map))}</p>'
    return top_map_view(p, *drawn[0], known.get((p.task, p.model)), ui)


def intervention_choices(lab: ServedLab, model: str, task: str, ui: str) -> list[tuple[str, str]]:
    specs = intervention_specs(lab, model, task)
    return [(t("intervention_none", ui), "none")] + [(intervention_name(key, ui), key) for key in specs]


def intervention_value(key: str | None, index: float | None, specs: dict[str, dict]) -> str:
    """What Lab.predict takes: "none", "key" or "key:index"; the index only where the intervention has one."""
    if key in (None, "", "none") or key not in specs:
        return "none"
    return key if specs[key]["index"] is None or index is None else f"{key}:{int(index)}"


def task_choices(lab: ServedLab) -> list[tuple]:
    """The task dropdown's choices: auto, then every task of `lab` (the Train tab adds the ones it trains, named
    by their file and date)."""
    return [(L("choice_auto"), AUTO)] + [(lab.titles.get(task) or task_label(task), task) for task in lab.tasks()]


def index_box(lab: ServedLab, text: str, model: str, task: str, key: str, ui: str) -> dict:
    """The index box, for an intervention that takes one: its range on the model's checkpoint (a word or a
    level: up to the sentence's length), starting where the model points for the sentence typed (the DCNN's
    map_off: the map its panel names as adding most; Lab.intervention_start), else at its lowest."""
    spec = intervention_specs(lab, model, task).get(key)
    if not spec or spec["index"] is None:
        return gr.update(visible=False)
    net = next(c.model for (tk, m), c in lab.checkpoints.items() if m == model and task in (AUTO, tk))
    lowest, highest = net.intervention_range(key)
    try:
        start = lab.intervention_start(text, model, task, key)
    except InputError:  # no sentence yet, or one the model's task cannot take: the lowest
        start = lowest
    kind = t(f"intervention_kind_{spec['index']}", ui)
    if spec["index"] in ("word", "level"):  # the sentence bounds it (core.predict checks it)
        label, highest = t("intervention_range_words", ui, kind=kind, lowest=lowest), None
    else:
        label = t("intervention_range", ui, kind=kind, lowest=lowest, highest=highest)
    start = start if lowest <= start and (highest is None or start <= highest) else lowest
    return gr.update(visible=True, value=start, minimum=lowest, maximum=highest, label=label)
