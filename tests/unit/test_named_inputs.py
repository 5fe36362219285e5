"""demo/tabs/named.py: an event's inputs named once, as a dataclass's fields, and built back by name."""

from types import SimpleNamespace

import pytest

from demo.tabs.named import components, named
from service.jobs import TrainRequest


def test_the_components_follow_the_fields_and_come_back_by_name():
    page = SimpleNamespace(
        vectors="v", minutes="m", epochs="e", label_column="l", text_column="t", model="M", file="f", start="s"
    )
    assert components(TrainRequest, page) == ["f", "M", "t", "l", "e", "m", "v"]
    asked = named(TrainRequest, ["data.csv", "dcnn", "review", "stars", 2, 1.5, "auto"])
    assert asked == TrainRequest(
        file="data.csv", model="dcnn", text_column="review", label_column="stars", epochs=2, minutes=1.5, vectors="auto"
    )


def test_another_number_of_values_is_refused():
    with pytest.raises(ValueError):
        named(TrainRequest, ["data.csv", "dcnn"])
    with pytest.raises(AttributeError):
        components(TrainRequest, SimpleNamespace(file="f"))
