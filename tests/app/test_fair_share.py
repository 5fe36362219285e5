"""Fair shares against the app launched as app.py launches it (web/fair_queue.py, web/rest.py, the lanes): one
address flooding the long lane is held to its share and refused at once past it, while another address is
admitted and answered, through the REST pool and through Gradio's queue alike. A pool of 4 places here
(LAB_MODEL_CONCURRENCY=1, LAB_QUEUE_SIZE=3); addresses come from X-Forwarded-For behind one trusted proxy."""

import json
import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from lab_fixture import launch_demo

from web.runner import LANES

LONG = " ".join(["a good film"] * 20)  # 60 words: the long lane
SHORT = "It is not a bad film."
SETTINGS = {"LAB_MODEL_CONCURRENCY": "1", "LAB_QUEUE_SIZE": "3", "LAB_FORWARDED_HOPS": "1"}


@pytest.fixture(scope="module")
def app(lab_root, tmp_path_factory):
    saved = {k: os.environ.get(k) for k in SETTINGS}
    os.environ.update(SETTINGS)
    try:
        for demo, url in launch_demo(lab_root, tmp_path_factory.mktemp("gradio")):
            yield url, demo
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)


def headers(address: str, lang: str = "en") -> dict:
    return {"x-forwarded-for": address, "accept-language": lang}


def rest_post(http: httpx.Client, url: str, address: str, text: str, **extra) -> httpx.Response:
    body = {"data": [text, "dcnn", "sst5", "auto"], **extra}
    return http.post(f"{url}gradio_api/call/predict", json=body, headers=headers(address))


def rest_answer(http: httpx.Client, url: str, posted: httpx.Response) -> str:
    return http.get(f"{url}gradio_api/call/predict/{posted.json()['event_id']}").text


def join(http: httpx.Client, url: str, address: str, text: str, lang: str = "en") -> tuple[httpx.Response, str]:
    config = http.get(f"{url}config").json()
    fn_index = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "predict")
    session = uuid.uuid4().hex
    body = {"data": [text, "dcnn", "sst5", "auto"], "fn_index": fn_index, "session_hash": session}
    return http.post(f"{url}gradio_api/queue/join", json=body, headers=headers(address, lang)), session


def completed(http: httpx.Client, url: str, session: str) -> dict:
    with http.stream("GET", f"{url}gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            message = json.loads(line[len("data: ") :]) if line.startswith("data: ") else {}
            if message.get("msg") == "process_completed":
                return message
    raise AssertionError("no process_completed message")


def test_a_rest_flood_is_held_to_its_share_and_another_address_is_answered(app):
    url, _ = app
    with httpx.Client(timeout=60) as http, LANES.admit(long=True):  # the long lane busy: the flood waits
        flood = [rest_post(http, url, "203.0.113.1", LONG) for _ in range(5)]
        assert [r.status_code for r in flood] == [200] * 4 + [429]  # alone, the whole pool (4); past it, refused
        assert int(flood[-1].headers["retry-after"]) > 0 and "try again" in flood[-1].json()["detail"]
        honest = rest_post(http, url, "198.51.100.7", SHORT)
        assert honest.status_code == 200  # the pool is full, but of one address's requests past its share (2)
        assert "event: complete" in rest_answer(http, url, honest)  # the short lane is free: answered now
        assert rest_post(http, url, "203.0.113.1", LONG).status_code == 429
    with httpx.Client(timeout=60) as http:
        assert all("event: complete" in rest_answer(http, url, r) for r in flood[:4])


def test_a_queue_flood_is_held_to_its_share_in_the_visitors_language_and_another_address_is_answered(app):
    url, _ = app
    with httpx.Client(timeout=60) as http, LANES.admit(long=True):
        flood = [join(http, url, "203.0.113.2", LONG, lang="zh-CN") for _ in range(5)]
        assert [r.status_code for r, _ in flood] == [200] * 4 + [429]
        assert "秒后再试" in flood[-1][0].json()["detail"]
        honest, session = join(http, url, "198.51.100.8", SHORT)
        assert honest.status_code == 200 and completed(http, url, session)["success"]
    with httpx.Client(timeout=60) as http:
        assert all(completed(http, url, s)["success"] for _, s in flood[:4])


def test_the_long_lane_gives_another_address_the_next_turn(app):
    """Three long requests of one address wait for the long lane, then one of another: it runs second, not last."""
    url, _ = app
    done, lock = [], threading.Lock()

    def ask(address: str) -> None:
        with httpx.Client(timeout=60) as http:
            posted = rest_post(http, url, address, LONG + f" {uuid.uuid4().hex}")  # never a kept answer
            assert "event: complete" in rest_answer(http, url, posted)
        with lock:
            done.append(address)

    with ThreadPoolExecutor(4) as pool:
        with LANES.admit(long=True):
            futures = []
            for address in ("203.0.113.3",) * 3 + ("198.51.100.9",):
                futures.append(pool.submit(ask, address))
                lane = LANES._slots[True]._turns
                while len(lane.waiting) < len(futures):
                    threading.Event().wait(0.02)
        for future in futures:
            future.result()
    assert done.index("198.51.100.9") <= 1  # arrival order would make it last (3)


def test_concurrent_rest_calls_naming_one_session_all_complete(app):
    url, _ = app
    session = uuid.uuid4().hex

    def call(n: int) -> str:
        with httpx.Client(timeout=60) as http:
            return rest_answer(http, url, rest_post(http, url, "192.0.2.1", f"{SHORT} {n}", session_hash=session))

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(call, range(4)))
    assert all("event: complete" in a for a in answers)


def test_gradios_queue_still_has_what_fair_shares_read(app):
    """web/fair_queue.py reads and sorts these of Gradio's queue: an upgrade that renames them fails here."""
    url, demo = app
    with httpx.Client(timeout=60) as http:  # Gradio makes a group's line at its first event: one of the model group
        assert completed(http, url, join(http, url, "192.0.2.2", SHORT)[1])["success"]
    queue = demo._queue
    assert isinstance(queue.event_ids_to_events, dict) and isinstance(queue.active_jobs, list)
    line = queue.event_queue_per_concurrency_id
    assert all(isinstance(group.queue, list) for group in line.values())
    assert line["model"].concurrency_limit >= 2 * 4  # every admitted model event enters its handler at once
