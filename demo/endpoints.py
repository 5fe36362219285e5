"""gr.api with words for the API page: Gradio names each parameter of a gr.api endpoint by its position ("the 1st
Api component") and leaves it undescribed; `endpoint` gives each its name and its line of the function's
docstring (an "Args:" section, the same lines Gradio's MCP server reads), and a parameter whose "..." would
say nothing (an uploaded file) its example."""

from collections.abc import Callable
from typing import Any

import gradio as gr
from gradio.components.api_component import Api
from gradio.context import Context
from gradio.utils import get_function_description, get_function_params


def endpoint(fn: Callable, examples: dict[str, Any] | None = None, **kwargs) -> None:
    """gr.api(fn, **kwargs), each parameter on the API page as `fn` names it, described by its Args line, with
    `examples` (parameter name -> value) in the page's code snippets instead of Gradio's "..."."""
    registered = gr.api(fn, **kwargs)
    _, described, _ = get_function_description(fn)
    names = [name for name, *_ in get_function_params(fn)]  # the request is no parameter of the endpoint
    missing = [name for name in names if not described.get(name)]
    if missing:  # an endpoint's parameter nobody can read about is a bug of its docstring
        raise ValueError(f"{fn.__name__}: no Args line for {', '.join(missing)}")
    if unknown := set(examples or {}) - set(names):
        raise ValueError(f"{fn.__name__}: an example for no parameter: {', '.join(sorted(unknown))}")
    blocks = Context.root_block.blocks if Context.root_block else {}  # gr.api inside gr.Blocks: its Api inputs
    for name, block in zip(names, (blocks[i] for i in registered["inputs"])):
        if not isinstance(block, Api):
            raise TypeError(f"{fn.__name__}: input {name} is a {type(block).__name__}, not gr.api's Api")
        block.label = name
        block._api_info = {**block._api_info, "additional_description": described[name]}
        if examples and name in examples:  # the API page's snippets read example_inputs(), i.e. example_payload()
            block.example_payload = constant(examples[name])  # type: ignore[method-assign]


def constant(value: Any) -> Callable[[], Any]:
    """A function that returns `value`: an example in place of a component's own `example_payload`."""
    return lambda: value
