"""The Stanford Sentiment Treebank as the place where composition can be checked node by node: the
dev/test trees, a sentence search (words, root label, phenomenon, length), and every loaded model's
prediction on every node's phrase, each subtree classified as an input of its own.

    tb = Treebank.load()                       # the trees of $DATA_DIR (default ../shared/data)/sst/trees
    hits = tb.search("test", words="but", phenomenon="negation", max_words=20)
    view = tree_view(lab.checkpoints, tb.tree("test", hits[0].index), "sst5", "test", hits[0].index)

Core returns data; bad requests raise `TreebankError` with a code and parameters (TREEBANK_NOTICE_TEXT
words them in English, demo/i18n.py in Chinese).
"""

import random
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field

from core.analysis.attribution import occlusion, without
from core.analysis.batched import predict_batched
from core.analysis.plausibility import Plausibility, plausibility, word_labels
from core.checkpoints.checkpoint import Checkpoint
from core.data import DataError, data_dir
from core.data.sst import FINE_LABELS, Tree, load_sst_trees, relabel
from core.models import PAPER_MODELS
from core.notices import NoticeError

SPLITS = ("dev", "test")
SST_TASKS = {"sst5": False, "sst2": True}  # task -> binary
PHRASE_BATCH = 32  # phrases per forward pass in tree_view (see phrase_predictions)
MAX_HITS = 500  # a search lists at most this many sentences (the picker shows them as choices)

# Phenomena, by the words that mark them (SST tokens are lower case with "n't" split off; Chinese is
# jieba-segmented, where negation is often the first character of a word: 不好, 没有)
NEGATION = {
    "en": {
        "not",
        "n't",
        "no",
        "never",
        "nothing",
        "none",
        "nobody",
        "nowhere",
        "neither",
        "nor",
        "without",
        "cannot",
        "hardly",
    },
    "zh": {"无", "无法", "非", "否"},
}
NEGATION_PREFIXES = {"en": (), "zh": ("不", "没", "未", "别")}
CONTRAST = {
    "en": {"but", "however", "although", "though", "yet", "nevertheless", "nonetheless", "whereas"},
    "zh": {"但", "但是", "可是", "然而", "不过", "却", "虽然", "只是"},
}
PHENOMENA = ("negation", "contrast")

TREEBANK_NOTICE_TEXT = {
    "no_trees": "The SST trees are not available ({error}); set DATA_DIR to a folder holding sst/trees/.",
    "unknown_split": "unknown split '{split}'; choose one of: {available}",
    "bad_index": "sentence {index} does not exist in {split}, which has {size} sentences (0..{last})",
    "bad_node": "node {node} does not exist in this tree, which has {size} nodes (0..{last})",
    "not_sst": "task '{task}' has no trees; the tree view needs one of: {available}",
    "no_models": "no model is loaded for task '{task}'; available: {available}",
    "unknown_model": "model '{model}' is not loaded for task '{task}'; available: {available}",
    "unknown_phenomenon": "unknown phenomenon '{phenomenon}'; choose one of: {available}",
    "unknown_label": "unknown label '{label}'; choose one of: {available}",
    "no_match": "No sentence of {split} matches this search.",
}


class TreebankError(NoticeError):
    """A request the treebank cannot answer."""

    TEXT = TREEBANK_NOTICE_TEXT


def phenomena(words: tuple[str, ...] | list[str], lang: str = "en") -> set[str]:
    """The phenomena a sentence contains: 'negation' and/or 'contrast' (marked by words, see above)."""
    found = set()
    if any(w in NEGATION[lang] or w.startswith(NEGATION_PREFIXES[lang]) for w in words):
        found.add("negation")
    if any(w in CONTRAST[lang] for w in words):
        found.add("contrast")
    return found


def join_words(words: tuple[str, ...] | list[str], lang: str = "en") -> str:
    """Tokens as a text the Lab tab can take: spaced for English, run together for Chinese."""
    return ("" if lang == "zh" else " ").join(words)


