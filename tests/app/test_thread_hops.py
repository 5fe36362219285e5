"""Gradio's login check on the event loop (web/thread_hops.py): no worker thread per request the page sends
through the queue, and the same check, the same answers, with a Gradio login as without one."""

import inspect

import gradio as gr
import httpx
import pytest
from lab_fixture import launched

import web.thread_hops as hops


def login_checks(server) -> list:
    return [d.call for d in hops.dependants(server) if "login_check" in getattr(d.call, "__qualname__", "")]


@pytest.fixture(params=[None, ("teacher", "secret")], ids=["no login", "a Gradio login"])
def app(request):
    with gr.Blocks() as blocks:
        text = gr.Textbox()
        text.submit(lambda value: value.upper(), text, text, api_name="shout")
    blocks.queue()
    url = launched(blocks, quiet=True, auth=request.param, app_kwargs={"lifespan": hops.lifespan})
    yield blocks, url, request.param
    blocks.close()


def test_every_route_checks_the_login_on_the_event_loop(app, monkeypatch):
    blocks, url, auth = app
    checks = login_checks(blocks.server_app)
    assert len(checks) > 20 and all(inspect.iscoroutinefunction(c) for c in checks)
    handed = []
    monkeypatch.setattr(hops, "on_loop", lambda check: handed.append(check))  # swapped once: none is left
    assert hops.inline_login_check(blocks.server_app) == 0 and not handed
    with httpx.Client(timeout=30) as http:
        refused = http.get(f"{url}gradio_api/info")
        if auth:  # Gradio's own check still refuses a visitor who has not logged in, in its own words
            assert refused.status_code == 401 and refused.json()["detail"]["error"] == "Not authenticated"
            assert http.post(f"{url}login", data={"username": auth[0], "password": auth[1]}).status_code == 200
        joined = http.post(f"{url}gradio_api/queue/join", json={"data": ["hi"], "fn_index": 0, "session_hash": "s1"})
        assert joined.status_code == 200, joined.text
        stream = http.get(f"{url}gradio_api/queue/data", params={"session_hash": "s1"})
        assert stream.status_code == 200 and '"HI"' in stream.text


def test_the_queues_kept_analytics_summary_comes_without_a_thread(monkeypatch):
    """analytics_on_loop: Gradio's summary as Queue.compute_analytics_summary gives it, a thread only for the call
    that recomputes it."""
    import asyncio

    import gradio.queueing

    threaded = []

    async def in_a_thread(fn, *args, **kwargs):
        threaded.append(fn)
        return fn(*args)

    monkeypatch.setattr(gradio.queueing, "run_sync", in_a_thread)
    hops.analytics_on_loop()
    wrapped = gradio.queueing.run_sync
    hops.analytics_on_loop()
    assert gradio.queueing.run_sync is wrapped  # once per process
    with gr.Blocks() as blocks:
        gr.Textbox()
    queue = gradio.queueing.Queue(False, 1, 1.0, None, blocks)
    queue.ANAYLTICS_CACHE_FREQUENCY = 3
    records = [{"function": "shout", "status": "success", "process_time": 0.1}]
    summaries = []
    for _ in range(7):
        queue.events_recorded += 1
        summaries.append(asyncio.run(gradio.queueing.run_sync(queue.compute_analytics_summary, records)))
    assert len(threaded) == 2  # the 3rd and the 6th event recompute it
    assert summaries[-1] == queue.compute_analytics_summary(records) and summaries[0] == {"functions": {}}
    assert asyncio.run(gradio.queueing.run_sync(len, records)) == 1 and threaded[-1] is len  # anything else: a thread
