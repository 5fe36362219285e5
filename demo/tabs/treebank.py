"""The Treebank tab: pick an SST dev/test sentence (by words, gold label, phenomenon, length, or at random),
see its gold tree with every model's prediction on every node's phrase, and open a node in the Lab tab;
below, each model against its task's test set, read from the evaluation.json that `make evaluate-all`
stored beside the weights (no test set runs while a user waits). The named endpoints /treebank and
/dataset return the same data as JSON.

Nodes: each node of the tree (the lab's own SVG, demo/treebank_plots.py) is a link that opens its phrase
in the Lab (?text=...&task=...); a node chosen in the node table (a row click) or the node menu opens in
the Lab tab with the button, as the Probes tab opens a failure.

The layout is demo/tabs/treebank_layout.py's, the wiring this module's; what each event shows is
demo/treebank_outputs.py's (pure: data in, the outputs' values out).
"""

import dataclasses
import functools
import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from core.analysis.dataset_view import read_evaluation
from core.analysis.treebank import (
    SST_TASKS,
    Hit,
    TreebankError,
    join_words,
)
from core.predict import AUTO
from demo.i18n import model_name, notice_text, request_lang, t, warn
from demo.links import LinkState, copy_js, state_to_query
from demo.plots import esc, md
from demo.svg import drawn_for, room_js
from demo.tabs.named import named
from demo.tabs.treebank_layout import Page, layout
from demo.treebank_outputs import (
    Filters,
    Trees,
    dataset_outputs,
    hit_choice,
    node_outputs,
    open_node,
    open_sentence,
    random_choice,
    search_choices,
    tree_outputs,
)
from service.lab import ServedLab
from web.endpoints import endpoint
from web.owners import Visitors
from web.runner import on_warm_up

# the tree box's width: the dataset charts' too (side by side only on a page wide enough for either)
ROOM_JS = room_js("#tb-tree", 32)


@dataclass
class TreebankView:
    """What open_in_lab wires to the Lab tab."""

    tree: gr.State
    plot: gr.HTML  # the tree, whose node a click opens (NODE_CLICK_JS)
    node: gr.Dropdown
    open_node: gr.Button
    dataset: gr.State
    sentence: gr.Dropdown
    open_sentence: gr.Button
    open_link: Callable  # (gr.State of a LinkState, gr.Tabs) -> once it is set, the sentence and node it names


def build(lab: ServedLab, tab: gr.Tab, visitors: Visitors) -> TreebankView:
    # parsed in the app's warm-up, after the models (about a second of the GIL): not at start-up, nor in the
    # first /treebank request of a busy hall, which held every other request for as long
    trees = functools.cache(Trees.load)
    on_warm_up(trees)
    page = layout(lab)
    on_warm_up(functools.partial(first_tree, lab, trees, page.trees.split.value, page.trees.task.value))
    _wire_trees(page, lab, visitors, trees)
    _wire_dataset(page, lab, visitors, trees, tab)
    _endpoints(lab, visitors, trees)
    _wire_copy(page)
    return TreebankView(
        tree=page.tree_state,
        plot=page.trees.plot,
        node=page.trees.node,
        open_node=page.trees.open_node,
        dataset=page.dataset_state,
        sentence=page.data.pick,
        open_sentence=page.data.open_sentence,
        open_link=_link_opener(page, lab, visitors, trees),
    )


def first_tree(lab: ServedLab, trees: Callable[[], Trees], split: str, task: str | None) -> None:
    """The tree and root panel every first visit shows (the search's first sentence of `split`, the tab's first
    task), kept with the lab's answers in the warm-up, before a visitor waits for the models."""
    treebank = trees().treebank
    if treebank is None or not task:
        return
    hits = treebank.search(split)
    if hits:
        tree_outputs(lab, treebank, split, hits[0].index, task, "en")


def _without_trees(treebank, ui: str) -> tuple:
    """TreesBox.without_trees: with the trees, nothing; without them, one line in the page's language saying what is
    missing and how the Space's owner adds it, and the search that cannot work switched off."""
    if treebank is not None:
        return (gr.update(),) * 4
    off = gr.update(interactive=False)
    return f"⚠️ {md(t('tb_no_data', ui))}", off, off, off