@dataclass
class Hit:
    index: int  # the sentence's position in its split
    text: str
    label: int  # gold root label, 0..4 (FINE_LABELS)
    words: int


class Treebank:
    """The dev and test trees, read once (about 0.2 s)."""

    def __init__(self, trees: dict[str, list[Tree]]):
        self.trees = trees
        self._texts = {s: [" " + join_words(t.words).lower() + " " for t in ts] for s, ts in trees.items()}
        self._phenomena = {s: [phenomena(t.words) for t in ts] for s, ts in trees.items()}

    @classmethod
    def load(cls, data: str | None = None) -> "Treebank":
        """TreebankError('no_trees') when the data directory or its SST trees are missing."""
        try:
            root = data_dir(data)
            return cls({split: load_sst_trees(root, split) for split in SPLITS})
        except DataError as err:
            raise TreebankError("no_trees", error=str(err)) from None

    def _check_split(self, split: str) -> list[Tree]:
        if split not in self.trees:
            raise TreebankError("unknown_split", split=split, available=list(self.trees))
        return self.trees[split]

    def tree(self, split: str, index: int) -> Tree:
        trees = self._check_split(split)
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(trees):
            raise TreebankError("bad_index", index=index, split=split, size=len(trees), last=len(trees) - 1)
        return trees[index]

    def search(
        self,
        split: str,
        words: str = "",
        label: str | None = None,
        phenomenon: str | None = None,
        min_words: int = 0,
        max_words: int = 0,
    ) -> list[Hit]:
        """Sentences of `split` that contain the phrase `words` (case-insensitive, whole words), have the
        root label `label` (a FINE_LABELS name), contain `phenomenon`, and have between min_words and
        max_words words (0: no bound); at most MAX_HITS, in treebank order."""
        trees = self._check_split(split)
        if label and label not in FINE_LABELS:
            raise TreebankError("unknown_label", label=label, available=FINE_LABELS)
        if phenomenon and phenomenon not in PHENOMENA:
            raise TreebankError("unknown_phenomenon", phenomenon=phenomenon, available=list(PHENOMENA))
        needle = " " + " ".join(words.lower().split()) + " " if words and words.strip() else None
        hits = []
        for i, tree in enumerate(trees):
            n = len(tree.words)
            if (
                (needle and needle not in self._texts[split][i])
                or (label and FINE_LABELS[tree.label] != label)
                or (phenomenon and phenomenon not in self._phenomena[split][i])
                or (min_words and n < min_words)
                or (max_words and n > max_words)
            ):
                continue
            hits.append(Hit(i, join_words(tree.words), tree.label, n))
            if len(hits) == MAX_HITS:
                break
        return hits

    def random(self, split: str, rng: random.Random | None = None, **filters) -> Hit:
        """A random sentence among those `search(split, **filters)` finds; TreebankError('no_match') if none."""
        hits = self.search(split, **filters)
        if not hits:
            raise TreebankError("no_match", split=split)
        return (rng or random).choice(hits)


@dataclass
class TreeNode:
    id: int  # pre-order position; the root is 0
    parent: int | None
    start: int  # the node covers words[start:end]
    end: int
    height: int  # 0 for a leaf; 1 + the tallest child otherwise
    text: str
    gold: int | None  # the gold label in the task's classes; None where the task has none (neutral in SST-2)
    predictions: dict[str, int]  # model -> predicted class on this phrase alone
    confidence: dict[str, float]  # model -> its probability of that class
    agree: int  # how many models predict the gold label (0 when there is no gold label)


@dataclass
class TreeView:
    split: str
    index: int
    task: str
    labels: list[str]
    models: list[str]
    words: list[str]
    nodes: list[TreeNode]  # pre-order: a parent before its children
    accuracy: dict[str, float] = field(default_factory=dict)  # model -> share of labelled nodes it gets right

    def to_dict(self) -> dict:
        return asdict(self)


