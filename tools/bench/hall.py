"""A lecture hall's visitors as browsers: hundreds of open pages from one thread (the hall profile of
tools.bench.loadtest).

A gradio_client.Client per visitor costs the load generator more than the app costs (its threads, a heartbeat
thread, the page's config and API description fetched per visit), and at a hall's size the generator took the
app's two cores. A browser does less, and this does what it does, on one asyncio loop and one aiohttp session:
a visit opens the page (the page, its /config, its load events through the queue), keeps the page's heartbeat
stream open while the page is, and sends each request as Gradio's front end does (sse_v3: POST queue/join, then
the session's data stream until the event's `process_completed`); leaving closes the heartbeat, and the app
forgets the session as it does when a tab closes.

    visitors = Hall.read(url, timeout)               # the app's event ids and the API's defaults, once
    results = asyncio.run(visitors.run(plans, ...))  # see Hall.run
"""

import asyncio
import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from tools.bench.load_results import LONG_ENDPOINTS, Result, check_answer, error_line

# what a visitor asks next: (endpoint, arguments), "page" for a page load; None when the visit is over
NextRequest = Callable[[random.Random], tuple[str, tuple]]


@dataclass(frozen=True)
class Page:
    """Where a visitor opens the page: a link's query ("?text=..."; "": the page itself) and its request headers
    (an X-Forwarded-For naming the visitor's address, behind an app that trusts one proxy hop)."""

    query: str = ""
    headers: dict[str, str] | None = None


PAGE = Page()  # the page itself, from the load generator's own address


@dataclass
class Hall:
    url: str
    fn_index: dict[str, int]  # "/predict" -> the event's id in /config
    parameters: dict[str, list[tuple[str, object]]]  # "/predict" -> its parameters' names and defaults
    loads: list[tuple[int, list]]  # the page's load events: (id, the inputs' values in the page)
    timeout: float  # seconds a page load or a request may take, queue included

    @classmethod
    def read(cls, url: str, timeout: float) -> "Hall":
        """The app's events and the API's parameters, read once (a browser reads /config per visit: see open)."""
        import httpx

        config = httpx.get(f"{url}config", timeout=30).json()
        info = httpx.get(f"{url}gradio_api/info", timeout=30).json()["named_endpoints"]
        values = {c["id"]: c.get("props", {}).get("value") for c in config["components"]}
        return cls(
            url,
            {f"/{d['api_name']}": d["id"] for d in config["dependencies"] if d.get("api_name")},
            {
                name: [(p["parameter_name"], p.get("parameter_default")) for p in endpoint["parameters"]]
                for name, endpoint in info.items()
            },
            [
                (d["id"], [values.get(i) for i in d["inputs"]])
                for d in config["dependencies"]
                if any(event == "load" for _, event in d["targets"])
            ],
            timeout,
        )

    def data(self, endpoint: str, args: tuple) -> list:
        """The event's inputs as the front end sends them: the arguments given, the defaults after them."""
        return [*args, *(default for _, default in self.parameters[endpoint][len(args) :])]

    async def events(
        self, http: aiohttp.ClientSession, session: str, events: list[tuple[int, list]], page: Page = PAGE
    ) -> list:
        """Join `events` (id, inputs) to the queue in `session` from `page`, then read the session's stream until
        each has answered; their outputs, in order. A refusal (the queue full) or a failed event raises."""
        ids = []
        for fn_index, data in events:
            body = {"data": data, "fn_index": fn_index, "session_hash": session, "trigger_id": None, "event_data": None}
            join = f"{self.url}gradio_api/queue/join{page.query}"  # the front end sends the page's query with it
            async with http.post(join, json=body, headers=page.headers) as response:
                if response.status != 200:
                    raise RuntimeError(f"queue/join answered {response.status}: {(await response.text())[:200]}")
                ids.append((await response.json())["event_id"])
        outputs: dict[str, object] = {}
        async with http.get(f"{self.url}gradio_api/queue/data", params={"session_hash": session}) as stream:
            async for line in stream.content:
                if not line.startswith(b"data:"):
                    continue
                message = json.loads(line[5:])
                if message.get("msg") == "process_completed" and message.get("event_id") in ids:
                    if not message.get("success"):
                        raise RuntimeError(f"event failed: {str(message.get('output'))[:200]}")
                    outputs[message["event_id"]] = message["output"]["data"]
                if len(outputs) == len(ids) or message.get("msg") == "close_stream":
                    break
        if len(outputs) < len(ids):
            raise RuntimeError(f"{len(outputs)} of {len(ids)} events answered")
        return [outputs[i] for i in ids]

    async def open(self, http: aiohttp.ClientSession, session: str, page: Page = PAGE) -> Result:
        """A page load: the page, its config and its load events (a browser asks for /config each time)."""
        start = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout):
                for path in ("", "config"):
                    async with http.get(f"{self.url}{path}{page.query}", headers=page.headers) as response:
                        response.raise_for_status()
                        await response.read()
                await self.events(http, session, self.loads, page)
            error = ""
        except Exception as err:  # counted and reported
            error = error_line(err)
        return Result("page", time.perf_counter() - start, error)

    async def ask(self, http: aiohttp.ClientSession, session: str, endpoint: str, args: tuple) -> Result:
        start = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout):
                event = (self.fn_index[endpoint], self.data(endpoint, args))
                (answer,) = (await self.events(http, session, [event]))[0]
            check_answer(endpoint, answer)
            error = ""
        except Exception as err:  # counted and reported
            error = error_line(err)
        return Result(endpoint, time.perf_counter() - start, error, endpoint in LONG_ENDPOINTS)

    async def heartbeat(self, http: aiohttp.ClientSession, session: str) -> None:
        """The page's heartbeat stream, held open until the visit ends (the task is cancelled)."""
        async with http.get(f"{self.url}gradio_api/heartbeat/{session}") as stream:
            async for _ in stream.content:
                pass

    async def visitor(
        self,
        http: aiohttp.ClientSession,
        seed: int,
        next_request: NextRequest,
        think: tuple[float, float],
        deadline: float,
        counted: Callable[[int, int], None],
    ) -> list[Result]:
        """Visits until `deadline` (monotonic): each a new page (a new session, its heartbeat), then the requests
        `next_request` draws, `think` seconds apart (uniform), until it draws "page": the visitor leaves and
        opens the page again."""
        rng, out = random.Random(seed), []
        await asyncio.sleep(rng.uniform(*think))  # a hall does not press Enter together
        while time.monotonic() < deadline:
            session = os.urandom(8).hex()
            beat = asyncio.create_task(self.heartbeat(http, session))
            counted(1, 1)
            out.append(await self.open(http, session))
            while True:
                await asyncio.sleep(rng.uniform(*think))
                endpoint, args = next_request(rng)
                if endpoint == "page" or time.monotonic() >= deadline:
                    break
                counted(0, 1)
                out.append(await self.ask(http, session, endpoint, args))
            beat.cancel()
            await asyncio.gather(beat, return_exceptions=True)
        return out

    async def run(
        self,
        seeds: list[int],
        next_request: NextRequest,
        think: tuple[float, float],
        deadline: float,
        counted: Callable[[int, int], None],
    ) -> list[Result]:
        """One visitor per seed, all at once, until `deadline`."""
        limits = aiohttp.TCPConnector(limit=0)  # a browser per visitor: no shared pool to wait on
        async with aiohttp.ClientSession(connector=limits) as http:
            runs = [self.visitor(http, seed, next_request, think, deadline, counted) for seed in seeds]
            return [r for rs in await asyncio.gather(*runs) for r in rs]
