"""REST calls answered beside Gradio's queue (web/rest.py) and the page built once (web/page_cache.py), gzipped for
a browser that accepts it: each gives the bytes Gradio's own path gives, against the app launched as app.py launches
it."""

import json
import uuid

import gradio as gr
import httpx
import orjson
import pytest
from lab_fixture import launch_demo

SENTENCE = "It is not a bad film at all."
CALLS = [
    ("predict", [SENTENCE, "dcnn", "sst5", "auto"]),
    ("predict", [SENTENCE]),  # the advertised defaults filled in
    ("compare", [SENTENCE, "sst5", "auto"]),
    ("predict", ["good", "dcnn", "sst5", "zh"]),  # refused by the handler, in one line
    ("predict", ["", "dcnn", "sst5", "auto"]),  # refused by core
]


@pytest.fixture(scope="module")
def app(lab_root, tmp_path_factory):
    for demo, url in launch_demo(lab_root, tmp_path_factory.mktemp("gradio")):
        yield url, demo


def answer(http: httpx.Client, url: str, api: str, body: dict) -> tuple[int, str]:
    posted = http.post(f"{url}gradio_api/call/{api}", json=body)
    if posted.status_code != 200:
        return posted.status_code, posted.text
    return 200, http.get(f"{url}gradio_api/call/{api}/{posted.json()['event_id']}").text


@pytest.mark.parametrize("api,data", CALLS)
def test_a_call_naming_no_session_answers_as_gradios_queue_does(app, api, data):
    url, demo = app
    with httpx.Client(timeout=60) as http:
        queued = answer(http, url, api, {"data": data, "event_data": None})  # a field it leaves to Gradio's path
        direct = answer(http, url, api, {"data": data})
        named = answer(http, url, api, {"data": data, "session_hash": uuid.uuid4().hex})
    assert direct == queued == named
    assert direct[1].startswith("event: complete" if data[0] and data[-1] != "zh" else "event: error")


def test_the_direct_path_opens_no_gradio_event(app):
    """The call never reaches Gradio's queue: no session is opened for its event id, even while it runs."""
    url, demo = app
    with httpx.Client(timeout=60) as http:
        posted = http.post(f"{url}gradio_api/call/predict", json={"data": [SENTENCE, "dcnn", "sst5", "auto"]})
        event_id = posted.json()["event_id"]
        assert event_id not in demo.server_app.state_holder.session_data
        assert event_id not in demo._queue.event_ids_to_events
        assert "event: complete" in http.get(f"{url}gradio_api/call/predict/{event_id}").text


@pytest.mark.parametrize("body", [{"data": "x"}, {"data": [SENTENCE] * 9}, {"data": []}, {"data": [[[[]]]] * 2}])
def test_what_gradio_refuses_it_still_words(app, body):
    """A body Gradio refuses (not a list, more values than inputs, missing values without defaults) goes to Gradio,
    which answers as before: the same status and words as with a session named."""
    url, _ = app
    with httpx.Client(timeout=60) as http:
        direct = answer(http, url, "predict", body)
        named = answer(http, url, "predict", {**body, "event_data": None})
    assert direct == named and (direct[0] != 200 or direct[1].startswith("event: error"))


@pytest.mark.parametrize("path", ["", "config", "gradio_api/info"])
def test_the_page_is_built_once_per_address(app, path):
    url, _ = app
    with httpx.Client(timeout=60) as http:
        first, again = http.get(f"{url}{path}"), http.get(f"{url}{path}")
        fresh = http.get(f"{url}{path}", params={"fresh": uuid.uuid4().hex})  # a key never seen: Gradio builds it
        proxied = http.get(f"{url}{path}", headers={"x-forwarded-host": "lab.example", "x-forwarded-proto": "https"})
    assert first.status_code == 200 and first.content == again.content == fresh.content
    assert first.headers["content-type"] == again.headers["content-type"]
    if path == "config":  # the page's URLs follow the address it was reached at, kept apart
        assert json.loads(first.content)["root"] == url.rstrip("/")
        assert json.loads(proxied.content)["root"] == "https://lab.example"