def _on_row(event: gr.SelectData):
    """A table's clicked row (svg.ROW_PICK_JS): the number its menu picks (the node table's node, the disagreements'
    sentence)."""
    return int(event.index)


def _wire_trees(page: Page, lab: ServedLab, visitors: Visitors, trees: Callable[[], Trees]) -> None:
    """The search, the random pick, the chosen sentence's tree and the chosen node's attributions: each action one
    event, the tree with its root's node panel in the same event as the sentence's choice (no chained event)."""
    box = page.trees
    keep = (gr.update(),) * len(page.tree_outputs)

    def drawn(request: gr.Request, treebank, split_value, index, task_value) -> tuple:
        """tree_outputs of the sentence `index` (none: the tree shown stays)."""
        if index is None or treebank is None or not task_value:
            return keep
        return tree_outputs(visitors.lab(lab, request), treebank, split_value, index, task_value, request_lang(request))

    def picker_event(choose: Callable) -> Callable:
        """The search's or the random pick's event: the picker's sentences (`choose`: search_choices or
        random_choice) and the chosen one's tree. Gradio passes the request, then the tree's task, the six filters
        (a Filters) and the room (last: ROOM_JS measures it)."""

        def on_pick(request: gr.Request, task_value, *values):
            *filter_values, width = values
            drawn_for(width)
            ui, wanted = request_lang(request), named(Filters, filter_values)
            treebank = trees().loaded(ui)
            picker = choose(treebank, wanted, ui)
            return *picker, *drawn(request, treebank, wanted.split, picker[0]["value"], task_value)

        return on_pick

    def on_sentence(tree_value, split_value, index, task_value, width, request: gr.Request):
        """A sentence or task chosen by hand: its tree and its root's node panel; none again for the tree shown."""
        drawn_for(width)
        shown = tree_value is not None and (tree_value.split, tree_value.index, tree_value.task) == (
            split_value,
            index,
            task_value,
        )
        return keep if shown else drawn(request, trees().treebank, split_value, index, task_value)

    picked = [box.sentence, box.hits, *page.tree_outputs]
    for trigger, choose in (
        (box.search.click, search_choices),
        (box.words.submit, search_choices),
        (box.random.click, random_choice),
    ):
        trigger(
            picker_event(choose),
            [box.task, *box.filters, page.room],
            picked,
            api_visibility="private",
            concurrency_id="model",
            js=ROOM_JS,
            show_progress_on=box.plot,
        )

    # by hand only (.select): a search, a random pick, the tab's first visit and a link set the picker and the task
    # with the tree in their own event; a menu's .input fires twice per choice (again on the menu's blur)
    for trigger in (box.sentence.select, box.task.select):
        trigger(
            on_sentence,
            [page.tree_state, box.split, box.sentence, box.task, page.room],
            page.tree_outputs,
            api_visibility="private",
            concurrency_id="model",
            js=ROOM_JS,
            show_progress_on=box.plot,
        )

    def on_node(tree_value, node_value, request: gr.Request):
        treebank = trees().treebank
        seen = visitors.lab(lab, request)
        return node_outputs(seen, treebank, tree_value, node_value, request_lang(request)) if treebank else ("", None)

    def on_row(tree_value, event: gr.SelectData, request: gr.Request):
        return _on_row(event), *on_node(tree_value, _on_row(event), request)

    # a node picked by hand or by a row draws its own panel (.input: by hand only; a new tree sets the picker).
    # Each event's progress shows on the figure or line it changes, not on every output with the tables among them
    # (docs/performance.md, "Treebank under half a second"), nor on the picker: Gradio's page copies every component
    # an event's progress went to, the picker's 500 sentences too, at every status of every event after ("Treebank's
    # last three actions")
    box.node.input(
        on_node,
        [page.tree_state, box.node],
        [box.node_summary, box.node_attr],
        api_visibility="private",
        concurrency_id="model",
        show_progress_on=box.node_summary,
    )
    box.nodes.select(
        on_row,
        [page.tree_state],
        [box.node, box.node_summary, box.node_attr],
        api_visibility="private",
        concurrency_id="model",
        show_progress_on=box.node_summary,
    )