def _flatten(tree: Tree) -> list[tuple[Tree, int | None, int, int]]:
    """(node, parent id, start, end) in pre-order."""
    out: list[tuple[Tree, int | None, int, int]] = []

    def visit(node: Tree, parent: int | None, start: int) -> None:
        out.append((node, parent, start, start + len(node.words)))
        me, offset = len(out) - 1, start
        for child in node.children:
            visit(child, me, offset)
            offset += len(child.words)

    visit(tree, None, 0)
    return out


def _height(node: Tree) -> int:
    return 1 + max(map(_height, node.children)) if node.children else 0


def phrase_predictions(
    ckpt: Checkpoint, phrases: list[tuple[str, ...]], batch_size: int = PHRASE_BATCH
) -> tuple[list[int], list[float]]:
    """Every phrase classified as an input of its own: predicted class and its probability, in order.
    Phrases go shortest first in batches of `batch_size`, so that a one-word phrase is not padded to the
    sentence's length (a tree's phrases have every length: one batch padded to the longest cost AdaSent's
    quadratic pyramid 3x more on a 42-word sentence)."""
    probs, labels = predict_batched(ckpt.model, [ckpt.vocab.encode(p) for p in phrases], batch_size)
    return labels, [row[label] for row, label in zip(probs, labels)]


def each_model(models: list[str], work: Callable, executor: Executor | None = None) -> dict:
    """model -> work(model): one after another, or side by side on `executor` (torch releases the GIL)."""
    return dict(zip(models, map(work, models) if executor is None else executor.map(work, models)))


def tree_view(
    checkpoints: dict[tuple[str, str], Checkpoint],
    tree: Tree,
    task: str,
    split: str,
    index: int,
    executor: Executor | None = None,
) -> TreeView:
    """The gold tree of one sentence with every model of `task` classifying every node's phrase (the models side by
    side on `executor`)."""
    return _tree_runs(checkpoints, tree, task, split, index, executor, with_root=False)[0]


def tree_and_root(
    checkpoints: dict[tuple[str, str], Checkpoint],
    tree: Tree,
    task: str,
    split: str,
    index: int,
    executor: Executor | None = None,
) -> "tuple[TreeView, NodeAttribution]":
    """tree_view and node_attributions of its root (node 0) from one batched run of each model: the tree's phrases
    and the sentence without each of its words go through the model together (a picked sentence shows both)."""
    view, root = _tree_runs(checkpoints, tree, task, split, index, executor, with_root=True)
    assert root is not None
    return view, root


def _tree_runs(
    checkpoints: dict[tuple[str, str], Checkpoint],
    tree: Tree,
    task: str,
    split: str,
    index: int,
    executor: Executor | None,
    with_root: bool,
) -> "tuple[TreeView, NodeAttribution | None]":
    if task not in SST_TASKS:
        raise TreebankError("not_sst", task=task, available=list(SST_TASKS))
    found = {m for t, m in checkpoints if t == task}
    models = [m for m in PAPER_MODELS if m in found] + sorted(found - set(PAPER_MODELS))
    if not models:
        raise TreebankError("no_models", task=task, available=sorted({t for t, _ in checkpoints if t in SST_TASKS}))
    flat = _flatten(tree)
    phrases = list(dict.fromkeys(node.words for node, *_ in flat))  # a phrase repeated in the tree runs once
    position = {p: i for i, p in enumerate(phrases)}

    def run(model: str) -> tuple[list[int], list[float], tuple | None]:
        """The phrases' labels and confidences; with the root, its occlusion after them (the root is phrase 0)."""
        ckpt = checkpoints[(task, model)]
        ids = [ckpt.vocab.encode(p) for p in phrases]
        left_out = [without(ids[0], {i}) for i in range(len(ids[0]))] if with_root and len(ids[0]) > 1 else []
        probs, labels = predict_batched(ckpt.model, ids + left_out, PHRASE_BATCH)
        confidence = [row[label] for row, label in zip(probs, labels)][: len(phrases)]
        root = labels[0]
        scores = [probs[0][root] - row[root] for row in probs[len(phrases) :]]
        return labels[: len(phrases)], confidence, _attributed(tree, ckpt, root, scores) if with_root else None

    predicted = each_model(models, run, executor)
    nodes = []
    for i, (node, parent, start, end) in enumerate(flat):
        gold = relabel(node.label, SST_TASKS[task])
        k = position[node.words]
        labels = {m: predicted[m][0][k] for m in models}
        nodes.append(
            TreeNode(
                i,
                parent,
                start,
                end,
                _height(node),
                join_words(node.words),
                gold,
                labels,
                {m: round(predicted[m][1][k], 4) for m in models},
                sum(label == gold for label in labels.values()) if gold is not None else 0,
            )
        )
    labelled = [n for n in nodes if n.gold is not None]
    accuracy = {
        m: sum(n.predictions[m] == n.gold for n in labelled) / len(labelled) if labelled else 0.0 for m in models
    }
    labels = checkpoints[(task, models[0])].meta["labels"]
    view = TreeView(split, index, task, list(labels), models, list(tree.words), nodes, accuracy)
    root = _attribution(0, tree, task, {m: predicted[m][2] for m in models}) if with_root else None
    return view, root


