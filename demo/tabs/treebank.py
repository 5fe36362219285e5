"""The Treebank tab: pick an SST dev/test sentence (by words, gold label, phenomenon, length, or at random),
see its gold tree with every model's prediction on every node's phrase, and open a node in the Lab tab;
below, each model against its task's test set, read from the evaluation.json that `make evaluate-all`
stored beside the weights (no test set runs while a user waits). The named endpoints /treebank and
/dataset return the same data as JSON.

Nodes: each node of the tree (the lab's own SVG, demo/treebank_plots.py) is a link that opens its phrase
in the Lab (?text=...&task=...); a node chosen in the node table (a row click) or the node menu opens in
the Lab tab with the button, as the Probes tab opens a failure.

The layout, then the wiring; what each event shows is demo/treebank_outputs.py's (pure: data in, the outputs'
values out).
"""

import dataclasses
import functools
import html
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr

from core.analysis.dataset_view import read_evaluation
from core.analysis.treebank import (
    PHENOMENA,
    SPLITS,
    SST_TASKS,
    Hit,
    TreebankError,
    join_words,
)
from core.data import TASKS
from core.data.sst import FINE_LABELS
from core.predict import AUTO
from demo.endpoints import endpoint
from demo.i18n import L, model_name, notice_text, request_lang, t, task_label, warn
from demo.links import COPY_JS, LinkState, state_to_query
from demo.owners import Visitors
from demo.plots import esc, md
from demo.svg import EXPORT_JS, drawn_for, room_js
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

# the tree box's width: the dataset charts' too (side by side only on a page wide enough for either)
ROOM_JS = room_js("#tb-tree", 32)


@dataclass
class TreebankView:
    """What open_in_lab wires to the Lab tab."""

    tree: gr.State
    node: gr.Dropdown
    open_node: gr.Button
    dataset: gr.State
    sentence: gr.Dropdown
    open_sentence: gr.Button
    open_link: Callable  # (gr.State of a LinkState, gr.Tabs) -> once it is set, the sentence and node it names


