"""The Treebank tab's layout (demo/tabs/treebank.py wires it): the trees' accordion, the dataset's, and the
state the events share. Components only: no event, no model."""

from dataclasses import dataclass

import gradio as gr

from core.analysis.treebank import MAX_HITS, PHENOMENA, SPLITS, SST_TASKS
from core.data import TASKS
from core.data.sst import FINE_LABELS
from demo.i18n import L, model_name, task_label
from demo.svg import EXPORT_JS, ROW_PICK_JS
from demo.tabs.named import components
from demo.treebank_outputs import Filters
from service.lab import ServedLab

# A plain click (or Enter) on a tree node is the tree's select event, its index the node's number: the Lab tab
# opens on the phrase in this page, without a new page's load (docs/performance.md, "A tree node's click"); a
# modified or middle click keeps the link's own new tab
NODE_CLICK_JS = """
element.addEventListener('click', (event) => {
  const node = event.target.closest('a.tree-node');
  if (!node || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  trigger('select', {index: Number(node.dataset.node), value: Number(node.dataset.node)});
});
"""


@dataclass
class TreesBox:
    """The trees' accordion (trees_box): the filters and the picker, the tree, its nodes and the chosen node."""

    problem: gr.Markdown
    split: gr.Radio
    task: gr.Dropdown
    words: gr.Textbox
    label: gr.Dropdown
    phenomenon: gr.Dropdown
    min_words: gr.Number
    max_words: gr.Number
    search: gr.Button
    random: gr.Button
    hits: gr.Markdown
    sentence: gr.Dropdown
    summary: gr.Markdown
    plot: gr.HTML
    nodes: gr.HTML
    node: gr.Dropdown
    open_node: gr.Button
    copy: gr.Button
    link: gr.Markdown
    node_summary: gr.Markdown
    node_attr: gr.HTML

    @property
    def filters(self) -> list:
        """The six filters: a Filters' fields (demo/tabs/named.py)."""
        return components(Filters, self)

    @property
    def without_trees(self) -> list:
        """What says the trees are missing, and the search switched off then (treebank._without_trees)."""
        return [self.problem, self.words, self.search, self.random]


@dataclass
class DatasetBox:
    """The dataset's accordion (dataset_box): one model against its task's test set."""

    task: gr.Dropdown
    model: gr.Dropdown
    summary: gr.Markdown
    length: gr.HTML
    confusion: gr.HTML
    per_class: gr.HTML
    slices: gr.HTML
    disagree: gr.HTML
    pick: gr.Dropdown
    open_sentence: gr.Button


@dataclass
class Page:
    """The tab's components (layout), which the wiring connects."""

    trees: TreesBox
    data: DatasetBox
    tree_state: gr.State
    dataset_state: gr.State
    room: gr.Number  # the width the tree gets (ROOM_JS measures it)

    @property
    def tree_outputs(self) -> list:
        box = self.trees
        return [box.summary, box.plot, box.nodes, box.node, box.node_summary, box.node_attr, self.tree_state]

    @property
    def dataset_outputs(self) -> list:
        d = self.data
        return [d.summary, d.length, d.confusion, d.per_class, d.slices, d.disagree, d.pick, self.dataset_state]


def trees_box(sst_tasks: list[str]) -> TreesBox:
    with gr.Accordion(L("tb_trees"), open=True):
        problem = gr.Markdown(elem_id="tb-problem")
        with gr.Row():
            split = gr.Radio(
                [(L(f"tb_split_{s}"), s) for s in SPLITS], value="test", label=L("tb_split"), elem_id="tb-split"
            )
            task = gr.Dropdown(
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
            random = gr.Button(L("tb_random"), elem_id="tb-random")
        hits = gr.Markdown(elem_id="tb-hits")
        # every sentence found in the list (Gradio lists 100 by default: "137 found" showed 100)
        sentence = gr.Dropdown([], label=L("tb_sentence"), num_choices_shown=MAX_HITS, elem_id="tb-sentence")
        summary = gr.Markdown(elem_id="tb-tree-summary")
        plot = gr.HTML(elem_id="tb-tree", elem_classes="figures", js_on_load=EXPORT_JS + NODE_CLICK_JS)
        # the tables are HTML (svg.html_table), captioned by the callbacks: a Gradio table drew a component per cell,
        # ~700 DOM changes for 51 nodes (docs/performance.md, "Treebank in the browser"); a row of these two picks
        nodes = gr.HTML(elem_id="tb-nodes", elem_classes="tb-table", js_on_load=ROW_PICK_JS)
        with gr.Row():
            node = gr.Dropdown([], label=L("tb_node"), info=L("tb_node_info"), scale=4, elem_id="tb-node")
            open_node = gr.Button(L("tb_open_node"), scale=1, elem_id="tb-open-node")
            copy = gr.Button(L("copy_link"), scale=1, elem_id="tb-copy-link")
        link = gr.Markdown(elem_id="tb-permalink")
        node_summary = gr.Markdown(elem_id="tb-node-attr-summary")
        node_attr = gr.HTML(elem_id="tb-node-attr", elem_classes="tb-table")
    return TreesBox(
        problem, split, task, words, label, phenomenon, min_words, max_words, search, random, hits, sentence,
        summary, plot, nodes, node, open_node, copy, link, node_summary, node_attr,
    )  # fmt: skip


def dataset_box(lab: ServedLab, data_tasks: list[str]) -> DatasetBox:
    with gr.Accordion(L("tb_dataset"), open=True):
        with gr.Row():
            task = gr.Dropdown(
                [(task_label(task), task) for task in data_tasks],
                value=data_tasks[0] if data_tasks else None,
                label=L("task"),
                elem_id="tb-data-task",
            )
            model = gr.Dropdown(
                [(model_name(m), m) for m in lab.models(data_tasks[0])] if data_tasks else [],
                value=lab.models(data_tasks[0])[0] if data_tasks else None,
                label=L("model"),
                elem_id="tb-data-model",
            )
        summary = gr.Markdown(elem_id="tb-data-summary")
        with gr.Row(equal_height=False):  # side by side where both fit, else one under the other
            length = gr.HTML(elem_id="tb-length", elem_classes="figures", js_on_load=EXPORT_JS, min_width=320)
            confusion = gr.HTML(elem_id="tb-confusion", elem_classes="figures", js_on_load=EXPORT_JS, min_width=320)
        with gr.Row(equal_height=False):
            per_class = gr.HTML(elem_id="tb-per-class", elem_classes="tb-table", min_width=320)
            slices = gr.HTML(elem_id="tb-slices", elem_classes="tb-table", min_width=320)
        disagree = gr.HTML(elem_id="tb-disagree", elem_classes="tb-table", js_on_load=ROW_PICK_JS)
        with gr.Row():
            pick = gr.Dropdown([], label=L("tb_disagree_pick"), scale=4, elem_id="tb-disagree-pick")
            open_sentence = gr.Button(L("tb_open_sentence"), scale=1, elem_id="tb-open-sentence")
    return DatasetBox(task, model, summary, length, confusion, per_class, slices, disagree, pick, open_sentence)


def layout(lab: ServedLab) -> Page:
    sst_tasks = [task for task in lab.tasks() if task in SST_TASKS]
    data_tasks = [task for task in lab.tasks() if task in TASKS]  # what make evaluate-all evaluates (no user's task)
    gr.Markdown(L("treebank_md"))
    trees = trees_box(sst_tasks)
    data = dataset_box(lab, data_tasks)
    return Page(
        trees=trees, data=data, tree_state=gr.State(None), dataset_state=gr.State(None), room=gr.Number(visible=False)
    )
