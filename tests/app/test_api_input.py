"""The hostile-input table of tests/unit/test_predict_input.py through the Gradio API of the launched app (issue 13).

gradio_client for everything JSON can carry; raw HTTP for what gradio_client cannot send (lone surrogates,
malformed requests). Every case gets a prediction or a one-line error, and the server keeps answering.
tests/browser/test_e2e_payloads.py types payloads into the page.
"""

import json
import ssl
import time

import httpx
import pytest
from gradio_client.exceptions import AppError
from lab_fixture import launch_demo
from test_predict_input import BAD_NAMES, SECONDS, SURROGATE, check_message, check_prediction, params

from core.models import PAPER_MODELS
from core.text import MAX_CHARS
from tools.bench.loadtest import app_client
from web.limits import MAX_BODY_BYTES

# one SSL context for every request (an httpx.post or a gradio_client call builds one each time otherwise: ~70 ms
# of CPU, a few hundred times in this module)
CONTEXT = ssl.create_default_context()


@pytest.fixture(scope="module")
def app(lab_root, tmp_path_factory):
    """(url, client) of the app built as app.py builds it, on a free port of 127.0.0.1."""
    for _, url in launch_demo(lab_root, tmp_path_factory.mktemp("gradio")):
        client = app_client(url, CONTEXT)
        yield url, client
        client.close()


def raw_call(url: str, endpoint: str, body: bytes) -> tuple[int, str, object]:
    """POST a request body as is to /gradio_api/call/<endpoint>; (HTTP status, SSE event, its data)."""
    posted = httpx.post(
        f"{url}gradio_api/call/{endpoint}",
        content=body,
        headers={"content-type": "application/json"},
        timeout=SECONDS,
        verify=CONTEXT,
    )
    if posted.status_code != 200:
        return posted.status_code, "", posted.text
    answer = httpx.get(f"{url}gradio_api/call/{endpoint}/{posted.json()['event_id']}", timeout=SECONDS, verify=CONTEXT)
    event, data = "", None
    for line in answer.text.splitlines():
        if line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and event in ("complete", "error"):
            data = json.loads(line.split(":", 1)[1])
    return answer.status_code, event, data


def call(url: str, client, text, *args, api_name: str):
    """The answer of the app: a list of prediction dicts, or AppError. Texts that JSON cannot carry as UTF-8
    (lone surrogates) go as \\u escapes over raw HTTP, which is what a non-Python client would send."""
    if isinstance(text, str) and SURROGATE.search(text):
        body = json.dumps({"data": [text, *args]}, ensure_ascii=True).encode("ascii")
        status, event, data = raw_call(url, api_name.strip("/"), body)
        assert status == 200 and event in ("complete", "error"), (status, event, data)
        if event == "error":
            raise AppError((data or {}).get("error") or "")
        result = data[0]
    else:
        result = client.predict(text, *args, api_name=api_name)
    return result if isinstance(result, list) else [result]


@pytest.mark.parametrize("case", params())
def test_gradio_api(app, case):
    url, client = app
    start = time.perf_counter()
    if len(json.dumps(case.text)) > MAX_BODY_BYTES:  # the body limit answers before the app reads it
        with pytest.raises(httpx.HTTPStatusError, match="413"):
            client.predict(case.text, "dcnn", "auto", "auto", api_name="/predict")
        return
    # /compare runs every model; errors and texts past the character cap go to one model (the Python API
    # test runs those through every model)
    one = case.error or len(case.text) > MAX_CHARS
    args, api_name = (
        ((case.text, "dcnn", "auto", "auto"), "/predict") if one else ((case.text, "auto", "auto"), "/compare")
    )
    try:
        predictions = call(url, client, *args, api_name=api_name)
    except AppError as err:
        assert case.error or case.either, f"unexpected error: {err}"
        check_message(str(err), case.error or ".")
        assert "internal error" not in str(err)
        return
    assert not case.error, f"expected an error matching {case.error!r}"
    assert one or [p["model"] for p in predictions] == PAPER_MODELS
    for p in predictions:
        check_prediction(p, case.text, case)
    assert time.perf_counter() - start < SECONDS


