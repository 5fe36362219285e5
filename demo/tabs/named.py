"""An event's inputs by name. Gradio passes an event's input values positionally, in the order of its list of
components; a tab names them here, once: the components named as a dataclass's fields (`components`), and that
dataclass built back from the values Gradio passes for them (`named`). Every tab's Page names its components as
the fields it sends (the Lab's Ask, the Train tab's TrainRequest), so no list order is written twice."""

from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Named = TypeVar("Named", bound="DataclassInstance")


def components(kind: "type[DataclassInstance]", page: object) -> list:
    """The components of `page` (a tab's Page) named as `kind`'s fields, in their order: an event's inputs."""
    return [getattr(page, field.name) for field in fields(kind)]


def named(kind: type[Named], values: Sequence[Any]) -> Named:
    """`kind` from the values Gradio passed for `components(kind, page)`, in the same order (ValueError for
    another number of values)."""
    return kind(**dict(zip((field.name for field in fields(kind)), values, strict=True)))
