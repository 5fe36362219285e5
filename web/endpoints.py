"""gr.api with words for the API page: Gradio names each parameter of a gr.api endpoint by its position ("the 1st
Api component") and leaves it undescribed; `endpoint` gives each its name and its line of the function's
docstring (an "Args:" section, the same lines Gradio's MCP server reads), and a parameter whose "..." would
say nothing (an uploaded file) its example."""

import functools
from collections.abc import Callable
from typing import Any

import gradio as gr
import orjson
from gradio.components.api_component import Api
from gradio.context import Context
from gradio.utils import get_function_description, get_function_params


def endpoint(fn: Callable, examples: dict[str, Any] | None = None, **kwargs) -> None:
    """gr.api(fn, **kwargs), each parameter on the API page as `fn` names it, described by its Args line, with
    `examples` (parameter name -> value) in the page's code snippets instead of Gradio's "...", and its answers
    to the queue written once (`queued_json`)."""

    @functools.wraps(fn)  # gr.api reads the parameters, their types and the docstring through __wrapped__
    def answered(*args, **kw):
        request = next((a for a in (*args, *kw.values()) if isinstance(a, gr.Request)), None)
        return queued_json(fn(*args, **kw), request)

    registered = gr.api(answered, **kwargs)
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


def queued_json(answer: Any, request: gr.Request | None) -> Any:
    """A dict or list answer to an event joined through Gradio's queue (a browser, gradio_client), as its JSON
    written once: an orjson.Fragment is one leaf to Gradio's walks of every answer (files, root URLs, its messages'
    model_dump: ~2 ms of the app's GIL per /predict, ~6 per /compare; docs/performance.md), and the queue's stream
    (orjson) copies it as is, the same bytes. Every other route (Gradio's /call stream writes with the standard
    json, the MCP server, web/rest.py) gets the answer itself. A hand-made client that joins through /queue/join
    but reads through GET /call/<api>/<event_id> gets its stream cut (Gradio's clients never mix the two)."""
    route = getattr(getattr(request, "request", None), "url", None)
    if isinstance(answer, dict | list) and route is not None and route.path.endswith("/queue/join"):
        return orjson.Fragment(orjson.dumps(answer))
    return answer
