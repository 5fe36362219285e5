"""Gradio's login check without a thread hand-off. Gradio guards its routes (/queue/join, /queue/data, /info,
/upload, ...) with `login_check`, a plain `def` FastAPI dependency, and FastAPI runs every plain dependency in a
worker thread: two hand-offs per request a page sends through the queue (its join and its stream), each waking a
thread and passing the GIL to it and back, for a check that only compares the request's user to None. `lifespan`
(app_kwargs: before the app serves) swaps it, on every route, for an async function that calls Gradio's own
check on the event loop: the same check, the same answers (docs/performance.md, "The hall, round five").

Gradio's queue, after every event, also hands its analytics summary to a worker thread (`run_sync`), though all
but one call in GRADIO_ANALYTICS_CACHE_FREQUENCY (app.py: 1,000) return the summary it keeps without computing
anything: `analytics_on_loop` returns that kept summary on the loop and leaves the thread to the call that
recomputes it (pandas)."""

import inspect
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import gradio.queueing

LOGIN_CHECK = "App.create_app.<locals>.login_check"  # gradio.routes: the function FastAPI is given


def on_loop(check: Callable[[Any], Any]) -> Callable:
    """Gradio's `check(user)` as a coroutine function: FastAPI awaits it instead of sending it to a thread."""

    async def login_check(user=None):  # the parameter FastAPI fills from the check's own sub-dependency
        return check(user)

    return login_check


def dependants(app) -> Iterator[Any]:
    """Every dependency of every route of `app` (FastAPI's Dependant objects), the routes of included routers
    too, as FastAPI resolves them per request."""
    routes = list(app.router.routes)
    while routes:
        route = routes.pop()
        # an included router (Gradio's /gradio_api one) builds its routes' dependants on first use (FastAPI 0.165):
        # built here, once; routes added later would get Gradio's plain check back (slower, not wrong)
        if hasattr(route, "effective_candidates"):
            routes += route.effective_candidates()
        todo = [d] if (d := getattr(route, "dependant", None)) is not None else []
        while todo:
            dependant = todo.pop()
            todo += dependant.dependencies
            yield dependant


def inline_login_check(app) -> int:
    """Gradio's login check on `app`'s routes run on the event loop; how many dependencies were swapped."""
    swapped: dict[Callable, Callable] = {}  # Gradio's check -> its coroutine (one per app)
    count = 0
    for dependant in dependants(app):
        call = dependant.call
        if getattr(call, "__qualname__", "") == LOGIN_CHECK and not inspect.iscoroutinefunction(call):
            dependant.call = swapped.setdefault(call, on_loop(call))
            count += 1
    return count


@asynccontextmanager
async def lifespan(app):
    """FastAPI's lifespan (app_kwargs): Gradio has built its routes, no request has come yet."""
    inline_login_check(app)
    yield


def analytics_on_loop() -> None:
    """Gradio's queue's analytics hand-off (its module's `run_sync`) skipped where the summary is the one kept:
    what Queue.compute_analytics_summary would return, without a thread. Once per process."""
    threaded = gradio.queueing.run_sync
    if getattr(threaded, "kept_on_loop", False):
        return

    async def run_sync(fn, *args, **kwargs):
        queue = getattr(fn, "__self__", None)
        if (
            getattr(fn, "__func__", None) is gradio.queueing.Queue.compute_analytics_summary
            and queue.events_recorded - queue.event_count_at_last_cache < queue.ANAYLTICS_CACHE_FREQUENCY
        ):
            return queue.cached_event_analytics_summary
        return await threaded(fn, *args, **kwargs)

    run_sync.kept_on_loop = True  # type: ignore[attr-defined]
    gradio.queueing.run_sync = run_sync  # type: ignore[assignment]  # anyio's call, as the queue makes it
