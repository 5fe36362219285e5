"""The one serialiser of core's dataclasses (predictions, views, jobs, probe reports), in two forms of one walk:

- `plain(value)`: JSON for people and API clients (the JSON API, the CLI, the exports): a view's Texts as their
  English and each view tagged with its "type" (core.views.VIEWS); Prediction.to_dict adds the notices' words.
- `Wire(*roots)`: the model worker's pipe (service.serving), read back into the very objects: every dataclass
  tagged with its "$type", a Text as its code and parameters (the page words it in its own language), a tuple
  as a tuple. Only the `roots`, the dataclasses their fields' annotations name, and the views are ever built
  from the input: nothing else is constructed.
"""

import functools
import json
import typing
from dataclasses import fields, is_dataclass
from types import UnionType

from core.models import load_cards
from core.views import VIEW_TEXT, VIEWS, Text

TEXT_KEY = "\0text:"  # a dict key that is a Text (JSON keys are strings)
_AS_IS = (int, float, str, bool)  # a list of these is passed on as it is: no deep copy of a vector


@functools.cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    """The fields of dataclass `cls`, in order (None: not a dataclass): read once per class, not per value."""
    return tuple(f.name for f in fields(cls)) if is_dataclass(cls) else None


def _data(value, words: bool):
    """`value` as JSON-ready data; `words`: the form for people (plain), else the wire's (Wire.dumps)."""
    kind: type = type(value)
    if kind in _AS_IS or value is None:  # most of a walk's values (a Text is a str of another type)
        return value
    if isinstance(value, Text):
        return str(value) if words else {"$text": value.code, "params": _data(value.params, words)}
    names = _field_names(kind)  # a dataclass itself (a class) has the type `type`: not one
    if names is not None:
        name = kind.__name__
        tag = ({"type": name} if name in VIEWS else {}) if words else {"$type": name}
        return tag | {n: _data(getattr(value, n), words) for n in names}
    if isinstance(value, dict):  # a Text key as a str (orjson, Gradio's, takes no str subclass as a key)
        return {_key(k, words): _data(v, words) for k, v in value.items()}
    if isinstance(value, tuple):
        items = [_data(v, words) for v in value]
        return tuple(items) if words else {"$tuple": items}
    if isinstance(value, list) and value and type(value[0]) not in _AS_IS:  # lists are homogeneous here
        return [_data(v, words) for v in value]
    return value


def _key(key, words: bool):
    if not isinstance(key, Text):
        return key
    return str(key) if words else TEXT_KEY + json.dumps(_data(key, words))


def plain(value):
    """JSON-ready dicts and lists for people and clients (see the module's doc)."""
    return _data(value, words=True)


def _named(annotation) -> list[type]:
    """The dataclasses a field's annotation names, at any depth (list[X], dict[str, X], X | None, ...)."""
    if is_dataclass(annotation) and isinstance(annotation, type):
        return [annotation]
    if typing.get_origin(annotation) in (typing.Union, UnionType) or typing.get_args(annotation):
        return [cls for arg in typing.get_args(annotation) for cls in _named(arg)]
    return []


class Wire:
    """The pipe protocol of a process that takes and gives `roots` (and what they hold): one JSON line each."""

    def __init__(self, *roots: type):
        self.types: dict[str, type] = dict(VIEWS)  # a prediction's `views` may hold any view
        todo = list(roots)
        while todo:
            cls = todo.pop()
            if cls.__name__ in self.types:
                continue
            self.types[cls.__name__] = cls
            hints = typing.get_type_hints(cls)
            todo += [named for f in fields(cls) for named in _named(hints[f.name])]

    def dumps(self, value) -> str:
        """One line (no newline inside: JSON escapes it)."""
        return json.dumps(_data(value, words=False), ensure_ascii=False)

    def loads(self, line: str):
        return json.loads(line, object_hook=self._rebuilt)

    def _rebuilt(self, data: dict):
        """json.loads' object_hook: a dict of dumps' back into what it stood for (inner dicts come first)."""
        if "$text" in data:
            if data["$text"] not in VIEW_TEXT:  # a model's own code: its card declares it as its module loads
                load_cards()
            return Text(data["$text"], **data["params"])
        if "$tuple" in data:
            return tuple(data["$tuple"])
        items = {
            self.loads(k[len(TEXT_KEY) :]) if k.startswith(TEXT_KEY) else k: v for k, v in data.items() if k != "$type"
        }
        return self.types[data["$type"]](**items) if "$type" in data else items
