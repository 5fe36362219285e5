"""What the Treebank tab shows, apart from the page: the sentence picker's choices, a sentence's tree with every
model's prediction on every node (its figure is demo/treebank_plots.py's), a node's attributions, a model's
test-set numbers (read from the evaluation.json `make evaluate-all` stored), and what the Open buttons send to
the Lab. Each takes data (core.analysis.treebank, core.analysis.dataset_view) and returns the outputs' values;
none builds a component. tools/evaluate_all.py calls them too, to check what the tab will show."""

from dataclasses import dataclass
from typing import NoReturn

import gradio as gr

import demo.svg as svg
from core.analysis.dataset_view import SLICES, read_evaluation
from core.analysis.plausibility import TOP_K
from core.analysis.treebank import MAX_HITS, Hit, NodeAttribution, Treebank, TreebankError, TreeView
from core.data.sst import FINE_LABELS
from demo.i18n import error, label_name, model_name, notice_text, t, task_name, warn
from demo.lab_analysis import Opened
from demo.plots import esc
from demo.treebank_plots import confusion_figure, label_symbols, length_figure, tree_figure
from service.lab import ServedLab
from web.runner import MODEL_POOL


def fail(err: TreebankError, ui: str) -> NoReturn:
    raise error(esc(notice_text(err, ui)), ui)


def hit_choice(hit: Hit) -> tuple[str, int]:
    """A sentence in the picker: "#index · words · text" (the text cut at 110 characters)."""
    return f"#{hit.index} · {hit.words} · {hit.text[:110]}", hit.index


@dataclass(frozen=True)
class Filters:
    """The sentence search's inputs, as the page gives them (empty: any; 0 words: no bound)."""

    split: str
    words: str | None = ""
    label: str | None = ""
    phenomenon: str | None = ""
    min_words: float | None = 0
    max_words: float | None = 0

    def search(self) -> dict:
        """Treebank.search's and Treebank.random's keyword arguments."""
        return dict(
            words=self.words or "",
            label=self.label or None,
            phenomenon=self.phenomenon or None,
            min_words=int(self.min_words or 0),
            max_words=int(self.max_words or 0),
        )


def search_choices(treebank: Treebank, filters: Filters, ui: str) -> tuple:
    """The picker's sentences matching the search, and how many were found; the first one chosen."""
    try:
        hits = treebank.search(filters.split, **filters.search())
    except TreebankError as err:
        fail(err, ui)
    if not hits:
        warn(esc(notice_text(TreebankError("no_match", split=filters.split), ui)), ui)
    choices = [hit_choice(h) for h in hits]
    key = "tb_hits_capped" if len(hits) >= MAX_HITS else "tb_hits"
    return gr.update(choices=choices, value=choices[0][1] if choices else None), t(key, ui, n=len(hits))


def drawn_tree(view: TreeView, ui: str, node: int | None = None) -> tuple:
    """Summary, tree figure, node table (a row picks its node: svg.html_table) and node choices of one sentence's
    view (`node` chosen, a link's, else the root)."""
    labels = [label_name(label, ui) for label in view.labels]
    names = [model_name(m) for m in view.models]
    root = view.nodes[0]
    gold = labels[root.gold] if root.gold is not None else t("tb_no_gold", ui)
    accuracy = " · ".join(f"{esc(n)} {view.accuracy[m]:.0%}" for m, n in zip(view.models, names))
    summary = (
        t(
            "tb_tree_summary",
            ui,
            split=t(f"tb_split_{view.split}", ui),
            index=view.index,
            words=len(view.words),
            gold=esc(gold),
            accuracy=accuracy,
        )
        + "\n\n<small>"
        + esc(
            t(
                "tb_legend",
                ui,
                symbols=", ".join(f"{s} {l}" for s, l in zip(label_symbols(labels), labels)),
                models=", ".join(names),
            )
        )
        + "</small>"
    )
    figure = tree_figure(
        view,
        labels,
        names,
        f"{task_name(view.task, ui)}{t('colon', ui)}{t(f'tb_split_{view.split}', ui)} #{view.index}",
        t("tb_col_gold", ui),
        t("tb_tree_click", ui),
        ui,
    )
    rows = [
        [
            n.id,
            labels[n.gold] if n.gold is not None else "–",
            *(labels[n.predictions[m]] + (" ✓" if n.predictions[m] == n.gold else "") for m in view.models),
            f"{n.agree}/{len(view.models)}" if n.gold is not None else "–",
            n.end - n.start,
            n.text,
        ]
        for n in view.nodes
    ]
    columns = (
        [t("tb_col_node", ui), t("tb_col_gold", ui)]
        + names
        + [t(k, ui) for k in ("tb_col_agree", "tb_col_words", "tb_col_phrase")]
    )  # the long phrase last
    choices = [(f"{n.id}: {n.text[:100]}", n.id) for n in view.nodes]
    chosen = node if node is not None and node < len(view.nodes) else 0
    table = svg.html_table(t("tb_nodes", ui), columns, rows, pick=lambda i: t("tb_pick_node", ui, node=i))
    return summary, figure, table, gr.update(choices=choices, value=chosen)


