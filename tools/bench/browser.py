"""The lab in a real browser: how long a user waits from the click on "Analyse" until the page stops
changing, with the server's own time for the same analysis beside it.

`python -m tools.bench.browser` (`make bench-browser`) starts `python app.py` on the bundled checkpoints,
drives Debian chromium with Playwright at a laptop's width (1280 px) and a phone's (390 x 844), and writes
reports/browser.json and reports/browser.md.

How a wait is measured: a MutationObserver in the page stamps every DOM change (figures drawn
included; not the screen-reader-only status line) with performance.now(); the click is stamped the same way.
The page has settled once nothing changed for QUIET_MS, no progress indicator is left and the result of this
text is on the page; the wait is the last change minus the click.
"Fresh" is the first analysis in a new page, "repeat" a second click on the same page with another sentence.
The server's time is /compare (or /predict) called through gradio_client against the same app.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from core.data import PROJECT_ROOT
from tools.bench.machine import machine_info
from tools.processes import free_port

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
QUIET_MS = 1500  # no DOM change for this long: the page has settled
EN = (
    "The acting is great, but the plot is dull and far too long.",
    "It is not a bad film at all, and the cast is quite good.",
)
LAPTOP, PHONE = (1280, 1000), (390, 844)  # browser viewports (width, height) in CSS px
# (name, sentence, its repeat, model, browser locale, viewport): 12 words in English; a Chinese review in the
# Chinese UI; on a phone, the same as on the laptop
SCENARIOS = [
    ("all five, English", *EN, "all", "en-US", LAPTOP),
    ("all five, Chinese", "这部电影不怎么好看，但是演员很棒", "质量一点也不好，再也不买了", "all", "zh-CN", LAPTOP),
    ("one model (DCNN), English", *EN, "dcnn", "en-US", LAPTOP),
    ("all five, English, phone (390 px)", *EN, "all", "en-US", PHONE),
    ("one model (DCNN), English, phone (390 px)", *EN, "dcnn", "en-US", PHONE),
]
# a change a user can see: not Gradio's screen-reader status line (.sr-only), which says "complete" ~2 s later
OBSERVER = """
window.__lastChange = performance.now();
const shown = m => !(m.target.nodeType === 1 ? m.target : m.target.parentElement)?.closest('.sr-only');
new MutationObserver(ms => { if (ms.some(shown)) window.__lastChange = performance.now(); })
  .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""
CLICK = "() => { const t = performance.now(); document.querySelector('#run').click(); return t; }"
# still working: a Gradio progress indicator, the Lab's own "analysing" state, or no result for this text yet
BUSY = """text => document.querySelectorAll('.progress-text, .eta-bar, .meta-text').length > 0
  || document.body.classList.contains('lab-busy')
  || ![...document.querySelectorAll('.lab-result')].some(r => r.dataset.text === text)"""