def _wire_dataset(page: Page, lab: ServedLab, visitors: Visitors, trees: Callable[[], Trees], tab: gr.Tab) -> None:
    """The dataset view follows its task and model; the tab's first visit fills the picker and the dataset."""
    data = page.data

    def on_dataset(task_value, model_value, width, request: gr.Request):
        drawn_for(width)
        return dataset_outputs(visitors.lab(lab, request), task_value, model_value, request_lang(request))

    def on_data_task(task_value, width, request: gr.Request):
        """Another task: its models to choose from, its first chosen, and that model's dataset view, in one event
        (the model menu's own event is the visitor's choice only: `input`)."""
        drawn_for(width)
        seen = visitors.lab(lab, request)
        models = seen.models(task_value)
        model = models[0] if models else ""  # none: the dataset view says the task has no models
        menu = gr.update(choices=[(model_name(m), m) for m in models], value=model or None)
        return menu, *dataset_outputs(seen, task_value, model, request_lang(request))

    def on_open_tab(request: gr.Request, tree_value, dataset_value, task_value, model_value, tree_task, *values):
        """First visit: the picker with its first sentence's tree (kept since the warm-up: first_tree) and the
        dataset view, in one event; later visits keep them. `values`: the filters' (TreesBox.filters), then the room
        (last: ROOM_JS measures it)."""
        *filter_values, width = values
        wanted = named(Filters, filter_values)
        ui = request_lang(request)
        drawn_for(width)
        treebank = trees().treebank
        keep = (gr.update(),)
        picker, drawn = keep * 2, keep * len(page.tree_outputs)
        if tree_value is None and treebank is not None:
            picker = search_choices(treebank, wanted, ui)
            if picker[0]["value"] is not None and tree_task:
                seen = visitors.lab(lab, request)
                drawn = tree_outputs(seen, treebank, wanted.split, picker[0]["value"], tree_task, ui)
        shown = (
            dataset_outputs(visitors.lab(lab, request), task_value, model_value, ui)
            if dataset_value is None and task_value
            else keep * 8
        )
        return *_without_trees(treebank, ui), *picker, *drawn, *shown

    data.disagree.select(_on_row, None, [data.pick], api_visibility="private")
    # progress on the summary line only, as on the tree's events (_wire_trees)
    dataset_event: dict[str, Any] = dict(api_visibility="private", js=ROOM_JS, show_progress_on=data.summary)
    data.task.change(on_data_task, [data.task, page.room], [data.model, *page.dataset_outputs], **dataset_event)
    data.model.input(on_dataset, [data.task, data.model, page.room], page.dataset_outputs, **dataset_event)
    box = page.trees
    tab.select(
        on_open_tab,
        [page.tree_state, page.dataset_state, data.task, data.model, box.task, *box.filters, page.room],
        [*box.without_trees, box.sentence, box.hits, *page.tree_outputs, *page.dataset_outputs],
        api_visibility="private",
        concurrency_id="model",
        js=ROOM_JS,
        show_progress_on=[box.plot, data.summary],
    )


def _endpoints(lab: ServedLab, visitors: Visitors, trees: Callable[[], Trees]) -> None:
    """/treebank and /dataset: the tab's data as JSON."""

    def treebank_api(
        index: int = 0, split: str = "test", task: str = "sst5", request: gr.Request | None = None
    ) -> dict:
        """The gold tree of one SST sentence with every model's prediction on every node's phrase.

        Args:
            index: the sentence's number in its split, from 0
            split: the SST split: dev or test
            task: the task whose models predict every node (sst5 or sst2)
        """
        treebank, problem = trees().treebank, trees().problem
        if treebank is None:
            raise gr.Error(html.escape(str(problem), quote=False), print_exception=False)
        try:
            return visitors.lab(lab, request).tree_view(treebank, split, index, task).to_dict()
        except TreebankError as err:
            raise gr.Error(html.escape(str(err), quote=False), print_exception=False) from None

    def dataset_api(task: str = "sst5", model: str = "tensor_cnn", request: gr.Request | None = None) -> dict:
        """One model's test-set numbers (status 'missing'/'stale'/'invalid' says which command rebuilds them).

        Args:
            task: the task of the model's checkpoint (sst5, sst2, zh_sentiment, ...)
            model: the model: tensor_cnn, mrnn, dcnn, adasent or agt
        """
        try:
            return read_evaluation(visitors.lab(lab, request).checkpoints, task, model).to_dict()
        except TreebankError as err:
            raise gr.Error(html.escape(str(err), quote=False), print_exception=False) from None

    endpoint(treebank_api, api_name="treebank", concurrency_id="model")
    endpoint(dataset_api, api_name="dataset")