def tree_outputs(
    lab: ServedLab, treebank: Treebank, split: str, index: int, task: str, ui: str, node: int | None = None
) -> tuple:
    """One sentence's tree (drawn_tree) with the chosen node's panel (node_outputs: never another sentence's node)
    and the view (state), in the order of the tab's tree outputs. The root's panel comes from the tree's own run
    of each model (ServedLab.tree_and_root); a link's other node after it."""
    try:
        if node:
            view, root = lab.tree_view(treebank, split, int(index), task, MODEL_POOL), None
        else:
            view, root = lab.tree_and_root(treebank, split, int(index), task, MODEL_POOL)
    except TreebankError as err:
        fail(err, ui)
    *drawn, choices = drawn_tree(view, ui, node)
    chosen = choices["value"]
    panel = (
        node_panel(view, root, ui)
        if root is not None and chosen == 0
        else node_outputs(lab, treebank, view, chosen, ui)
    )
    return *drawn, choices, *panel, view


def random_choice(treebank: Treebank, filters: Filters, ui: str) -> tuple:
    """A sentence at random among those the search finds, as the picker's only choice."""
    try:
        hit = treebank.random(filters.split, None, **filters.search())
    except TreebankError as err:
        fail(err, ui)
    return gr.update(choices=[hit_choice(hit)], value=hit.index), ""


def node_outputs(lab: ServedLab, treebank: Treebank, view: TreeView | None, node: int | None, ui: str) -> tuple:
    """The node panel (node_panel) of `view`'s node `node`."""
    if view is None or node is None:
        return "", None
    try:
        found = lab.node_attributions(treebank, view.split, view.index, int(node), view.task, MODEL_POOL)
    except TreebankError as err:
        fail(err, ui)
    return node_panel(view, found, ui)


