"""A lecture hall opens the teacher's link: `--visitors` browsers, each from an address of its own, load the same
Lab link (`--model`'s analysis of one sentence) within `--spread` seconds, and each waits for the page, its config
and its load event, which draws the link's analysis for the visitor's screen. Per round: the visitors' waits
(p50, p95, the longest) and the failures. The rooms the figures are drawn for are the page's on common screens
(Gradio caps the page's width in steps: every laptop from 1280 to 1535 px draws for 1156 px).

    python -m tools.bench.link_burst                  # make bench-link: 300 visitors over 10 s, 3 rounds
    python -m tools.bench.link_burst --url URL        # against an app already serving (its own settings)

It starts app.py on the bundled checkpoints trusting one proxy hop (LAB_FORWARDED_HOPS=1), so that each visitor's
X-Forwarded-For is its address, as behind a Space's proxy; the visitors are tools.bench.hall's browsers, on one
asyncio loop in this process (its CPU is the machine's too: reported beside the app's load). Writes
reports/link_burst.json."""

import argparse
import asyncio
import dataclasses
import json
import os
import random
import time
import urllib.parse
from pathlib import Path

import aiohttp
import httpx

from core.data import PROJECT_ROOT
from tools.bench.hall import Hall, Page
from tools.bench.load_results import Result
from tools.bench.loadtest import percentile, started_app
from tools.bench.machine import machine_info

SENTENCE = "It is not a bad film at all, and the cast is quite good."
# the figures' room (CSS px) the page measures at common widths: laptops 1280-1535 and 1536-1919 px, a 1024 px
# tablet, phones 360, 390, 412 and 430 px wide
ROOMS = (1156, 1156, 1156, 1412, 900, 288, 318, 339, 358)


def visitor_hall(hall: Hall, config: dict, room: float) -> Hall:
    """`hall` whose load events send `room` as the page's measured room (the Number with elem_id lab-room)."""
    room_ids = {c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "lab-room"}
    inputs = {d["id"]: d["inputs"] for d in config["dependencies"]}
    loads = [(i, [room if c in room_ids else v for c, v in zip(inputs[i], data)]) for i, data in hall.loads]
    return dataclasses.replace(hall, loads=loads)


async def burst(url: str, query: str, visitors: int, spread: float, seed: int, timeout: float) -> list[Result]:
    """Every visitor opens the link once, at a moment drawn uniformly within `spread` seconds."""
    hall, config = Hall.read(url, timeout), httpx.get(f"{url}config", timeout=30).json()
    rng = random.Random(seed)
    plans = [(rng.uniform(0, spread), rng.choice(ROOMS)) for _ in range(visitors)]

    async def visit(http: aiohttp.ClientSession, n: int, at: float, room: float) -> Result:
        await asyncio.sleep(at)
        page = Page(query, {"X-Forwarded-For": f"10.{n // 65536}.{n // 256 % 256}.{n % 256}"})
        return await visitor_hall(hall, config, room).open(http, os.urandom(8).hex(), page)

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        return await asyncio.gather(*(visit(http, n, at, room) for n, (at, room) in enumerate(plans)))


def figures(results: list[Result]) -> dict:
    waits = [r.seconds for r in results if not r.error]
    return {
        "visitors": len(results),
        "failed": [r.error for r in results if r.error],
        "p50_s": percentile(waits, 0.5),
        "p95_s": percentile(waits, 0.95),
        "max_s": max(waits, default=None),
        "load_average": os.getloadavg(),
    }


def run(url: str, args) -> list[dict]:
    query = "?" + urllib.parse.urlencode({"text": SENTENCE, "model": args.model})
    rounds = []
    for n in range(args.rounds):
        results = asyncio.run(burst(url, query, args.visitors, args.spread, n, args.timeout))
        rounds.append(figures(results))
        r = rounds[-1]
        print(
            f"round {n + 1}: p50 {r['p50_s']:.2f} s, p95 {r['p95_s']:.2f} s, longest {r['max_s']:.2f} s, "
            f"{len(r['failed'])} failed (load {r['load_average'][0]:.2f})",
            flush=True,
        )
        time.sleep(args.rest)
    return rounds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--visitors", type=int, default=300, help="browsers opening the link, each its own address")
    parser.add_argument("--spread", type=float, default=10.0, help="seconds over which the visitors arrive")
    parser.add_argument("--model", default="all", help="the link's model: all (the five), dcnn, ...")
    parser.add_argument("--rounds", type=int, default=3, help="bursts, one after another, on the same app")
    parser.add_argument("--rest", type=float, default=5.0, help="seconds between rounds")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a visitor waits at most")
    parser.add_argument("--url", help="an app already serving (default: app.py started here)")
    parser.add_argument("--out", default=str(PROJECT_ROOT / "reports" / "link_burst.json"), help="the report (JSON)")
    args = parser.parse_args(argv)
    load_at_start = os.getloadavg()
    if args.url:
        rounds = run(args.url.rstrip("/") + "/", args)
    else:
        os.environ["LAB_FORWARDED_HOPS"] = "1"  # each visitor's X-Forwarded-For names its address
        with started_app(PROJECT_ROOT / "checkpoints", start_timeout=300) as app:
            time.sleep(20)  # the app's warm-up (web.warm_up) runs in the background for about this long
            rounds = run(app.url, args)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": machine_info(),
        "load_average_start": load_at_start,
        "config": {k: v for k, v in vars(args).items() if k != "out"},
        "rounds": rounds,
    }
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
