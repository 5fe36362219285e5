"""What the page asks for when it opens, in one event. Each event is a round trip through Gradio's queue (a join,
the session's stream, its own process and postprocess): the page's five load events cost about 40 ms of the app's
CPU per page load, and a lecture hall reloads often (docs/performance.md). So a tab adds its part here instead
of registering a load event of its own, and build_demo (demo/ui.py) runs every part in the page's one load event.

    on_page_load(on_labels, [examples.dataset])      # in a tab's build: on_labels(request) -> its update
    parts = page_parts(demo)                          # in build_demo: the parts, their outputs, in order

Gradio postprocesses each output of an event in a worker thread of its own, a hand-off per output (the load
event has 16); the load event is registered with postprocess=False and its handler, in its worker thread already,
returns its values `postprocessed` as Gradio would have.
"""

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
from gradio.blocks import Block
from gradio.context import Context
from gradio.data_classes import GradioModel, GradioRootModel
from gradio.utils import is_prop_update


@dataclass
class PagePart:
    fn: Callable[[gr.Request], Any]  # the outputs' values for this request: one, or a tuple of them
    outputs: list[gr.components.Component]

    def values(self, request: gr.Request) -> tuple:
        value = self.fn(request)
        return value if len(self.outputs) > 1 else (value,)


_PARTS: "weakref.WeakKeyDictionary[gr.Blocks, list[PagePart]]" = weakref.WeakKeyDictionary()


def on_page_load(fn: Callable[[gr.Request], Any], outputs: list) -> None:
    """Run `fn` when the page being built opens (see page_parts): its value(s) go to `outputs`."""
    if Context.root_block is None:
        raise RuntimeError("on_page_load outside a gr.Blocks being built")
    _PARTS.setdefault(Context.root_block, []).append(PagePart(fn, list(outputs)))


def page_parts(demo: gr.Blocks) -> list[PagePart]:
    """The parts the page `demo` asks for when it opens, in the order they were added."""
    return list(_PARTS.get(demo, []))


def postprocessed(outputs: list, values: tuple) -> tuple:
    """`values` for `outputs` as Gradio's postprocess makes them (Blocks.postprocess_data, postprocess_update_dict):
    a component's value postprocessed (a data model as its dump), an update's "value" too (a component returned
    is an update of its arguments), by the page's component where Gradio uses the one the update makes: the page's
    updates change no property a postprocess reads; a State's as it is."""

    def made(block, value):
        if block.stateful:  # Gradio keeps a State's value in the session whatever the event's postprocess
            return value
        if isinstance(value, Block):  # a component returned as an update: its arguments, as Gradio reads it
            value = {**value.constructor_args, "__type__": "update"}
        if is_prop_update(value):
            return {**value, "value": dumped(block.postprocess(value["value"]))} if "value" in value else value
        return dumped(block.postprocess(value))

    return tuple(made(block, value) for block, value in zip(outputs, values, strict=True))


def dumped(value: Any) -> Any:
    return value.model_dump() if isinstance(value, GradioModel | GradioRootModel) else value