@dataclass
class NodeAttribution:
    """One node's phrase, classified alone by every model of a task, each model's occlusion scores (explaining
    its own prediction) beside the annotators' labels of the phrase and of its words."""

    node: int
    words: list[str]
    gold: int | None  # the node's gold label in the task's classes (None: neutral in SST-2)
    word_gold: list[int]  # each word's fine gold label (0..4) from its leaf
    predictions: dict[str, int]  # model -> predicted class on the phrase alone
    scores: dict[str, list[float]]  # model -> occlusion per word; [] for a one-word phrase (nothing to leave out)
    plausibility: dict[str, Plausibility]  # model -> agreement of its scores with the gold labels


def node_attributions(
    checkpoints: dict[tuple[str, str], Checkpoint], tree: Tree, node: int, task: str, executor: Executor | None = None
) -> NodeAttribution:
    """Occlusion on the phrase of `tree`'s node `node` (pre-order id, as in tree_view) for every model of `task`,
    with its plausibility (core.analysis.plausibility; the node stands as the root); the models side by side on
    `executor`."""
    nodes = list(tree.nodes())  # pre-order, as _flatten numbers them
    if task not in SST_TASKS:
        raise TreebankError("not_sst", task=task, available=list(SST_TASKS))
    if not isinstance(node, int) or isinstance(node, bool) or not 0 <= node < len(nodes):
        raise TreebankError("bad_node", node=node, size=len(nodes), last=len(nodes) - 1)
    phrase = nodes[node]
    models = [m for m in PAPER_MODELS if (task, m) in checkpoints] + sorted(
        m for t, m in checkpoints if t == task and m not in PAPER_MODELS
    )

    def attributed(model: str) -> tuple[int, list[float], Plausibility]:
        ckpt = checkpoints[(task, model)]
        (label,), _ = phrase_predictions(ckpt, [phrase.words])
        scores = occlusion(ckpt.model, ckpt.vocab.encode(phrase.words), label).scores if len(phrase.words) > 1 else []
        return _attributed(phrase, ckpt, label, scores)

    return _attribution(node, phrase, task, each_model(models, attributed, executor))


def _attributed(phrase: Tree, ckpt: Checkpoint, label: int, scores: list[float]) -> tuple:
    """One model's (label, occlusion scores, plausibility) on `phrase`: nothing to leave out of a one-word phrase."""
    if not scores:
        return label, [], Plausibility(None, None, None)
    return label, scores, plausibility(phrase, scores, label, len(ckpt.meta["labels"]))


def _attribution(node: int, phrase: Tree, task: str, found: dict) -> NodeAttribution:
    """The NodeAttribution of `phrase` (node `node`) from each model's _attributed."""
    return NodeAttribution(
        node,
        list(phrase.words),
        relabel(phrase.label, SST_TASKS[task]),
        word_labels(phrase),
        {m: label for m, (label, _, _) in found.items()},
        {m: scores for m, (_, scores, _) in found.items()},
        {m: agreement for m, (_, _, agreement) in found.items()},
    )
