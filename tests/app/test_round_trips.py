"""How many events (round trips to the server) an action of the page makes: one where its outputs come from the
same inputs (docs/performance.md, "Every tab in a real browser")."""

import asyncio
import json
import os
import urllib.parse

import gradio as gr
import pytest
from gradio.blocks import BlockContext
from gradio.state_holder import SessionState
from starlette.requests import Request

from core.analysis.attribution import METHODS
from core.predict import ALL, AUTO
from demo import build_demo
from demo.attribution_view import faithfulness_hint
from service.settings import Settings


@pytest.fixture(scope="module")
def page(lab):
    return build_demo(lab, "checkpoints", Settings.load())


def _events(page, elem_id: str, event: str) -> list:
    """The server functions `event` of the component `elem_id` starts (not a js-only step)."""
    (block,) = [b for b in page.blocks.values() if getattr(b, "elem_id", None) == elem_id]
    return [f for f in page.fns.values() if (block._id, event) in f.targets and f.fn is not None]


def _ids(blocks) -> set:
    return {getattr(b, "elem_id", None) for b in blocks}


def test_a_dataset_task_switch_is_one_event(page):
    """The task's models in the menu and the first one's view in one event; the menu's own only on a visitor's
    choice (before: the task's change set the menu, drew the view, and the menu's change drew it again)."""
    (switch,) = _events(page, "tb-data-task", "change")
    assert {"tb-data-model", "tb-data-summary", "tb-length", "tb-confusion"} <= _ids(switch.outputs)
    assert _events(page, "tb-data-model", "change") == []
    assert len(_events(page, "tb-data-model", "input")) == 1


def test_a_lab_link_is_filled_and_analysed_in_the_page_load(page):
    """The page's load event fills the Lab's inputs from a link and analyses them and compares the pair (a quick
    method; before: in an event of its own, which the page sent only once it had applied the whole load); a slow
    method's link streams its status in one event after it, with no server event after that one (before that: a
    fill, then a run; then the run filled the inputs, so the model's own change event ran after the result)."""
    (load,) = [f for f in page.fns.values() if any(e == "load" for _, e in f.targets)]
    assert {"sentence", "model", "task", "sentence-b", "summary", "result", "pair-summary"} <= _ids(load.outputs)
    opened = [
        f
        for f in page.fns.values()
        if f.fn is not None and "result" in _ids(f.outputs) and any(e == "change" for _, e in f.targets)
    ]
    assert len(opened) == 1
    (link,) = opened
    assert {"summary", "pair-summary", "pair-figures"} <= _ids(link.outputs) and "sentence" not in _ids(link.outputs)
    then = _followers(page, link)
    assert then and all(f.fn is None for f in then)  # a script in the page only


def _page_load(page, query: dict) -> dict:
    """The page's load event answered for a visitor opening `query`: component elem_id -> its value."""
    (load,) = [f for f in page.fns.values() if any(e == "load" for _, e in f.targets)]
    values = load.fn("", 800, _request(query))
    return dict(zip([getattr(b, "elem_id", None) for b in load.outputs], values, strict=True))


def _request(query: dict, language: str = "en") -> gr.Request:
    """A browser's request for the page at `query`, in `language`."""
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/",
        "query_string": urllib.parse.urlencode(query).encode(),
        "headers": [(b"accept-language", language.encode())],
        "client": ("127.0.0.1", 1),
    }
    return gr.Request(Request(scope), session_hash="round-trips-test")


def test_the_models_and_train_tabs_fill_as_they_open_not_in_every_page_load(page, lab):
    """The Models tab's tables and the Train tab's job box come when their tab opens (its select, which a link's
    gr.Tabs(selected=...) fires too): every page load listed every checkpoint's metrics and every job's file,
    which a lecture hall's loads all waited on (docs/performance.md)."""
    (load,) = [f for f in page.fns.values() if any(e == "load" for _, e in f.targets)]
    assert not _ids(load.outputs) & {"checkpoints", "load-errors", "train-job"}
    opens = [f for f in page.fns.values() if f.fn is not None and any(e == "select" for _, e in f.targets)]
    (models,) = [f for f in opens if _ids(f.outputs) == {"checkpoints", "load-errors"}]
    (train,) = [f for f in opens if _ids(f.outputs) == {"train-job"}]
    loaded, failed = models.fn(_request({}, "zh-CN"))
    assert loaded["headers"][:2] == ["任务", "模型"] and len(loaded["data"]) == len(lab.checkpoints)
    assert failed["data"] == []
    assert train.fn(_request({}))["choices"] == []  # a new visitor has no job


