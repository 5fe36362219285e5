"""The Lab tab: type a sentence, see each model's prediction, curve, attribution and own views; a
minimal pair (demo/tabs/pairs.py) compares it with a second sentence.

One click is one update: the summary, the notices and one HTML result (the figures as SVG, drawn on the
server by demo/charts.py and demo/plots.py, and a panel per model). From the click until it arrives, the page
says it is analysing and hides the previous result, so a stale panel is never shown as the answer. A link
(demo/links.py: sentence, model, task, method, intervention, DCNN map, sentence B) fills the inputs in the page's
load event and is analysed in it (its map drawn in that run, its pair compared), a slow method's in one event after
it. An intervention's choice sets its index box and analyses in one event. The DCNN
panel's map choice redraws only its one-map feature graph (`draw_top_map`, a server function of the result: only
that model runs again; its markup and script are demo/lab_html.py's).

The page's scripts, then the layout, then the wiring; what the events do is demo/lab_analysis.py's (the words
demo/lab_text.py's, the result's HTML demo/lab_html.py's).
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr

from core.analysis.attribution import on_demand
from core.predict import ALL, AUTO
from core.text import MAX_CHARS
from demo.attribution_export import build as build_export
from demo.attribution_view import build as build_method_selector
from demo.attribution_view import faithfulness_hint, requested
from demo.examples import EXAMPLES
from demo.i18n import L, example_labels, model_name, request_lang
from demo.lab_analysis import (
    Ask,
    Opened,
    index_box,
    intervention_choices,
    link_query,
    redraw_top_map,
    run_analysis,
    sent_once,
    task_choices,
)
from demo.lab_html import READ_MAP_JS, TOP_MAP_JS, Known
from demo.links import LinkState, copy_js, intervention_specs, query_to_state
from demo.svg import EXPORT_JS, ROOM, drawn_for, drawn_within, room_js
from demo.tabs import pairs
from demo.tabs.checkpoints import facts
from demo.tabs.named import components, named
from service.lab import ServedLab
from service.owners import PUBLIC
from web.owners import Visitors
from web.page_load import on_page_load

# the page hides the last result from the click until the new one is in (#analysing says so; ui.CSS); the
# figures are drawn for the width a figure in a model panel gets (its box's padding and borders: 60 px at 390);
# on a phone, where the result starts screens below the button, the page moves to the #analysing line, and
# to the summary once the result is in (DONE_JS: the page was too short to go further before)
RESULT_INSET = 60
# the page's load measures the room too; a link's sentence is the one asked for before the box shows it (else the
# box's change would mark the link's own result stale, hidden until LOADED_JS: a flash of "press Analyse")
LOAD_JS = room_js(
    "#result",
    RESULT_INSET,
    f"""const text = new URLSearchParams(location.search).get('text');
  if (text !== null) document.body.dataset.asked = text.slice(0, {MAX_CHARS});""",
)
BUSY_JS = room_js(
    "#result",
    RESULT_INSET,
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
STALE_JS = "() => {" + STALE + "}"


def settled_js(*, from_box: bool, scroll_if: str, own_event: bool = True) -> str:
    """The page's script once an analysis is in: where it came in an event of its own (`own_event`: not the page's
    load, whose script can run while a click's analysis is under way) the busy look off; the sentence analysed
    kept (read from the sentence box where `from_box`: the event that filled it analysed it, with no BUSY_JS to
    keep it before); the page moved to the summary where `scroll_if` holds (JS over `follow`, BUSY_JS's word that
    the click's result starts below the screen, and `top`, the summary's), at once and at the next frame (a tab
    the same event showed is laid out only then); the result marked stale if the box now says otherwise."""
    box = "document.querySelector('#sentence textarea')?.value ?? ''"
    # written only when it differs: a page's load then ends with no change to it at all
    keep = "if (document.body.dataset.asked !== analysed) document.body.dataset.asked = analysed;"
    asked = f"const analysed = {box};\n  {keep}" if from_box else ""
    ended = "delete document.body.dataset.follow;\n  document.body.classList.remove('lab-busy');" if own_event else ""
    return f"""() => {{
  const follow = document.body.dataset.follow;
  {ended}
  {asked}
  const settle = () => {{
    const summary = document.querySelector('#summary');
    const top = summary?.getBoundingClientRect().top ?? 0;
    if (summary && ({scroll_if})) summary.scrollIntoView({{block: 'start'}});
  }};
  settle();
  requestAnimationFrame(settle);{STALE}}}"""


FOLLOWED = "follow"  # a click's: BUSY_JS moved the page to #analysing, so on to the summary
# another tab's open (that tab may have been scrolled anywhere) or a link's load: a summary out of sight
OUT_OF_SIGHT = "summary.textContent.trim() && (top < 0 || top > 0.6 * innerHeight)"
DONE_JS = settled_js(from_box=False, scroll_if=FOLLOWED)  # an Analyse click, an example's
LINK_DONE_JS = settled_js(from_box=True, scroll_if=FOLLOWED)  # a slow method's link (BUSY_JS ran before the load)
OPENED_JS = settled_js(from_box=True, scroll_if=OUT_OF_SIGHT)  # another tab's open, analysed in its event
LOADED_JS = settled_js(from_box=True, scroll_if=OUT_OF_SIGHT, own_event=False)  # a link, in the page's load event


@dataclass
class LabView:
    """What another tab fills to open a sentence or a pair here (the Probes tab opens its failures)."""

    text: gr.Textbox
    task: gr.Dropdown
    pair: pairs.PairView
    open_with: Callable  # (trigger, opener, its inputs, gr.Tabs): what the opener names opened and analysed here
    model: gr.Dropdown  # a probe failure opens with the model that failed
    room: gr.Number  # the page's load event measures it (LOAD_JS): a link's figures are drawn in that event
    loaded_js: str  # the page's script once its load event (a link's analysis among it) has been applied


# every analysis event: private, in the model lanes, the page marked busy until its answer
RUN_EVENT: dict[str, Any] = dict(api_visibility="private", concurrency_id="model", js=BUSY_JS, show_progress="hidden")


@dataclass
class Page:
    """The Lab tab's components (_layout), which the wiring connects (_wire_menus, _wire, _link_opener)."""

    text: gr.Textbox
    run: gr.Button
    copy: gr.Button
    model: gr.Dropdown
    task: gr.Dropdown
    lang: gr.Radio
    intervention_row: gr.Row
    intervention: gr.Dropdown
    index: gr.Number
    method: gr.Radio
    hint: gr.Markdown  # which method is most faithful for the chosen model and task
    link: gr.Markdown
    shown_map: gr.Textbox  # the DCNN panel's map when Copy link is clicked (READ_MAP_JS)
    room: gr.Number  # the width the figures get (BUSY_JS measures it)
    examples: gr.Dataset  # the examples' buttons: their labels follow the page's language
    pair: pairs.PairView
    analysing: gr.Markdown
    summary: gr.Markdown
    notices: gr.Markdown
    result: gr.HTML

    @property
    def inputs(self) -> list:
        """The Lab's inputs: an Ask's fields (demo/tabs/named.py)."""
        return components(Ask, self)

    @property
    def run_inputs(self) -> list:
        """The Lab's inputs, then the room the figures get (last: BUSY_JS measures it, demo.svg.room_js)."""
        return [*self.inputs, self.room]

    @property
    def run_outputs(self) -> list:
        """An analysis event says how far it is in #analysing (on_run), then fills the rest."""
        return [self.analysing, self.summary, self.notices, self.result]


