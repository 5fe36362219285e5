"""What a link's state draws on the server: the Lab's DCNN panel on the link's top-layer map, the Probes tab
with the link's cell open, the Treebank with the link's node chosen; a value the data lacks keeps the default."""

import contextvars
import re

import gradio as gr
import pytest

from core.analysis.probes import Case, run_cases
from core.analysis.treebank import Treebank
from core.views import KMaxGraph
from demo import build_demo
from demo.lab_analysis import analyse
from demo.links import TABS
from demo.tabs.checkpoints import facts
from demo.tabs.probes import show
from demo.treebank_outputs import tree_outputs
from service.settings import Settings

TEXT = "It is not a bad film, but the plot is dull and the ending drags on."


def chosen_maps(result: str) -> list[str]:
    return re.findall(r'<option value="(\d+)" selected>', result)


@pytest.fixture(scope="module")
def maps(lab) -> tuple[int, int]:
    """The DCNN's map that adds most on TEXT (the default) and the one that adds least."""
    view = next(
        v for v in lab.predict(TEXT, "dcnn", task="sst5").views if isinstance(v, KMaxGraph) and v.top_map is not None
    )
    order = sorted(range(len(view.contributions)), key=view.contributions.__getitem__)
    return order[-1], order[0]


def test_a_links_map_draws_the_dcnn_graph_of_that_map(lab, maps):
    best, least = maps
    known = facts(lab)
    *_, result = analyse(lab, known, TEXT, "dcnn", "sst5", "auto", "en", top_map=least)
    assert chosen_maps(result) == [str(least)] and f"top-layer map {least}" in result
    *_, result = analyse(lab, known, TEXT, "all", "sst5", "auto", "en", top_map=least)  # the others as they are
    assert chosen_maps(result) == [str(least)] and result.count('class="model-panel"') == 5
    *_, result = analyse(lab, known, TEXT, "dcnn", "sst5", "auto", "en", "occlusion", "map_off:0", top_map=least)
    assert chosen_maps(result) == [str(least)] * 2  # before and after the intervention


def test_a_links_map_is_drawn_in_the_one_run_of_each_model(lab, maps, monkeypatch):
    """The link's map goes with the analysis itself (Lab.compare's view_options): no model runs twice."""
    _, least = maps
    ran, attempt = [], lab.attempt
    monkeypatch.setattr(
        lab, "attempt", lambda checked, model, *rest: ran.append(model) or attempt(checked, model, *rest)
    )
    *_, result = analyse(lab, facts(lab), TEXT + " Twice?", "all", "sst5", "auto", "en", top_map=least)
    assert chosen_maps(result) == [str(least)] and sorted(ran) == sorted(lab.models("sst5"))


def test_a_map_the_model_lacks_keeps_the_one_that_adds_most(lab, maps):
    best, _ = maps
    *_, result = analyse(lab, facts(lab), TEXT, "dcnn", "sst5", "auto", "en", top_map=999_999)
    assert chosen_maps(result) == [str(best)]


def test_a_links_probe_cell_is_open_after_the_run(lab):
    cases = [Case("t", cap, "mft", "a good film", "", "positive") for cap in ("first", "second")]
    words = {cap: {"en": cap, "zh": cap} for cap in ("first", "second")}
    report = run_cases(lab, cases, "sst5", ["mrnn", "dcnn"], capabilities=words)
    shown = show(report, "en", ("second", "dcnn"))
    assert (shown[2]["value"], shown[3]["value"]) == ("second", "dcnn")
    assert shown[4].startswith("second · DCNN")
    for stale in (("third", "dcnn"), ("second", "agt")):  # not in this run: its first cell
        shown = show(report, "en", stale)
        assert (shown[2]["value"], shown[3]["value"]) == ("first", "mrnn")


def test_a_links_treebank_node_is_chosen(lab, tiny_data):
    treebank = Treebank.load(tiny_data)
    index = next(i for i, tree in enumerate(treebank.trees["dev"]) if len(tree.words) >= 3)
    *_, nodes, summary, _, view = tree_outputs(lab, treebank, "dev", index, "sst5", "en", node=2)
    assert nodes["value"] == 2 and (view.split, view.index) == ("dev", index) and summary.startswith("**Node 2**")
    *_, nodes, _, _, _ = tree_outputs(lab, treebank, "dev", index, "sst5", "en", node=len(view.nodes))
    assert nodes["value"] == 0  # past the last node: the root


def test_a_link_names_every_tab_of_the_page_by_its_id(lab):
    page = build_demo(lab, "checkpoints", Settings.load())
    assert tuple(block.id for block in page.blocks.values() if isinstance(block, gr.Tab)) == TABS


NO_TREES_WORDS = [("en-GB", "Treebank is not on this server"), ("zh-CN", "没有斯坦福情感树库")]


@pytest.mark.parametrize("accept, words", NO_TREES_WORDS)
def test_without_trees_the_tab_says_what_is_missing_once_and_switches_the_search_off(
    lab, tmp_path, monkeypatch, accept, words
):
    """No SST trees (an empty DATA_DIR): on opening the tab, one line in the page's language (how the Space's owner
    adds them, no "--data-dir" nor English inside Chinese), and the words box, search and random pick disabled."""
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    page = build_demo(lab, "checkpoints", Settings.load())
    opened = next(f.fn for f in page.fns.values() if f.name == "on_open_tab")
    request = type("Request", (), {"headers": {"accept-language": accept}})()
    filters = ["test", "", "any", "any", 0, 0]  # TreesBox.filters
    # in a context of its own, as Gradio runs an event: the room it sets (demo.svg.ROOM) stays with this call
    answer = contextvars.copy_context().run(opened, request, None, None, None, None, None, *filters, 800)
    problem, *switched, _sentence, _hits = answer[:6]
    assert words in problem and "--data-dir" not in problem and "sst/trees/train.txt" in problem
    assert all(update == {"__type__": "update", "interactive": False} for update in switched)