def _wire_copy(page: Page) -> None:
    box = page.trees

    def on_copy(split_value, task_value, index, node_value):
        """The link of the sentence and node shown (copy_js puts the page's address in front)."""
        state = LinkState("treebank", task=task_value or AUTO, split=split_value, sentence=index, node=node_value)
        return state_to_query(state)

    copied = box.copy.click(
        on_copy,
        [box.split, box.task, box.sentence, box.node],
        [box.link],
        api_visibility="private",
        show_progress="hidden",
    )
    copied.then(None, [box.link], [box.link], js=copy_js("tb-permalink"))


def _link_opener(page: Page, lab: ServedLab, visitors: Visitors, trees: Callable[[], Trees]) -> Callable:
    """TreebankView.open_link: a link's split, task, sentence and node, then the tab."""
    box, data = page.trees, page.data

    def on_link(
        request: gr.Request,
        link_state: LinkState,
        dataset_value,
        task_value,
        data_task_value,
        data_model,
        *values,
    ):
        """A link to this tab: its split, task and sentence with the node chosen (a sentence past the split's end
        gets a warning and the search's first), the dataset view as on a first visit, then the tab. `values`: the
        filters' (TreesBox.filters), then the room (last: ROOM_JS measures it)."""
        *filter_values, width = values
        wanted = named(Filters, filter_values)
        keep = (gr.update(),)
        ui, seen = request_lang(request), visitors.lab(lab, request)
        drawn_for(width)
        split_value = link_state.split or wanted.split
        task_value = link_state.task if link_state.task in SST_TASKS else task_value
        treebank = trees().treebank
        picker, drawn = None, keep * len(page.tree_outputs)
        if treebank is not None and link_state.sentence is not None and task_value:
            try:
                tree = treebank.tree(split_value, link_state.sentence)
                hit = Hit(link_state.sentence, join_words(tree.words), tree.label, len(tree.words))
                picker = gr.update(choices=[hit_choice(hit)], value=hit.index), ""
                drawn = tree_outputs(seen, treebank, split_value, hit.index, task_value, ui, link_state.node)
            except TreebankError as err:
                warn(esc(notice_text(err, ui)), ui)
        if picker is None:  # no sentence named, or none such: the search's first, as on a first visit
            picker = (
                search_choices(treebank, dataclasses.replace(wanted, split=split_value), ui) if treebank else keep * 2
            )
        shown = (
            dataset_outputs(seen, data_task_value, data_model, ui)
            if dataset_value is None and data_task_value
            else keep * 8
        )
        missing = _without_trees(treebank, ui)
        return *missing, split_value, task_value, *picker, *drawn, *shown, gr.Tabs(selected="treebank")

    def open_link(link_state: gr.State, tabs: gr.Tabs) -> None:
        link_state.change(
            on_link,
            [link_state, page.dataset_state, box.task, data.task, data.model, *box.filters, page.room],
            [*box.without_trees, box.split, box.task, box.sentence, box.hits, *page.tree_outputs, *page.dataset_outputs]
            + [tabs],
            api_visibility="private",
            concurrency_id="model",
            js=ROOM_JS,
            show_progress_on=[box.plot, data.summary],  # not the tabs (the whole page): _wire_trees
        )

    return open_link


def open_in_lab(view: TreebankView, lab_view, tabs: gr.Tabs) -> None:
    """The two Open buttons and a click on a node of the tree: a node's phrase or a test sentence goes into the Lab
    tab's sentence box (with the task it came from), the Lab tab shows, and its analysis runs, in one event."""
    lab_view.open_with(view.open_node.click, open_node, [view.tree, view.node], tabs)
    lab_view.open_with(view.open_sentence.click, open_sentence, [view.dataset, view.sentence], tabs)
    lab_view.open_with(view.plot.select, open_node, [view.tree], tabs, selected=True)  # the node's number
