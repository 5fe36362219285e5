"""gr.api with words for the API page: Gradio names each parameter of a gr.api endpoint by its position ("the 1st
Api component") and leaves it undescribed; `endpoint` gives each its name and its line of the function's
docstring (an "Args:" section, the same lines Gradio's MCP server reads), and a parameter whose "..." would
say nothing (an uploaded file) its example."""

import functools
import html
import inspect
import os
from collections.abc import Callable
from typing import Any

import gradio as gr
import orjson
from gradio.components.api_component import Api
from gradio.context import Context
from gradio.utils import get_function_description, get_function_params

from service.jobs import finite_number


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


# what an MCP client must not reach: Gradio runs every MCP client's calls in one shared session, so a tool that
# binds or uses an owner would give one agent another's work (publishing is private already)
OWNER_BOUND_ENDPOINTS = ("owner", "train", "train_status", "train_cancel")


def mcp_enabled() -> bool:
    """Gradio's own switch: GRADIO_MCP_SERVER=true serves the named endpoints as MCP tools (launch's default)."""
    return os.environ.get("GRADIO_MCP_SERVER", "").strip().lower() in ("1", "true", "yes")


def keep_owners_out_of_mcp(demo: gr.Blocks) -> None:
    """With the MCP server on, the owner-bound endpoints are left out of the tools (and of the API page) and stay
    callable by gradio_client, each client its own session: an MCP tool is what Gradio documents, so they become
    undocumented. An MCP client then owns nothing and sees the public models only."""
    if mcp_enabled():
        for fn in demo.fns.values():
            if fn.api_name in OWNER_BOUND_ENDPOINTS:
                fn.api_visibility = "undocumented"


def fill_advertised_defaults(demo: gr.Blocks) -> None:
    """Let a REST call leave out the trailing arguments of /predict and /compare, as /info says it may
    (`{"data": ["good"]}`): Gradio's REST route refuses a call with fewer values than inputs (answering
    `{"error": null}`) while gradio_client fills the defaults in itself. Only endpoints made by gr.api,
    whose inputs are Api components holding the function's defaults, are filled; a missing argument
    without a default is still refused. A value a number component cannot take (a string, NaN) is refused in
    one line naming the parameter, where Gradio's own preprocessing would answer `{"error": null}`."""
    validate = demo.validate_inputs

    def validate_with_defaults(block_fn, inputs: list) -> None:
        missing = block_fn.inputs[len(inputs) :]
        if missing and all(isinstance(c, Api) and c.value is not None for c in missing):
            inputs.extend(c.value for c in missing)  # in place: Gradio goes on with this same list
        validate(block_fn, inputs)
        for i, (component, value) in enumerate(zip(block_fn.inputs, inputs)):
            if is_number(component) and value is not None and not finite_number(value):
                name = _parameter_name(block_fn.fn, i)
                raise gr.Error(
                    f"{name}: a number is needed, got {html.escape(repr(value)[:20], quote=False)} / {name} 须为数字",
                    print_exception=False,
                )

    demo.validate_inputs = validate_with_defaults  # type: ignore[method-assign]  # this app's own, around Gradio's


def is_number(component) -> bool:
    """A number input: a Slider or Number of the page, or a gr.api parameter typed int or float."""
    if isinstance(component, Api):
        return component.api_info().get("type") in ("integer", "number")
    return isinstance(component, (gr.Slider, gr.Number))


def _parameter_name(fn, index: int) -> str:
    """The name of the handler's index-th parameter (what an API caller reads in /info), else its position."""
    try:
        return list(inspect.signature(fn).parameters)[index]
    except (TypeError, ValueError, IndexError):
        return f"input {index + 1}"