def test_a_page_load_reads_no_checkpoints_files_but_their_measures(page, lab, monkeypatch):
    """What a page load asks of the disk, once its answers are kept: at most one stat per checkpoint (its
    attribution.json, read again only once it changes), for the method hint of every model and task; the
    weights' digest is the one load_checkpoint verified (before: 40 stats per load, each a wait for the GIL among
    a hall's loads)."""
    _page_load(page, {})
    stats = []
    real = os.stat
    monkeypatch.setattr(
        os, "stat", lambda path, *args, **kwargs: stats.append(str(path)) or real(path, *args, **kwargs)
    )
    _page_load(page, {})
    assert len(stats) <= len(lab.checkpoints) and all(path.endswith("attribution.json") for path in stats)


def test_a_lab_links_page_sends_nothing_after_its_load(page, lab, measured):
    """The method hint for the model and task a link names comes in the page's load event, and the menus' change
    starts no server event (before: the hint's own event on the model's and task's change, which the load's
    values started: a round trip after the link's result, the page's last change); the hint follows the
    visitor's choice in the menus and another tab opening the Lab (a probe failure: its model and task)."""
    for menu in ("model", "task"):
        assert _events(page, menu, "change") == []
        assert any("attr-hint" in _ids(f.outputs) for f in _events(page, menu, "select"))
    entry = {"sentences": 7, "aopc": dict.fromkeys(METHODS, 0.2), "random": 0.01}
    for model in lab.models("sst5"):  # a hint per model: the page's default (every model) differs from one's
        measured("sst5", model, entry)
    linked = _page_load(page, {"text": "It is not a bad film at all.", "model": "dcnn", "task": "sst5"})
    assert linked["attr-hint"] == faithfulness_hint(lab, "dcnn", "sst5", "en")
    assert _page_load(page, {})["attr-hint"] == faithfulness_hint(lab, ALL, AUTO, "en") != linked["attr-hint"]
    (opened,) = _events(page, "probe-open", "click")
    assert "attr-hint" in _ids(opened.outputs)


@pytest.mark.parametrize(
    "elem_id, event",
    [("probe-open", "click"), ("tb-open-node", "click"), ("tb-open-sentence", "click"), ("tb-tree", "select")],
)
def test_another_tab_opens_and_analyses_in_the_lab_in_one_event(page, elem_id, event):
    """A probe failure, a treebank node (its Open button or a click on the tree) or test sentence: the Lab tab, its
    inputs, the method hint, the analysis and the pair's comparison in one event, with no server event chained after
    it (before: the open, then the analysis and the hint, then the pair, each a round trip after the last)."""
    (opened,) = _events(page, elem_id, event)
    lab = {"sentence", "model", "task", "sentence-b", "pair", "attr-hint", "summary", "result", "pair-summary"}
    assert lab <= _ids(opened.outputs) and any(isinstance(b, gr.Tabs) for b in opened.outputs)
    assert all(f.fn is None for f in _followers(page, opened))


def test_an_intervention_chosen_sets_its_index_box_and_analyses_in_one_event(page):
    """A choice in the intervention menu: the index box and the analysis in one event, on the choice itself
    (`select`, once); the menus' events not on `input`, which Gradio 6.31's dropdown sends twice per choice (before:
    the box's event twice, and the analysis sent by the page only after the box's had come back)."""
    (chosen,) = _events(page, "intervention", "select")
    assert {"intervention-index", "summary", "result"} <= _ids(chosen.outputs)
    assert _events(page, "intervention", "input") == []
    for menu in ("model", "task"):
        assert all("intervention" not in _ids(f.outputs) for f in _events(page, menu, "input"))
        (offers,) = _events(page, menu, "select")
        assert "intervention" in _ids(offers.outputs)


@pytest.mark.parametrize(
    "elem_id, event, intervention", [("run", "click", "none"), ("intervention", "select", "max_pool")]
)
def test_a_lab_analysis_sends_its_result_once(page, elem_id, event, intervention):
    """An analysis event's chunks as Gradio's queue sends them (process_api with a session and an event id, until
    the generator ends): the result HTML in one chunk; the last, which Gradio sends again as the event's end, a few
    bytes (before: the result again, an intervention's 133 KB twice on the page's stream)."""
    (fn,) = _events(page, elem_id, event)
    asked = ["It is not a bad film at all.", "dcnn", "sst5", "auto", "occlusion", intervention, 1, 800]
    state, chunks, iterator = SessionState(page), [], None

    async def sent():
        nonlocal iterator
        while True:
            out = await page.process_api(fn, asked, state, None, iterator, session_hash="s", event_id="e")
            chunks.append(json.dumps(out["data"], default=str))
            iterator = out["iterator"]
            if not out["is_generating"]:
                return

    asyncio.run(sent())
    assert sum("<svg" in chunk for chunk in chunks) == 1 and len(chunks[-1]) < 1000