@pytest.mark.parametrize(
    "value", [None, 42, 3.5, 1e308, True, ["good", "film"], {"text": "good"}], ids=lambda v: type(v).__name__
)
def test_non_string_json_values(app, value):
    _, client = app
    for args, api_name in (((value, "dcnn", "auto", "auto"), "/predict"), ((value, "auto", "auto"), "/compare")):
        with pytest.raises(AppError) as info:
            client.predict(*args, api_name=api_name)
        check_message(str(info.value), "string|empty|text")


@pytest.mark.parametrize(
    "model,task,lang,error", BAD_NAMES + [(["dcnn"], None, None, "."), ({"m": 1}, None, None, ".")]
)
def test_unknown_or_malicious_names(app, model, task, lang, error):
    url, client = app
    args = [model, "auto" if task is None else task, "auto" if lang is None else lang]
    with pytest.raises(AppError) as info:
        client.predict("a good film", *args, api_name="/predict")
    check_message(str(info.value), error if isinstance(model, str) else ".")


@pytest.mark.parametrize(
    "body",
    [
        b'{"data": ["good film", "dcnn"]}',  # too few values
        b'{"data": ["good film", "dcnn", "auto", "auto", "extra"]}',  # too many
        b'{"data": "good film"}',
        b'{"data": null}',
        b"{}",
        b"not json",
        b'{"data": ["good \xff\xfe film", "dcnn", "auto", "auto"]}',  # not UTF-8
        b'{"data": [' + b"[" * 5000 + b"]" * 5000 + b', "dcnn", "auto", "auto"]}',  # deep nesting
    ],
    ids=["too-few", "too-many", "not-a-list", "null", "empty-object", "not-json", "not-utf8", "deep-nesting"],
)
def test_malformed_requests_are_refused_and_the_server_stays_up(app, body):
    url, client = app
    status, event, data = raw_call(url, "predict", body)
    assert status in (200, 400, 413, 422), (status, data)
    if status == 200 and event == "complete":  # gradio may fill in or drop values: then it is a real prediction
        check_prediction(data[0], "good film")
    assert client.predict("a good film", "dcnn", "auto", "auto", api_name="/predict")["label"]


def test_unknown_endpoint(app):
    url, client = app
    status, _, _ = raw_call(url, "../../predict", b'{"data": ["good film"]}')
    assert status in (404, 405, 422)
    try:  # gradio 6.31 starts the event stream, then drops the connection: no answer, but no hang either
        assert httpx.get(f"{url}gradio_api/call/no_such_endpoint/abc", timeout=SECONDS, verify=CONTEXT).status_code in (
            200,
            404,
            405,
            422,
        )
    except httpx.RemoteProtocolError:
        pass
    assert client.predict("a good film", "dcnn", "auto", "auto", api_name="/predict")["label"]


def test_the_server_still_answers_after_the_table(app):
    url, client = app
    for text in ("It is not a bad film.", "这部电影不怎么好看"):
        for p in client.predict(text, "auto", "auto", api_name="/compare"):
            check_prediction(p, text)


@pytest.mark.parametrize("endpoint", ["predict", "compare"])
def test_rest_call_with_only_the_text_uses_the_advertised_defaults(app, endpoint):
    url, _ = app
    status, event, data = raw_call(url, endpoint, json.dumps({"data": ["a good film"]}).encode())
    assert (status, event) == (200, "complete"), data
    predictions = data[0] if isinstance(data[0], list) else [data[0]]
    assert predictions[0]["task"] == "sst5" and predictions[0]["model"] == "tensor_cnn"


def test_rest_call_without_the_text_is_still_refused(app):
    url, _ = app
    status, event, _ = raw_call(url, "compare", b'{"data": []}')
    assert event != "complete"


def test_a_request_body_over_the_limit_is_refused(app):
    url, _ = app
    big = httpx.post(
        f"{url}gradio_api/call/compare",
        content=b" " * (MAX_BODY_BYTES + 1),
        headers={"content-type": "application/json"},
        timeout=SECONDS,
        verify=CONTEXT,
    )
    chunked = httpx.post(
        f"{url}gradio_api/call/compare",
        content=iter([b" " * (1 << 16)] * (MAX_BODY_BYTES // (1 << 16) + 2)),
        headers={"content-type": "application/json"},
        timeout=SECONDS,
        verify=CONTEXT,
    )
    assert big.status_code == 413 and chunked.status_code == 413
    status, event, _ = raw_call(url, "compare", json.dumps({"data": ["good " * 1000, "auto", "auto"]}).encode())
    assert (status, event) == (200, "complete")
