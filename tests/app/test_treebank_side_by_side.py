"""The Treebank tab runs a tree's models side by side (core.analysis.treebank.each_model on the app's MODEL_POOL):
the same tree and node panel as one model after another, with every model's work handed to the pool."""

from concurrent.futures import ThreadPoolExecutor

import pytest

import demo.treebank_outputs as treebank_outputs
from core.analysis.treebank import Treebank, node_attributions, tree_and_root, tree_view


class CountingPool(ThreadPoolExecutor):
    """A pool that counts the models it was handed (one map per model loop)."""

    def __init__(self):
        super().__init__(max_workers=2)
        self.models: list[str] = []

    def map(self, fn, *iterables, **kwargs):
        models = list(iterables[0])
        self.models += models
        return super().map(fn, models, **kwargs)


@pytest.fixture(scope="module")
def treebank(tiny_data):
    return Treebank.load(tiny_data)


def test_side_by_side_answers_as_one_after_another(lab, treebank):
    tree = treebank.tree("test", 3)
    with CountingPool() as pool:
        assert tree_view(lab.checkpoints, tree, "sst5", "test", 3, pool) == tree_view(
            lab.checkpoints, tree, "sst5", "test", 3
        )
        assert node_attributions(lab.checkpoints, tree, 0, "sst5", pool) == node_attributions(
            lab.checkpoints, tree, 0, "sst5"
        )
        assert tree_and_root(lab.checkpoints, tree, "sst5", "test", 3, pool) == tree_and_root(
            lab.checkpoints, tree, "sst5", "test", 3
        )
    assert sorted(pool.models) == sorted(lab.models("sst5") * 3)


def test_a_tree_and_its_roots_panel_from_one_run_are_the_two_apart(lab, treebank):
    """tree_and_root's one batch per model: the same predictions and (up to the batches' padding) confidences and
    occlusion scores as tree_view and node_attributions(root)."""
    index = max(range(len(treebank.trees["test"])), key=lambda i: len(treebank.trees["test"][i].words))
    tree = treebank.tree("test", index)
    view, root = tree_and_root(lab.checkpoints, tree, "sst5", "test", index)
    alone, apart = (
        tree_view(lab.checkpoints, tree, "sst5", "test", index),
        node_attributions(lab.checkpoints, tree, 0, "sst5"),
    )
    assert [n.predictions for n in view.nodes] == [
        n.predictions for n in alone.nodes
    ] and view.accuracy == alone.accuracy
    for node, other in zip(view.nodes, alone.nodes):
        assert node.confidence == pytest.approx(other.confidence, abs=1e-3)
    assert (root.node, root.words, root.gold, root.word_gold) == (0, apart.words, apart.gold, apart.word_gold)
    assert root.predictions == apart.predictions and root.plausibility == apart.plausibility
    for model, scores in apart.scores.items():
        assert len(scores) > 1 and root.scores[model] == pytest.approx(scores, abs=1e-5)


def test_a_picked_sentence_hands_its_models_to_the_pool(lab, treebank, monkeypatch):
    pool = CountingPool()
    monkeypatch.setattr(treebank_outputs, "MODEL_POOL", pool)
    with pool:
        *_, view = treebank_outputs.tree_outputs(lab, treebank, "test", 4, "sst5", "en")
    assert view.index == 4
    # one run of each model: the tree's phrases and its root's panel together (before: the tree, then the panel)
    assert sorted(pool.models) == sorted(lab.models("sst5"))


def test_a_sentence_picked_again_runs_no_model(lab, treebank, monkeypatch):
    """With the app's kept answers, a sentence's tree and its nodes' panels are kept: picked again (or its node
    again), the same outputs without a model run."""
    from core.answers import AnswerCache
    from service.lab import ServedLab

    kept = ServedLab(lab.checkpoints, lab.sources, answers=AnswerCache())
    pool = CountingPool()
    monkeypatch.setattr(treebank_outputs, "MODEL_POOL", pool)
    with pool:
        first = treebank_outputs.tree_outputs(kept, treebank, "test", 5, "sst5", "en")
        node = treebank_outputs.node_outputs(kept, treebank, first[-1], 1, "en")
        ran = len(pool.models)
        again = treebank_outputs.tree_outputs(kept, treebank, "test", 5, "sst5", "en")
        assert treebank_outputs.node_outputs(kept, treebank, again[-1], 1, "en")[0] == node[0]
    assert ran == len(lab.models("sst5")) * 2 and len(pool.models) == ran  # tree with root, node 1; then nothing
    assert again[0] == first[0] and again[4] == first[4] and again[-1] == first[-1]


def test_the_first_visits_tree_is_kept_in_the_warm_up(lab, treebank, monkeypatch):
    """The warm-up's first_tree keeps the tab's first sentence (the search's first of the test split) with its
    root's node panel: a visitor's first visit shows it without a model run."""
    from core.answers import AnswerCache
    from demo.tabs.treebank import first_tree
    from service.lab import ServedLab

    kept = ServedLab(lab.checkpoints, lab.sources, answers=AnswerCache())
    first_tree(kept, lambda: treebank_outputs.Trees(treebank), "test", "sst5")
    pool = CountingPool()
    monkeypatch.setattr(treebank_outputs, "MODEL_POOL", pool)
    with pool:
        *_, view = treebank_outputs.tree_outputs(kept, treebank, "test", treebank.search("test")[0].index, "sst5", "en")
    assert view.index == 0 and pool.models == []
