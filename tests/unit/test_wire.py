"""core.wire: one walk for the API's JSON (plain) and the model worker's pipe (Wire); the pipe rebuilds only the
types its roots name through their fields' annotations, and the views."""

import dataclasses
import json

import pytest

from core.models import model_class
from core.predict import ModelJob
from core.views import VIEWS, LineCurves, Text
from core.wire import Wire, plain

model_class("agt")  # its card words the AGT's view codes below, as the model's module does when a checkpoint loads
VIEW = LineCurves(
    Text("agt_gates"), ["2", "3"], {Text("agt_gate_mean"): [0.25, 0.5]}, Text("agt_gate"), y_range=(0.0, 1.0)
)


def test_the_pipe_builds_only_what_its_roots_name():
    wire = Wire(ModelJob)
    # a job's checked text, its tokens and notices, by annotation; every view, which a prediction may hold
    assert {"ModelJob", "CheckedText", "Token", "Notice"} <= set(wire.types) and set(VIEWS) <= set(wire.types)
    assert "Prediction" not in wire.types
    with pytest.raises(KeyError):
        wire.loads('{"$type": "Prediction"}')


def test_a_view_crosses_the_pipe_as_itself_texts_and_tuples_included():
    wire = Wire(ModelJob)
    back = wire.loads(wire.dumps(VIEW))
    assert back == VIEW and back.title.code == "agt_gates" and isinstance(back.y_range, tuple)
    assert [key.code for key in back.curves] == ["agt_gate_mean"]  # a Text key keeps its code


def test_plain_is_the_apis_json_each_view_tagged_with_its_type():
    data = plain(VIEW)
    assert data == {"type": "LineCurves", **dataclasses.asdict(VIEW)}
    assert json.loads(json.dumps(data))["curves"] == {"mean T_l over units": [0.25, 0.5]}  # the English words
