"""tools.bench.redteam_content reads an event's stream as the page does: a generator's chunks after its first are
diffs (Gradio's utils.diff), applied as Gradio's own client applies them (gradio_client.utils.apply_diff)."""

import pytest
from gradio.utils import diff
from gradio_client.utils import apply_diff

from tools.bench.redteam_content import _applied, _unchanged

CHUNKS = [
    {"__type__": "update", "value": "<p>first</p>", "visible": True},
    {"__type__": "update"},
    "### a summary",
    ["a", "b", {"x": 1}],
    ["a", {"x": 2, "y": [1, 2]}],
    {"props": {"__type__": "update"}, "__type__": "update"},
    {"value": "second", "choices": [["one", 1], ["two", 2]]},
]


@pytest.mark.parametrize("old", CHUNKS)
@pytest.mark.parametrize("new", CHUNKS)
def test_a_diff_applied_gives_what_gradio_s_client_gives(old, new):
    edits = diff(old, new)
    assert _applied(old, edits) == apply_diff(old, edits) == new


def test_an_update_without_a_value_leaves_the_output_as_shown():
    assert _unchanged({"__type__": "update"}) and _unchanged({"props": {"__type__": "update"}, "__type__": "update"})
    assert not _unchanged({"__type__": "update", "value": ""}) and not _unchanged("text")