def build(lab: ServedLab, visitors: Visitors) -> LabView:
    known = facts(lab)
    page = _layout(lab, known, visitors)
    _wire_menus(page, lab, visitors)
    open_with = _wire(page, lab, known, visitors)
    _link_opener(page, lab, known, visitors)
    return LabView(
        text=page.text,
        task=page.task,
        pair=page.pair,
        open_with=open_with,
        model=page.model,
        room=page.room,
        loaded_js=LOADED_JS,
    )


def _choices(public: ServedLab) -> tuple:
    """The sentence with its buttons, and beside it (or under it) the model, task, language and intervention."""
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
                    min_width=300,  # "SST fine-grained (5 classes)" whole beside its arrow; the language may go under
                )
                lang = gr.Radio(
                    [(L("choice_auto"), AUTO), (L("english"), "en"), (L("chinese"), "zh")],
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
                index = gr.Number(
                    1, precision=0, label=L("intervention_index"), visible=False, elem_id="intervention-index", scale=1
                )
    return text, run, copy, model, task, lang, intervention_row, intervention, index


def _layout(lab: ServedLab, known: Known, visitors: Visitors) -> Page:
    """The tab's components, top to bottom: the choices, the method, the link, the examples, the pair, the
    result and the file export."""
    public = lab.visible_to(PUBLIC)  # the page everybody is sent; a page load adds the visitor's own tasks
    text, run, copy, model, task, lang, intervention_row, intervention, index = _choices(public)
    method, hint = build_method_selector()
    link = gr.Markdown(elem_id="permalink")
    shown_map = gr.Textbox(visible=False)
    room = gr.Number(visible=False, elem_id="lab-room")  # the figures' room, measured by the page (room_js)
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
    return Page(
        text=text,
        run=run,
        copy=copy,
        model=model,
        task=task,
        lang=lang,
        intervention_row=intervention_row,
        intervention=intervention,
        index=index,
        method=method,
        hint=hint,
        link=link,
        shown_map=shown_map,
        room=room,
        examples=examples.dataset,
        pair=pair,
        analysing=analysing,
        summary=summary,
        notices=notices,
        result=result,
    )


def _wire_menus(page: Page, lab: ServedLab, visitors: Visitors) -> None:
    """The intervention menu follows the model (the index box follows the intervention in its analysis: _wire)."""

    def on_model(model_value, task_value, request: gr.Request):
        """One model: its interventions to choose from (none chosen); all five: no menu; the method hint for the
        model and task. On the visitor's own choice only (`select`: Gradio 6.31's dropdown sends `input` twice per
        choice, on the choice and on its blur): a link sets the model, its intervention and the hint together in
        the page's load (on_fill), another tab opening the Lab the hint after it (analyse_after)."""
        seen, ui = visitors.lab(lab, request), request_lang(request)
        choices = intervention_choices(seen, model_value, task_value, ui)
        hint = faithfulness_hint(seen, model_value, task_value, ui)
        return (
            gr.update(visible=len(choices) > 1),
            gr.update(choices=choices, value="none"),
            gr.update(visible=False),
            hint,
        )

    for trigger in (page.model.select, page.task.select):
        trigger(
            on_model,
            [page.model, page.task],
            [page.intervention_row, page.intervention, page.index, page.hint],
            api_visibility="private",
            show_progress="hidden",
            show_progress_on=page.hint,  # not the row: Gradio's page would copy it at every later event's status
        )


def _wire(page: Page, lab: ServedLab, known: Known, visitors: Visitors) -> Callable:
    """Analyse and Copy link; the function that opens another tab's sentence here (LabView.open_with)."""

    # Gradio passes the request, then each input, as positional parameters: the Lab's inputs become one Ask
    def on_run(request: gr.Request, *values):
        """`run_inputs`: the Lab's inputs, then the room its figures get."""
        *asked, width = values
        drawn_for(width)
        yield from sent_once(run_analysis(visitors.lab(lab, request), known, named(Ask, asked), request_lang(request)))

    # another method or index runs on demand; the visitor's own choice only (`input`): a link sets the method
    # with the rest and runs once (on_fill)
    for trigger in (page.run.click, page.text.submit, page.method.input, page.index.submit):
        trigger(on_run, page.run_inputs, page.run_outputs, **RUN_EVENT).then(None, js=DONE_JS)

    def on_intervention(request: gr.Request, *values):
        """`run_inputs`, on an intervention chosen: its index box (shown where it takes one, at the index the model
        points to), then the analysis with it, in one event (the page sends a trigger's events one after another:
        a box event of its own held the analysis back by its whole round trip)."""
        *asked, width = values
        ask, seen, ui = named(Ask, asked), visitors.lab(lab, request), request_lang(request)
        box = index_box(seen, ask.text, ask.model, ask.task, ask.intervention or "none", ui)
        drawn_for(width)
        ask = replace(ask, index=box.get("value", ask.index))
        for i, outputs in enumerate(sent_once(run_analysis(seen, known, ask, ui))):
            yield box if i == 0 else gr.skip(), *outputs

    # the visitor's own choice only, once (`select`, not `input`: see on_model)
    chosen = page.intervention.select(on_intervention, page.run_inputs, [page.index, *page.run_outputs], **RUN_EVENT)
    chosen.then(None, js=DONE_JS)

    def on_copy(request: gr.Request, top_map, b, *asked):
        """`copy_inputs`: the DCNN panel's map (READ_MAP_JS), sentence B, then the Lab's inputs."""
        return link_query(visitors.lab(lab, request), named(Ask, asked), b, top_map)

    page.text.change(None, None, None, js=STALE_JS)
    copy_inputs = [page.shown_map, page.pair.text_b, *page.inputs]
    copied = page.copy.click(
        on_copy, copy_inputs, [page.link], js=READ_MAP_JS, api_visibility="private", show_progress="hidden"
    )
    copied.then(None, [page.link], [page.link], js=copy_js("permalink"))

    def open_with(
        trigger: Callable, opener: Callable[..., Opened], inputs: list, tabs: gr.Tabs, *, selected: bool = False
    ) -> None:
        """`trigger`'s event: `opener`(its `inputs`' values, the row or node `selected` where the trigger is a
        select, the page's language) names what another tab opens here, and the one event shows the Lab tab with
        it, its method hint and its analysis, then its pair's comparison (or clears the last one). A chain of
        events (open, then analyse, then compare) cost each link of it a round trip (docs/performance.md, "A tree
        node's click")."""
        head = [tabs, page.text, page.model, page.task, page.pair.text_b, page.pair.box, page.hint]
        keep_head, keep_pair = (gr.skip(),) * len(head), (gr.skip(),) * len(page.pair.outputs)

        def opened_outputs(request: gr.Request, values: tuple, picked: tuple) -> Iterator[tuple]:
            """`values`: `inputs`', then `run_inputs`' (the Lab's, the room last)."""
            seen, ui = visitors.lab(lab, request), request_lang(request)
            opened = opener(*values[: len(inputs)], *picked, ui)
            *asked, width = values[len(inputs) :]
            ask = named(Ask, asked)
            ask = replace(ask, text=opened.text, task=opened.task, model=opened.model or ask.model)
            hint = faithfulness_hint(seen, ask.model, ask.task, ui)
            pair_box = gr.Accordion(open=bool(opened.b))
            shown = (gr.Tabs(selected="lab"), ask.text, ask.model, ask.task, opened.b, pair_box)
            cleared = keep_pair if opened.b else pairs.uncompared()
            drawn_for(width)
            for i, outputs in enumerate(sent_once(run_analysis(seen, known, ask, ui))):
                yield *((*shown, hint) if i == 0 else keep_head), *outputs, *(cleared if i == 0 else keep_pair)
            if opened.b:
                with drawn_within(width + RESULT_INSET if width else None):
                    compared = pairs.analyse_pair(seen, known, ask.text, opened.b, ask.model, ask.task, ask.lang, ui)
                yield *keep_head, *(gr.skip(),) * len(page.run_outputs), *compared

        # Gradio passes the request (and a select's event) first, then each input
        def on_open(request: gr.Request, *values):
            yield from opened_outputs(request, values, ())

        def on_select(request: gr.Request, event: gr.SelectData, *values):
            yield from opened_outputs(request, values, (event.index,))

        outputs = [*head, *page.run_outputs, *page.pair.outputs]
        run_inputs = [*inputs, *page.run_inputs]
        event = dict(RUN_EVENT, show_progress_on=page.analysing)
        trigger(on_select if selected else on_open, run_inputs, outputs, **event).then(None, js=OPENED_JS)

    return open_with


def _link_opener(page: Page, lab: ServedLab, known: Known, visitors: Visitors) -> None:
    """A link's inputs filled by the page's load event, and analysed in it (its pair compared) where its method
    answers at once: a second event after the load cost a link its round trip and waited for the page to apply
    everything the load sent. A slow method's analysis streams its status in an event of its own after the load
    (on_link). The examples' labels in the page's language."""

    link = gr.State(None)  # the LinkState of a link whose method streams: its change starts on_link

    def on_labels(request: gr.Request):
        return gr.update(sample_labels=example_labels(request_lang(request)))  # no component built per page load

    def on_fill(request: gr.Request) -> tuple:
        """In the page's load event, the inputs a link with a sentence names, checked against the visitor's models
        (demo/links.py), with its sentence B and the pair open, and their analysis (the figures drawn for the room
        the load measured: LOAD_JS), and the method hint for the model and task it names (the page's defaults
        without a link)."""
        seen, ui = visitors.lab(lab, request), request_lang(request)
        state = query_to_state(dict(request.query_params or {}), seen)
        if not state.fills("lab"):
            return faithfulness_hint(seen, page.model.value, page.task.value, ui), *(gr.skip(),) * (len(loaded) - 1)
        fill = (
            faithfulness_hint(seen, state.model, state.task, ui),
            state.text,
            state.model,
            state.task,
            state.lang,
            state.method,
            gr.update(visible=bool(intervention_specs(seen, state.model, state.task))),
            gr.update(choices=intervention_choices(seen, state.model, state.task, ui), value=state.intervention),
            gr.update(visible=state.index is not None, value=state.index),
            state.b,
            gr.update(open=bool(state.b)),
        )
        if on_demand(tuple(requested(state.method))):
            return *fill, state, *(gr.skip(),) * len(shown)
        (analysed,) = run_analysis(seen, known, link_ask(state), ui, state.map)
        compared = link_pair(seen, ui, state, ROOM.get()) if state.b else (gr.skip(),) * len(page.pair.outputs)
        return *fill, gr.skip(), *analysed, *compared

    def on_link(request: gr.Request, state: LinkState, width):
        """A slow method's link: its analysis on its DCNN map with its status lines, then its pair's comparison
        (sentence B), in one event after the load's."""
        drawn_for(width)
        yield from sent_once(link_outputs(visitors.lab(lab, request), request_lang(request), state, width))

    def link_outputs(seen: ServedLab, ui: str, state: LinkState, width) -> Iterator[tuple]:
        untouched = (gr.skip(),) * len(page.pair.outputs)
        for outputs in run_analysis(seen, known, link_ask(state), ui, state.map):
            yield *outputs, *untouched
        if state.b:
            yield *(gr.skip(),) * len(page.run_outputs), *link_pair(seen, ui, state, width)

    def link_pair(seen: ServedLab, ui: str, state: LinkState, width) -> tuple:
        """The link's pair compared; its figures get the room of the column both boxes are in."""
        with drawn_within(width + RESULT_INSET if width else None):
            return pairs.analyse_pair(seen, known, state.text, state.b, state.model, state.task, state.lang, ui)

    menu = [page.intervention_row, page.intervention, page.index]
    filled = [page.text, page.model, page.task, page.lang, page.method, *menu, page.pair.text_b, page.pair.box]
    shown = [*page.run_outputs, *page.pair.outputs]
    loaded = [page.hint, *filled, link, *shown]
    on_page_load(on_labels, [page.examples])  # the examples' labels in the page's language
    on_page_load(on_fill, loaded)
    analysed = link.change(on_link, [link, page.room], shown, **RUN_EVENT)
    analysed.then(None, js=LINK_DONE_JS)


def link_ask(state: LinkState) -> Ask:
    """What a link asks the Lab for."""
    return Ask(
        text=state.text,
        model=state.model,
        task=state.task,
        lang=state.lang,
        method=state.method,
        intervention=state.intervention,
        index=state.index,
    )