def start_app(checkpoints: str | None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_SERVER_NAME": "127.0.0.1", "HF_HUB_OFFLINE": "1"}
    if checkpoints:
        env["LAB_CHECKPOINTS"] = checkpoints
    server = subprocess.Popen(
        [sys.executable, "app.py"], cwd=PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url, start = f"http://127.0.0.1:{port}/", time.perf_counter()
    while True:
        if server.poll() is not None:
            raise SystemExit(f"app.py exited with {server.returncode}")
        if time.perf_counter() - start > 120:
            server.terminate()
            raise SystemExit("app.py did not answer within 120 s")
        try:
            urllib.request.urlopen(url, timeout=1)
            return server, url
        except OSError:
            time.sleep(0.3)


def choose_model(page, model: str) -> None:
    if model != "all":
        page.locator("#model input").click()
        page.get_by_role("option", name=MODEL_OPTION[model]).click()


def settle_after_click(page, text: str, timeout_s: float = 90) -> float:
    """Type `text`, click Analyse, wait until the page has settled; seconds from the click to its last change."""
    page.locator("#sentence textarea").fill(text)
    page.wait_for_timeout(300)  # the input's own re-render is not part of the wait
    clicked = page.evaluate(CLICK)
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        page.wait_for_timeout(250)
        now, last, busy = page.evaluate("text => [performance.now(), window.__lastChange, (" + BUSY + ")(text)]", text)
        if last > clicked and not busy and now - last >= QUIET_MS:
            return (last - clicked) / 1000
    raise TimeoutError(f"the page did not settle within {timeout_s} s")


def server_seconds(url: str, text: str, model: str, runs: int = 5) -> float:
    """Median time of the same analysis through the API (what the server itself needs, plus loopback HTTP)."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    call = (
        (lambda: client.predict(text, "auto", "auto", api_name="/compare"))
        if model == "all"
        else (lambda: client.predict(text, model, "auto", "auto", api_name="/predict"))
    )
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


MODEL_OPTION = {"dcnn": "DCNN (Kalchbrenner et al. 2014)"}


def measure(url: str, rounds: int) -> list[dict]:
    from playwright.sync_api import sync_playwright

    results: list[dict] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            for name, text, repeat_text, model, locale, (width, height) in SCENARIOS:
                fresh, repeat = [], []
                for _ in range(rounds):
                    context = browser.new_context(locale=locale, viewport={"width": width, "height": height})
                    context.add_init_script(OBSERVER)
                    page = context.new_page()
                    page.goto(url)
                    page.locator("#run").wait_for()
                    page.wait_for_timeout(1000)  # the page's own start-up is not part of the wait
                    choose_model(page, model)
                    fresh.append(settle_after_click(page, text))
                    repeat.append(settle_after_click(page, repeat_text))
                    context.close()
                load = os.getloadavg()[0]
                results.append(
                    {
                        "scenario": name,
                        "model": model,
                        "locale": locale,
                        "viewport": [width, height],
                        "text": text,
                        "fresh_s": fresh,
                        "repeat_s": repeat,
                        "fresh_median_s": statistics.median(fresh),
                        "repeat_median_s": statistics.median(repeat),
                        "server_s": server_seconds(url, text, model),
                        "load_average_1min": load,
                    }
                )
                print(
                    f"{name}: fresh {results[-1]['fresh_median_s']:.2f} s, "
                    f"repeat {results[-1]['repeat_median_s']:.2f} s, "
                    f"server {results[-1]['server_s'] * 1000:.0f} ms (load {load:.2f})",
                    flush=True,
                )
        finally:
            browser.close()
    return results


def markdown(report: dict) -> str:
    m = report["machine"]
    shared = "; the machine was shared with other work" if report["load_before"][0] > 0.5 else ""
    lines = [
        "# The lab in a real browser",
        "",
        f"`make bench-browser` (`python -m tools.bench.browser --rounds {report['rounds']}`), commit "
        f"`{m['commit']}`, {m['cpu']}, {m['cpus_usable']} usable cores, chromium {report['chromium']}; "
        f"load average at the start {report['load_before'][0]:.2f} / {report['load_before'][1]:.2f} / "
        f"{report['load_before'][2]:.2f} (1 / 5 / 15 min){shared}.",
        "",
        f"Time from the click on Analyse until the page stopped changing (nothing changed for {QUIET_MS} ms, "
        "no progress indicator left, this sentence's result on the page), median of the rounds, each round a "
        "new page: *fresh* is its first "
        "analysis, *repeat* a second sentence on the same page. *Server* is the same analysis through the "
        "API (median of 5).",
        "",
        "| scenario | fresh (s) | repeat (s) | server (ms) | every round: fresh / repeat (s) | load (1 min) |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for r in report["results"]:
        rounds = ", ".join(f"{f:.2f} / {p:.2f}" for f, p in zip(r["fresh_s"], r["repeat_s"]))
        lines.append(
            f"| {r['scenario']} | {r['fresh_median_s']:.2f} | {r['repeat_median_s']:.2f} | "
            f"{r['server_s'] * 1000:.0f} | {rounds} | {r['load_average_1min']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped benchmark stops its app too (finally:)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="new pages per scenario (each: fresh + repeat)")
    parser.add_argument("--checkpoints", default=None, help="LAB_CHECKPOINTS for the app (default: the bundled)")
    parser.add_argument("--out", default=str(PROJECT_ROOT / "reports" / "browser"), help="writes OUT.json and OUT.md")
    args = parser.parse_args(argv)
    load_before = list(os.getloadavg())
    server, url = start_app(args.checkpoints)
    try:
        results = measure(url, args.rounds)
    finally:
        server.terminate()
        server.wait(timeout=10)
    chromium = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()
    report = {
        "rounds": args.rounds,
        "quiet_ms": QUIET_MS,
        "chromium": chromium,
        "load_before": load_before,
        "load_after": list(os.getloadavg()),
        "machine": machine_info(),
        "results": results,
    }
    Path(args.out + ".json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    Path(args.out + ".md").write_text(markdown(report), encoding="utf-8")
    print(f"wrote {args.out}.json and {args.out}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
