"""Red-team cases on shared capacity (fair shares, service.fair), each run against a live app by tools/bench/redteam.py:
one address sends FLOOD concurrent long /compare calls (150 words, every attribution method) for SECONDS, through
the REST pool or through Gradio's queue, while an honest visitor at another address calls /predict once a second
the same way. Held when the honest calls' p95 is within a second and none failed. The flood runs in a process at
the lowest CPU priority (on a Space the attacker's CPU is its own; here it shares the app's two cores). The app must
trust one proxy (LAB_FORWARDED_HOPS=1, as tools/bench/redteam.py starts it): the two addresses are X-Forwarded-For's."""

import asyncio
import json
import multiprocessing
import os
import time
import uuid

import httpx

QUICK = ("one_session_four_calls",)
FLOOD, SECONDS = 200, 90.0
ATTACKER, HONEST = "203.0.113.66", "198.51.100.77"
LONG = " ".join(["the plot is dull but the music is rather good"] * 15)  # 150 words
RETRY_S = 0.1  # a refused flooder asks again at once, whatever Retry-After says


async def rest_call(http: httpx.AsyncClient, url: str, api: str, data: list, address: str) -> int:
    """One REST call to its answer: 200 when it completed, else the refusal's status (or 0: no answer)."""
    posted = await http.post(f"{url}gradio_api/call/{api}", json={"data": data}, headers={"x-forwarded-for": address})
    if posted.status_code != 200:
        return posted.status_code
    answer = await http.get(f"{url}gradio_api/call/{api}/{posted.json()['event_id']}")
    return 200 if "event: complete" in answer.text else 0


async def queue_call(http: httpx.AsyncClient, url: str, fn_index: int, data: list, address: str) -> int:
    """One event as the page sends it (join, then the session's stream): 200 when it completed, else the join's
    status (or 0: no answer)."""
    session = uuid.uuid4().hex
    body = {"data": data, "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None}
    joined = await http.post(f"{url}gradio_api/queue/join", json=body, headers={"x-forwarded-for": address})
    if joined.status_code != 200:
        return joined.status_code
    params = {"session_hash": session}
    async with http.stream("GET", f"{url}gradio_api/queue/data", params=params) as stream:
        async for line in stream.aiter_lines():
            message = json.loads(line[5:]) if line.startswith("data:") else {}
            if message.get("msg") == "process_completed":
                return 200 if message.get("success") else 0
    return 0


async def _calls(http: httpx.AsyncClient, url: str, path: str):
    """call(api, data, address) through `path` ("rest" or "queue")."""
    index = {d.get("api_name"): d["id"] for d in (await http.get(f"{url}config")).json()["dependencies"]}

    async def call(api: str, data: list, address: str) -> int:
        if path == "rest":
            return await rest_call(http, url, api, data, address)
        return await queue_call(http, url, index[api], data, address)

    return call


async def attack(url: str, path: str, seconds: float) -> dict:
    """FLOOD callers from ATTACKER for `seconds`, each asking again as soon as it is answered or refused."""
    limits = httpx.Limits(max_connections=FLOOD + 20, max_keepalive_connections=FLOOD + 20)
    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0), limits=limits) as http:
        call, deadline, got = await _calls(http, url, path), time.monotonic() + seconds, {"answered": 0, "refused": 0}

        async def caller() -> None:
            while time.monotonic() < deadline:
                status = await call("compare", [LONG, "sst5", "en", "all"], ATTACKER)
                got["answered" if status == 200 else "refused"] += 1
                if status != 200:
                    await asyncio.sleep(RETRY_S)

        await asyncio.gather(*(caller() for _ in range(FLOOD)), return_exceptions=True)
    return got


def _attacker(url: str, path: str, seconds: float, out) -> None:
    """The flood in a process of its own at the lowest CPU priority: an attacker's CPU is not the Space's, and
    here both share the app's two cores. Its counts go to `out` every second."""
    os.nice(19)
    got: dict = {}

    async def run() -> None:
        task = asyncio.create_task(attack(url, path, seconds))
        while not task.done():
            await asyncio.sleep(1)
        got.update(task.result())

    asyncio.run(run())
    out.put(got)


async def honest(url: str, path: str, seconds: float) -> tuple[list[float], int]:
    """/predict from HONEST once a second for `seconds`, a new sentence each time: (latencies, failures)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0)) as http:
        call, deadline, failed = await _calls(http, url, path), time.monotonic() + seconds, 0
        times: list[float] = []
        while time.monotonic() < deadline:
            start = time.monotonic()
            text = f"It is not a bad film, take {len(times)}."
            failed += await call("predict", [text, "dcnn", "sst5", "auto"], HONEST) != 200
            times.append(time.monotonic() - start)
            await asyncio.sleep(max(0.0, 1.0 - times[-1]))
    return times, failed


def flooded(url: str, path: str) -> dict:
    """The flood and the honest visitor together: the honest latencies and failures, and what the flood got."""
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    flood = context.Process(target=_attacker, args=(url, path, SECONDS + 5, out))
    flood.start()
    try:
        time.sleep(5)  # the flood fills the pool first
        times, failed = asyncio.run(honest(url, path, SECONDS))
        got = out.get(timeout=600)  # its callers end with their requests in flight
    finally:
        flood.join(10)
        if flood.is_alive():
            flood.kill()
    times.sort()
    return {"p95": times[int(0.95 * (len(times) - 1))], "calls": len(times), "failed": failed, **got}


def _case(url: str, path: str) -> tuple[bool, str]:
    got = flooded(url, path)
    held = got["p95"] <= 1.0 and got["failed"] == 0
    return held, (
        f"{FLOOD} long /compare from one address for {SECONDS:.0f} s ({got['answered']} answered, {got['refused']} "
        f"refused): honest /predict p95 {got['p95']:.2f} s, {got['failed']} of {got['calls']} failed"
    )


def case_rest_flood_leaves_predict_alone(url: str) -> tuple[bool, str]:
    return _case(url, "rest")


def case_queue_flood_leaves_predict_alone(url: str) -> tuple[bool, str]:
    return _case(url, "queue")


def case_one_session_four_calls(url: str) -> tuple[bool, str]:
    """Four concurrent REST /predict calls naming one session (Gradio's own path never completed them)."""
    session = uuid.uuid4().hex

    async def four() -> list[int]:
        async with httpx.AsyncClient(timeout=httpx.Timeout(60.0)) as http:
            calls = []
            for n in range(4):
                body = {"data": [f"It is not a bad film, take {n}.", "dcnn", "sst5", "auto"], "session_hash": session}
                calls.append(http.post(f"{url}gradio_api/call/predict", json=body))
            posted = await asyncio.gather(*calls)
            answers = await asyncio.gather(
                *(http.get(f"{url}gradio_api/call/predict/{p.json()['event_id']}") for p in posted)
            )
        return [200 if "event: complete" in a.text else a.status_code for a in answers]

    start = time.monotonic()
    statuses = asyncio.run(four())
    done = statuses.count(200)
    return done == 4, f"{done} of 4 completed in {time.monotonic() - start:.1f} s"
