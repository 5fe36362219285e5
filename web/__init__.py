"""The web server adapter: the one package that knows Gradio's server. It serves the page that demo/ builds:
the model lanes and their worker (runner), the REST calls and fair shares (rest, fair_queue), per-visitor state
and its bounds (sessions, memory, limits, page_cache, page_load), the owners of private work (owners) and the
training queues (training, training_ray). Every use of a Gradio internal lives here."""

import web.gradio_import  # noqa: F401  (before gradio: its import without the type-stub writer)
from web.limits import app_kwargs
from web.memory import bound_malloc
from web.runner import handler_threads, queued, warm_up

__all__ = ["app_kwargs", "bound_malloc", "handler_threads", "queued", "warm_up"]
