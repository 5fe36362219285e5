"""Links to the page's state (demo/links.py): every piece of state survives state_to_query -> query_to_state,
defaults stay out of the link, and a hostile or stale value falls back to its default, never an error."""

import urllib.parse
from dataclasses import fields, replace

import pytest

from core.text import MAX_CHARS
from demo.links import MAX_NAME, LinkState, query_to_state, state_to_query

SUITES = ["en", "zh"]
# every field away from its default: a DCNN analysis with a map, an intervention and a pair, a tree node, a cell
FULL = LinkState(
    tab="treebank",
    text="It's not a bad film & the plot? 100% dull.",
    b="It's a bad film.",
    model="dcnn",
    task="sst5",
    lang="en",
    method="integrated_gradients",
    intervention="map_off",
    index=2,
    map=3,
    split="dev",
    sentence=12,
    node=4,
    suite="en",
    capability="negation",
)


def reopened(state: LinkState, lab) -> LinkState:
    """The state a browser gets back: the query parsed as Starlette parses it (the last value of a key wins)."""
    return query_to_state(dict(urllib.parse.parse_qsl(state_to_query(state))), lab, SUITES)


def test_every_piece_of_state_round_trips_together(lab):
    assert reopened(FULL, lab) == FULL


@pytest.mark.parametrize("name", [f.name for f in fields(LinkState)])
def test_each_piece_of_state_round_trips_alone_and_only_it_is_written(lab, name):
    alone = LinkState(**{name: getattr(FULL, name)})
    if name in ("intervention", "index"):  # an intervention (and its index) belongs to the chosen model
        alone = replace(alone, model="dcnn", intervention="map_off")
    assert reopened(alone, lab) == alone
    written = dict(urllib.parse.parse_qsl(state_to_query(alone)))
    assert name in written and set(written) <= {name, "model", "intervention"}


def test_defaults_stay_out_of_the_link_and_parameters_read_as_written():
    assert state_to_query(LinkState()) == ""
    assert state_to_query(LinkState("treebank", split="test", sentence=12, node=3)) == (
        "tab=treebank&split=test&sentence=12&node=3"
    )
    assert state_to_query(LinkState(text="A good film.", model="dcnn", method="smoothgrad", map=0)) == (
        "text=A+good+film.&model=dcnn&method=smoothgrad&map=0"
    )


def test_an_empty_query_is_the_default_state(lab):
    assert query_to_state({}, lab, SUITES) == LinkState()


@pytest.mark.parametrize(
    "query",
    [
        {"tab": "admin"},
        {"tab": "Lab"},
        {"model": "gpt"},
        {"model": "all models"},
        {"task": "sst9"},
        {"lang": "fr"},
        {"method": "attention"},
        {"method": "<script>"},
        {"split": "train"},
        {"suite": "../../etc/passwd"},
        {"intervention": "map_off"},  # all five models: no intervention
        {"model": "mrnn", "intervention": "map_off"},  # not one of the mRNN's
    ],
)
def test_an_unknown_name_is_left_at_its_default(lab, query):
    state = query_to_state(query, lab, SUITES)
    name = "intervention" if "intervention" in query else next(iter(query))
    assert getattr(state, name) == getattr(LinkState(), name)


@pytest.mark.parametrize("value", ["-1", "1e3", "3.0", " 12", "12abc", "0x1f", "٣", "9" * 20, "", "\x00"])
@pytest.mark.parametrize("name", ["map", "sentence", "node"])
def test_a_number_that_is_not_plain_digits_is_dropped(lab, name, value):
    assert getattr(query_to_state({name: value}, lab, SUITES), name) is None


def test_values_that_are_not_strings_are_ignored(lab):
    hostile = {name: ["dcnn"] for name in ("tab", "text", "model", "method", "map", "capability")}
    assert query_to_state(hostile, lab, SUITES) == LinkState()


def test_texts_are_cut_like_typed_ones(lab):
    state = query_to_state({"text": "good " * MAX_CHARS, "b": "bad " * MAX_CHARS, "capability": "x" * 10_000}, lab)
    assert len(state.text) == len(state.b) == MAX_CHARS and len(state.capability) == MAX_NAME


def test_an_intervention_keeps_its_index_only_where_it_takes_one(lab):
    query = {"text": "a good film", "model": "dcnn", "intervention": "map_off", "index": "1"}
    assert query_to_state(query, lab, SUITES).index == 1
    assert query_to_state({**query, "intervention": "max_pool"}, lab, SUITES).index is None
    assert query_to_state({**query, "index": "9" * 20}, lab, SUITES).index is None
    state = query_to_state({**query, "model": "mrnn"}, lab, SUITES)
    assert (state.intervention, state.index) == ("none", None)


def test_the_shipped_suites_are_what_a_link_may_name(lab):
    assert query_to_state({"tab": "probes", "suite": "en"}, lab).suite == "en"
    assert query_to_state({"tab": "probes", "suite": "nope"}, lab).suite == ""


def test_a_tab_fills_only_from_a_link_that_names_something_for_it():
    assert not any(LinkState().fills(tab) for tab in ("lab", "probes", "treebank", "train"))
    assert LinkState(text="good").fills("lab") and not LinkState(text="good").fills("probes")
    assert LinkState("treebank").fills("treebank") and not LinkState("probes").fills("probes")  # no suite to run
    assert LinkState("probes", suite="en").fills("probes") and not LinkState("treebank", suite="en").fills("probes")