def test_a_probe_cell_shows_its_failures_in_one_event(page):
    """A cell of the pass-rate table chooses its capability and model and sends their failures in the same event;
    the choosers' own event only on a visitor's choice (before: a run, a link or a cell set both choosers, and the
    change of each sent the cell's failures again: two more events after the one that had sent them)."""
    (cell,) = _events(page, "probe-table", "select")
    assert {"probe-capability", "probe-model", "probe-cell", "probe-failures", "probe-failure"} <= _ids(cell.outputs)
    for chooser in ("probe-capability", "probe-model"):
        assert _events(page, chooser, "change") == []
        assert len(_events(page, chooser, "input")) == 1


TREE = {"tb-tree-summary", "tb-tree", "tb-nodes", "tb-node", "tb-node-attr-summary", "tb-node-attr"}


def _followers(page, fn) -> list:
    """The events chained after `fn` (.then, .success)."""
    return [f for f in page.fns.values() if f.trigger_after == fn._id]


@pytest.mark.parametrize(
    "elem_id, event", [("tb-sentence", "select"), ("tb-task", "select"), ("tb-search", "click"), ("tb-random", "click")]
)
def test_a_treebank_pick_draws_the_tree_and_its_node_panel_in_one_event(page, elem_id, event):
    """A sentence picked by hand, a task, a search or a random pick: the tree and its root's node panel in the same
    event, none chained after it (before: the search set the picker, whose change drew the tree, and the node panel
    followed in a third event)."""
    (pick,) = _events(page, elem_id, event)
    assert TREE <= _ids(pick.outputs) and _followers(page, pick) == []
    for menu in ("tb-sentence", "tb-task"):  # set by those events: no second event; .input fires twice per choice
        assert _events(page, menu, "change") == _events(page, menu, "input") == []


def test_the_treebank_tabs_first_visit_draws_the_first_tree_in_its_own_event(page):
    (opened,) = [f for f in page.fns.values() if f.name == "on_open_tab"]
    assert TREE | {"tb-sentence", "tb-data-summary"} <= _ids(opened.outputs) and _followers(page, opened) == []


@pytest.mark.parametrize(
    "elem_id, event",
    [
        ("tb-sentence", "select"),
        ("tb-search", "click"),
        ("tb-random", "click"),
        ("tb-node", "input"),
        ("tb-nodes", "select"),
    ],
)
def test_a_treebank_event_shows_its_progress_off_the_tables(page, elem_id, event):
    """Progress on the figure or line the event changes, not on every output: on the node tables too it cost the
    browser most of a search that found nothing (docs/performance.md, "Treebank under half a second")."""
    (fn,) = _events(page, elem_id, event)
    assert fn.show_progress_on and not _ids(fn.show_progress_on) & {"tb-nodes", "tb-node-attr"}


def _progress_targets(fn) -> list:
    """What Gradio's page gives an event's status to (its show_progress_on, else every output)."""
    return list(fn.show_progress_on or fn.outputs)


def test_the_page_load_and_treebank_events_show_progress_on_no_layout_nor_the_picker(page):
    """Gradio 6.31's page copies every component an event's status ever went to (its props, a block's whole
    subtree) at each status of every later event: the page's load event gave its status to gr.Tabs, so a Treebank
    pick copied the whole page four times, the picker's 500 sentences among it (docs/performance.md, "Treebank's
    last three actions"). The load's status goes to one hidden box, and no Treebank event's to a layout block or
    the picker."""
    (load,) = [f for f in page.fns.values() if any(e == "load" for _, e in f.targets)]
    assert _ids(_progress_targets(load)) == {"owner-key"}
    treebank = [
        f
        for f in page.fns.values()
        if f.fn is not None and any(str(getattr(b, "elem_id", "")).startswith("tb-") for b in f.outputs)
    ]
    assert len(treebank) >= 10  # the picks, the search, the node, the dataset, the first visit, the link, the Opens
    for fn in treebank:
        targets = _progress_targets(fn)
        assert not [b for b in targets if isinstance(b, BlockContext) and b.children], fn.name  # gr.HTML is one
        assert "tb-sentence" not in _ids(targets), fn.name


def test_no_event_of_the_page_shows_progress_on_a_layout_block(page):
    """The same for every tab's events: a status given to a row or to gr.Tabs once made every later event of the
    page copy that block's whole subtree (the Probes tab's Open: the whole page; the Lab's menus: a row)."""
    on_layout = [
        fn.name
        for fn in page.fns.values()
        if fn.fn is not None and [b for b in _progress_targets(fn) if isinstance(b, BlockContext) and b.children]
    ]
    assert not on_layout