def node_panel(view: TreeView, found: NodeAttribution, ui: str) -> tuple:
    """A node's words with their gold labels beside each model's occlusion scores on the phrase alone, and a
    line per model: its prediction and how far its scores agree with the gold labels (tau, P@k)."""
    labels = [label_name(label, ui) for label in view.labels]
    models = list(found.predictions)
    gold = labels[found.gold] if found.gold is not None else t("tb_no_gold", ui)
    lines = [t("tb_node_attr_head", ui, node=found.node, gold=esc(gold))]

    def number(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    for m in models:
        p = found.plausibility[m]
        agreement = (
            ""
            if p.rank_agreement is None and p.precision is None
            else " · "
            + t("tb_node_attr_scores", ui, tau=number(p.rank_agreement), k=TOP_K, precision=number(p.precision))
        )
        lines.append(f"- {esc(model_name(m))}: {esc(labels[found.predictions[m]])}{agreement}")
    rows = [
        [
            word,
            label_name(FINE_LABELS[found.word_gold[j]], ui),
            *(f"{found.scores[m][j]:+.3f}" if found.scores[m] else "–" for m in models),
        ]
        for j, word in enumerate(found.words)
    ]
    columns = [t("tb_col_word", ui), t("tb_col_gold", ui)] + [model_name(m) for m in models]
    return "\n".join(lines), svg.html_table(t("tb_node_attr", ui), columns, rows)


def dataset_outputs(lab: ServedLab, task: str, model: str, ui: str) -> tuple:
    """Summary (or which command builds the missing numbers), length curve, confusion matrix, per-class and
    slice tables, the disagreement table and its choices, and the state the Open button reads."""
    try:
        view = read_evaluation(lab.checkpoints, task, model)
    except TreebankError as err:
        fail(err, ui)
    params = {"model": model_name(model), "task": task_name(task, ui), "command": view.command}
    if view.status != "ok":
        message = f"⚠️ {t('tb_status_' + view.status, ui, **params)}"
        return message, None, None, None, None, None, gr.update(choices=[], value=None), None
    e = view.evaluation
    labels = [label_name(label, ui) for label in e["labels"]]
    phrases = t("tb_phrases", ui, accuracy=e["phrases"]["accuracy"], n=e["phrases"]["n"]) if e["phrases"] else ""
    summary = t(
        "tb_dataset_summary", ui, **params, sentences=e["sentences"]["accuracy"], n=e["sentences"]["n"], phrases=phrases
    )
    if view.disagreement_stale:
        summary += "\n\n⚠️ " + t("tb_disagreement_stale", ui, **params)
    room = svg.ROOM.get()  # the charts side by side (CSS: each at least 320 px) where the row holds both
    with svg.drawn_within((room - 32) / 2 if room and room >= 2 * 320 + 16 else room):
        length = length_figure(
            view.buckets,
            t(f"tb_length_{e['length_unit']}", ui),
            t("tb_length_axis", ui),
            t("tb_accuracy", ui),
            t("tb_count", ui),
            ui,
        )
        confusion = confusion_figure(
            e["sentences"]["confusion"],
            labels,
            t("tb_gold_axis", ui),
            t("tb_predicted_axis", ui),
            t("tb_confusion", ui),
            ui,
        )
    per_class = svg.html_table(
        t("tb_per_class", ui),
        [t(k, ui) for k in ("tb_col_class", "tb_col_precision", "tb_col_recall", "tb_col_f1", "tb_col_support")],
        [
            [labels[i], c["precision"], c["recall"], c["f1"], c["support"]]
            for i, c in enumerate(e["sentences"]["per_class"].values())
        ],
    )  # svg.cell gives a number 3 decimals
    slices = svg.html_table(
        t("tb_slices", ui),
        [t(k, ui) for k in ("tb_col_slice", "tb_col_n", "tb_col_accuracy")],
        [
            [t(f"tb_slice_{s}", ui), e["slices"][s]["n"], e["slices"][s]["accuracy"] if e["slices"][s]["n"] else None]
            for s in SLICES
        ],
    )
    sentences = e["disagreement"]["sentences"]
    models = list(e["disagreement"]["models"])
    # each row headed by its number in the menu below ("1. ..."), the long sentence last, where wrapping keeps the
    # labels in view; a row picks its sentence
    disagree = svg.html_table(
        t("tb_disagree", ui),
        ["#", t("tb_col_distinct", ui), t("tb_col_gold", ui), *map(model_name, models), t("tb_col_sentence", ui)],
        [
            [i + 1, s["distinct"], labels[s["gold"]], *(labels[s["predictions"][m]] for m in models), s["text"]]
            for i, s in enumerate(sentences)
        ],
        pick=lambda i: t("tb_pick_sentence", ui, n=i + 1),
    )
    choices = [(f"{i + 1}. {s['text'][:110]}", i) for i, s in enumerate(sentences)]
    state = {"task": task, "texts": [s["text"] for s in sentences]}
    return (
        summary,
        length,
        confusion,
        per_class,
        slices,
        disagree,
        gr.update(choices=choices, value=0 if choices else None),
        state,
    )


def open_node(view, node: int | None, ui: str) -> Opened:
    """The node's phrase, on the tree's task, for the Lab tab."""
    if view is None or node is None or not 0 <= int(node) < len(view.nodes):
        raise error(t("tb_no_node", ui), ui)
    return Opened(view.nodes[int(node)].text, view.task)


def open_sentence(state: dict | None, choice: int | None, ui: str) -> Opened:
    """A test sentence of the dataset view, on its task, for the Lab tab."""
    if not state or choice is None or not 0 <= int(choice) < len(state["texts"]):
        raise error(t("tb_no_sentence", ui), ui)
    return Opened(state["texts"][int(choice)], state["task"])


@dataclass(frozen=True)
class Trees:
    """The SST trees (core.analysis.treebank), or why they could not be read."""

    found: Treebank | TreebankError

    @classmethod
    def load(cls) -> "Trees":
        try:
            return cls(Treebank.load())
        except TreebankError as err:
            return cls(err)

    @property
    def treebank(self) -> Treebank | None:
        return self.found if isinstance(self.found, Treebank) else None

    @property
    def problem(self) -> TreebankError | None:
        return self.found if isinstance(self.found, TreebankError) else None

    def loaded(self, ui: str) -> Treebank:
        """The treebank, or the page's error saying why it is not there."""
        if isinstance(self.found, TreebankError):
            fail(self.found, ui)
        return self.found