@pytest.mark.parametrize("path", ["", "config", "gradio_api/info"])
def test_a_kept_page_goes_gzipped_to_a_browser_that_accepts_it(app, path):
    url, _ = app
    with httpx.Client(timeout=60) as http:
        built = http.get(f"{url}{path}", headers={"accept-encoding": "identity"})
        plain = http.get(f"{url}{path}", headers={"accept-encoding": "identity"})
        packed = http.get(f"{url}{path}", headers={"accept-encoding": "br;q=1.0, gzip;q=0.8"})
        refused = http.get(f"{url}{path}", headers={"accept-encoding": "gzip;q=0, deflate"})
        head = http.head(f"{url}{path}", headers={"accept-encoding": "identity"})
    same = lambda headers: {k: v for k, v in headers.items() if k != "date"}  # but the server's clock
    assert head.status_code == 200 and head.content == b"" and same(head.headers) == same(plain.headers)
    assert "content-encoding" not in plain.headers and "content-encoding" not in refused.headers
    assert packed.headers["content-encoding"] == "gzip" and packed.headers["vary"] == "Accept-Encoding"
    assert int(packed.headers["content-length"]) < len(plain.content) / 3  # the page: ~40 of ~326 KB
    assert built.content == plain.content == packed.content == refused.content  # httpx decodes it


def queued(http: httpx.Client, url: str, api: str, data: list) -> tuple[dict, str, str]:
    """As a browser sends it: join Gradio's queue, read the session's stream; (the completed message, its line,
    the session)."""
    config = http.get(f"{url}config").json()
    fn_index = next(d["id"] for d in config["dependencies"] if d.get("api_name") == api)
    session = uuid.uuid4().hex
    joined = http.post(
        f"{url}gradio_api/queue/join", json={"data": data, "fn_index": fn_index, "session_hash": session}
    )
    assert joined.status_code == 200, joined.text
    with http.stream("GET", f"{url}gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            message = json.loads(line[len("data: ") :]) if line.startswith("data: ") else {}
            if message.get("msg") == "process_completed":
                return message, line, session
    raise AssertionError("no process_completed message")


@pytest.mark.parametrize("api,data", CALLS[:3])
def test_the_queue_gets_the_same_answer_written_once(app, api, data):
    """web/endpoints.py queued_json: an answer to a queued event is its JSON written once (orjson.Fragment); the
    browser's stream carries the same answer as the REST path, and the line is what orjson writes of it."""
    url, demo = app
    with httpx.Client(timeout=60) as http:
        message, line, session = queued(http, url, api, data)
        status, rest = answer(http, url, api, {"data": data})
    assert message["success"] and status == 200
    rest_data = json.loads(rest.split("data: ", 1)[1])
    assert message["output"]["data"] == rest_data
    assert line == "data: " + orjson.dumps(message).decode()  # nothing of Gradio's own walk is missing
    kept = demo.server_app.state_holder.session_data[session].components  # the session's copy of its outputs
    assert any(isinstance(c.get("props", {}).get("value"), orjson.Fragment) for c in kept)


def test_the_apps_routes_check_the_login_on_the_event_loop(app):
    """web/thread_hops.py, through app_kwargs: no worker thread per /queue/join and /queue/data."""
    import inspect

    from web.thread_hops import dependants

    checks = [d.call for d in dependants(app[1].server_app) if "login_check" in getattr(d.call, "__qualname__", "")]
    assert len(checks) > 20 and all(inspect.iscoroutinefunction(c) for c in checks)


def test_only_the_queue_gets_a_fragment():
    from types import SimpleNamespace

    from web.endpoints import queued_json

    def request(path):
        return gr.Request(request=SimpleNamespace(url=SimpleNamespace(path=path)))

    answer_ = {"label": "positive", "probs": [0.1, 0.9]}
    assert isinstance(queued_json(answer_, request("/gradio_api/queue/join")), orjson.Fragment)
    for path in ("/gradio_api/call/predict", "/gradio_api/mcp/messages/", "/gradio_api/run/predict"):
        assert queued_json(answer_, request(path)) is answer_
    assert queued_json(answer_, None) is answer_ and queued_json("key", request("/gradio_api/queue/join")) == "key"