def build(lab: ServedLab, tab: gr.Tab, visitors: Visitors) -> TreebankView:
    trees = functools.cache(Trees.load)  # parsed on the tab's first use (about a second), not at start-up
    sst_tasks = [task for task in lab.tasks() if task in SST_TASKS]
    data_tasks = [task for task in lab.tasks() if task in TASKS]  # what make evaluate-all evaluates (no user's task)
    gr.Markdown(L("treebank_md"))
    with gr.Accordion(L("tb_trees"), open=True):
        problem_md = gr.Markdown(elem_id="tb-problem")
        with gr.Row():
            split = gr.Radio(
                [(L(f"tb_split_{s}"), s) for s in SPLITS], value="test", label=L("tb_split"), elem_id="tb-split"
            )
            tree_task = gr.Dropdown(
                [(task_label(task), task) for task in sst_tasks],
                value=sst_tasks[0] if sst_tasks else None,
                label=L("task"),
                elem_id="tb-task",
            )
            words = gr.Textbox(label=L("tb_words"), info=L("tb_words_info"), elem_id="tb-words")
            label = gr.Dropdown(
                [(L("tb_any"), "")] + [(L(f"tb_label_{i}"), l) for i, l in enumerate(FINE_LABELS)],
                value="",
                label=L("tb_label"),
                elem_id="tb-label",
            )
            phenomenon = gr.Dropdown(
                [(L("tb_any"), "")] + [(L(f"tb_{p}"), p) for p in PHENOMENA],
                value="",
                label=L("tb_phenomenon"),
                elem_id="tb-phenomenon",
            )
            min_words = gr.Number(0, label=L("tb_min"), precision=0, minimum=0, elem_id="tb-min")
            max_words = gr.Number(0, label=L("tb_max"), precision=0, minimum=0, elem_id="tb-max")
        with gr.Row():
            search = gr.Button(L("tb_search"), variant="primary", elem_id="tb-search")
            random_button = gr.Button(L("tb_random"), elem_id="tb-random")
        hits = gr.Markdown(elem_id="tb-hits")
        sentence = gr.Dropdown([], label=L("tb_sentence"), elem_id="tb-sentence")
        tree_summary = gr.Markdown(elem_id="tb-tree-summary")
        tree_plot = gr.HTML(elem_id="tb-tree", elem_classes="figures", js_on_load=EXPORT_JS)
        nodes = gr.Dataframe(label=L("tb_nodes"), interactive=False, wrap=True, max_height=420, elem_id="tb-nodes")
        with gr.Row():
            node = gr.Dropdown([], label=L("tb_node"), info=L("tb_node_info"), scale=4, elem_id="tb-node")
            open_node_button = gr.Button(L("tb_open_node"), scale=1, elem_id="tb-open-node")
            copy = gr.Button(L("copy_link"), scale=1, elem_id="tb-copy-link")
        link = gr.Markdown(elem_id="tb-permalink")
        node_summary = gr.Markdown(elem_id="tb-node-attr-summary")
        node_attr = gr.Dataframe(label=L("tb_node_attr"), interactive=False, wrap=True, elem_id="tb-node-attr")
    with gr.Accordion(L("tb_dataset"), open=True):
        with gr.Row():
            data_task = gr.Dropdown(
                [(task_label(task), task) for task in data_tasks],
                value=data_tasks[0] if data_tasks else None,
                label=L("task"),
                elem_id="tb-data-task",
            )
            data_model = gr.Dropdown(
                [(model_name(m), m) for m in lab.models(data_tasks[0])] if data_tasks else [],
                value=lab.models(data_tasks[0])[0] if data_tasks else None,
                label=L("model"),
                elem_id="tb-data-model",
            )
        data_summary = gr.Markdown(elem_id="tb-data-summary")
        with gr.Row(equal_height=False):  # side by side where both fit, else one under the other
            length_plot = gr.HTML(elem_id="tb-length", elem_classes="figures", js_on_load=EXPORT_JS, min_width=320)
            confusion_plot = gr.HTML(
                elem_id="tb-confusion", elem_classes="figures", js_on_load=EXPORT_JS, min_width=320
            )
        with gr.Row(equal_height=False):
            per_class = gr.Dataframe(label=L("tb_per_class"), interactive=False, min_width=320, elem_id="tb-per-class")
            slices = gr.Dataframe(label=L("tb_slices"), interactive=False, min_width=320, elem_id="tb-slices")
        disagree = gr.Dataframe(label=L("tb_disagree"), interactive=False, wrap=True, elem_id="tb-disagree")
        with gr.Row():
            pick = gr.Dropdown([], label=L("tb_disagree_pick"), scale=4, elem_id="tb-disagree-pick")
            open_sentence_button = gr.Button(L("tb_open_sentence"), scale=1, elem_id="tb-open-sentence")
    tree_state, dataset_state = gr.State(None), gr.State(None)
    room = gr.Number(visible=False)  # the width the tree gets (ROOM_JS measures it)
    tree_outputs_list = [tree_summary, tree_plot, nodes, node, tree_state]
    dataset_outputs_list = [data_summary, length_plot, confusion_plot, per_class, slices, disagree, pick, dataset_state]

    # Gradio passes the request, then each input, as positional parameters: the six filters become one Filters

    def on_search(request: gr.Request, *filter_values):
        ui = request_lang(request)
        return search_choices(trees().loaded(ui), Filters(*filter_values), ui)

    def on_random(request: gr.Request, *filter_values):
        ui = request_lang(request)
        return random_choice(trees().loaded(ui), Filters(*filter_values), ui)

    def on_sentence(tree_value, split_value, index, task_value, width, request: gr.Request):
        """The chosen sentence's tree; none again for the tree shown (a link drew it with its node chosen)."""
        drawn_for(width)
        treebank = trees().treebank
        shown = tree_value is not None and (tree_value.split, tree_value.index, tree_value.task) == (
            split_value,
            index,
            task_value,
        )
        if index is None or treebank is None or not task_value or shown:
            return gr.update(), gr.update(), gr.update(), gr.update(), gr.update()
        return tree_outputs(visitors.lab(lab, request), treebank, split_value, index, task_value, request_lang(request))

    def on_dataset(task_value, model_value, width, request: gr.Request):
        drawn_for(width)
        return dataset_outputs(visitors.lab(lab, request), task_value, model_value, request_lang(request))

    def on_data_task(task_value, request: gr.Request):
        models = visitors.lab(lab, request).models(task_value)
        return gr.update(choices=[(model_name(m), m) for m in models], value=models[0] if models else None)

    def on_open_tab(request: gr.Request, tree_value, dataset_value, *values):
        """First visit: the picker (its first sentence's tree follows) and the dataset view; later visits keep them.
        `values`: the filters', the dataset's task and model, and the room."""
        *filter_values, task_value, model_value, width = values
        wanted = Filters(*filter_values)
        ui = request_lang(request)
        drawn_for(width)
        treebank, problem = trees().treebank, trees().problem
        keep = (gr.update(),)
        warning = f"⚠️ {md(t('tb_no_trees', ui, error=notice_text(problem, ui)))}" if problem else ""
        picker = search_choices(treebank, wanted, ui) if tree_value is None and treebank is not None else keep * 2
        data = (
            dataset_outputs(visitors.lab(lab, request), task_value, model_value, ui)
            if dataset_value is None and task_value
            else keep * 8
        )
        return warning, *picker, *data

    filters = [split, words, label, phenomenon, min_words, max_words]
    search.click(on_search, filters, [sentence, hits], api_visibility="private")
    words.submit(on_search, filters, [sentence, hits], api_visibility="private")
    random_button.click(on_random, filters, [sentence, hits], api_visibility="private")
    for trigger in (sentence.change, tree_task.change):
        trigger(
            on_sentence,
            [tree_state, split, sentence, tree_task, room],
            tree_outputs_list,
            api_visibility="private",
            concurrency_id="model",
            js=ROOM_JS,
        )

    def on_row(event: gr.SelectData):
        return event.index[0]

    def on_node(tree_value, node_value, request: gr.Request):
        treebank = trees().treebank
        return node_outputs(lab, treebank, tree_value, node_value, request_lang(request)) if treebank else ("", None)

    node.change(
        on_node, [tree_state, node], [node_summary, node_attr], api_visibility="private", concurrency_id="model"
    )
    nodes.select(on_row, None, [node], api_visibility="private")  # a row of the table picks its node
    disagree.select(on_row, None, [pick], api_visibility="private")
    data_task.change(on_data_task, [data_task], [data_model], api_visibility="private")
    for trigger in (data_task.change, data_model.change):
        trigger(on_dataset, [data_task, data_model, room], dataset_outputs_list, api_visibility="private", js=ROOM_JS)
    tab.select(
        on_open_tab,
        [tree_state, dataset_state, *filters, data_task, data_model, room],
        [problem_md, sentence, hits, *dataset_outputs_list],
        api_visibility="private",
        js=ROOM_JS,
    )

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

    def on_copy(split_value, task_value, index, node_value):
        """The link of the sentence and node shown (COPY_JS puts the page's address in front)."""
        state = LinkState("treebank", task=task_value or AUTO, split=split_value, sentence=index, node=node_value)
        return state_to_query(state)

    copied = copy.click(
        on_copy, [split, tree_task, sentence, node], [link], api_visibility="private", show_progress="hidden"
    )
    copied.then(None, [link], [link], js=COPY_JS)

    def on_link(request: gr.Request, link_state: LinkState, dataset_value, *values):
        """A link to this tab: its split, task and sentence with the node chosen (a sentence past the split's end
        gets a warning and the search's first), the dataset view as on a first visit, then the tab. `values`: the
        filters', the tree's task, the dataset's task and model, and the room."""
        *filter_values, task_value, data_task_value, data_model, width = values
        wanted = Filters(*filter_values)
        keep = (gr.update(),)
        ui, seen = request_lang(request), visitors.lab(lab, request)
        drawn_for(width)
        split_value = link_state.split or wanted.split
        task_value = link_state.task if link_state.task in SST_TASKS else task_value
        treebank, problem = trees().treebank, trees().problem
        warning = f"⚠️ {md(t('tb_no_trees', ui, error=notice_text(problem, ui)))}" if problem else ""
        picker, drawn = None, keep * len(tree_outputs_list)
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
        data = (
            dataset_outputs(seen, data_task_value, data_model, ui)
            if dataset_value is None and data_task_value
            else keep * 8
        )
        return warning, split_value, task_value, *picker, *drawn, *data, gr.Tabs(selected="treebank")

    def open_link(link_state: gr.State, tabs: gr.Tabs) -> None:
        link_state.change(
            on_link,
            [link_state, dataset_state, *filters, tree_task, data_task, data_model, room],
            [problem_md, split, tree_task, sentence, hits, *tree_outputs_list, *dataset_outputs_list, tabs],
            api_visibility="private",
            concurrency_id="model",
            js=ROOM_JS,
        )

    return TreebankView(tree_state, node, open_node_button, dataset_state, pick, open_sentence_button, open_link)


def open_in_lab(view: TreebankView, lab_view, tabs: gr.Tabs) -> None:
    """The two Open buttons: a node's phrase or a test sentence goes into the Lab tab's sentence box (with
    the task it came from), the Lab tab shows, and its analysis runs."""
    is_pair = gr.State(False)
    outputs = [tabs, lab_view.text, lab_view.pair.text_b, lab_view.pair.box, lab_view.task]

    def on_node(tree_value, node_value, request: gr.Request):
        return open_node(tree_value, node_value, request_lang(request))

    def on_sentence(state, choice, request: gr.Request):
        return open_sentence(state, choice, request_lang(request))

    for button, callback, inputs in (
        (view.open_node, on_node, [view.tree, view.node]),
        (view.open_sentence, on_sentence, [view.dataset, view.sentence]),
    ):
        lab_view.analyse_after(button.click(callback, inputs, outputs, api_visibility="private"), is_pair)
