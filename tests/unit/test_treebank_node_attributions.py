"""A treebank node's attributions beside its gold labels (core.analysis.treebank.node_attributions) and the
Treebank tab's table of them."""

import xml.etree.ElementTree as ET

import pytest

from core.analysis.attribution import occlusion
from core.analysis.plausibility import plausibility, word_labels
from core.analysis.treebank import Treebank, TreebankError, node_attributions, tree_view
from demo.i18n import t
from demo.treebank_outputs import node_outputs, tree_outputs


@pytest.fixture(scope="module")
def treebank(tiny_data):
    return Treebank.load(tiny_data)


def _row_heads(table: str) -> list[str]:
    """The text of each row's header of an HTML table (svg.html_table)."""
    return ["".join(th.itertext()) for th in ET.fromstring(table).iterfind("tbody/tr/th[@scope='row']")]


def _longest(treebank: Treebank) -> int:
    trees = treebank.trees["test"]
    return max(range(len(trees)), key=lambda i: len(trees[i].words))


def test_a_node_is_explained_alone_by_every_model(lab, treebank):
    index = _longest(treebank)
    tree = treebank.tree("test", index)
    child = list(tree.nodes())[2]  # the right-branching fixture: node 2 is the phrase without the first word
    found = node_attributions(lab.checkpoints, tree, 2, "sst5")
    assert found.words == list(child.words) and found.gold == child.label and found.word_gold == word_labels(child)
    assert set(found.predictions) == set(lab.models("sst5"))
    for model, label in found.predictions.items():
        ckpt = lab.checkpoints[("sst5", model)]
        assert found.scores[model] == occlusion(ckpt.model, ckpt.vocab.encode(child.words), label).scores
        assert found.plausibility[model] == plausibility(child, found.scores[model], label)
    leaf = next(i for i, n in enumerate(tree.nodes()) if not n.children)
    assert all(s == [] for s in node_attributions(lab.checkpoints, tree, leaf, "sst5").scores.values())


@pytest.mark.parametrize(
    "node, task, code", [(999, "sst5", "bad_node"), (-1, "sst5", "bad_node"), (0, "zh_sentiment", "not_sst")]
)
def test_bad_nodes_raise_codes(lab, treebank, node, task, code):
    with pytest.raises(TreebankError) as err:
        node_attributions(lab.checkpoints, treebank.tree("test", 0), node, task)
    assert err.value.code == code


def test_the_tab_shows_words_gold_labels_and_scores(lab, treebank):
    index = _longest(treebank)
    view = tree_view(lab.checkpoints, treebank.tree("test", index), "sst5", "test", index)
    summary, table = node_outputs(lab, treebank, view, 0, "en")
    assert summary.startswith("**Node 0**, gold label:") and summary.count("\n- ") == len(view.models)
    # a plain HTML table (not a Gradio table: a component per cell), captioned, its columns and rows headed
    shown = ET.fromstring(table)
    assert shown.findtext("caption") == t("tb_node_attr", "en")
    assert [th.text for th in shown.iterfind("thead/tr/th[@scope='col']")][:2] == ["word", "gold"]
    assert _row_heads(table) == view.words
    scores = [td.text for td in shown.iterfind("tbody/tr/td")][1 : 1 + len(view.models)]
    assert scores and all(s.startswith(("+", "-")) for s in scores)
    summary_zh, table_zh = node_outputs(lab, treebank, view, 0, "zh")
    assert summary_zh.startswith("**节点 0**")
    assert ET.fromstring(table_zh).findtext("caption") == t("tb_node_attr", "zh")
    assert node_outputs(lab, treebank, None, None, "en") == ("", None)


def test_a_new_sentence_brings_its_own_chosen_nodes_panel(lab, treebank):
    """The panel below the tree is the chosen node's of the sentence shown, never the last sentence's: the node
    picker keeps node 0 from one sentence to the next, so the panel comes with the tree."""
    first, second = sorted(range(len(treebank.trees["test"])), key=lambda i: -len(treebank.trees["test"][i].words))[:2]
    for index in (first, second, first):
        *_, node, summary, table, view = tree_outputs(lab, treebank, "test", index, "sst5", "en")
        assert node["value"] == 0 and _row_heads(table) == list(treebank.tree("test", index).words)
        assert (summary, table) == node_outputs(lab, treebank, view, 0, "en")
    *_, node, summary, table, view = tree_outputs(lab, treebank, "test", first, "sst5", "en", node=2)
    assert node["value"] == 2 and summary.startswith("**Node 2**")
    assert table == node_outputs(lab, treebank, view, 2, "en")[1]
