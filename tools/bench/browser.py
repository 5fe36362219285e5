"""Every tab in a real browser: how long a user waits from a click until the page stops changing. The Lab's
analysis with the server's own time for it beside it, then one action of every tab: the Lab's attribution
method and intervention and a shared link, the Probes suite, the Treebank's picks, search, a tree node's click and
its link in a new tab, the dataset task, the Train tab and its file check, the Checkpoints tab.

`python -m tools.bench.browser` (`make bench-browser`) starts `python app.py` on the bundled checkpoints,
drives Debian chromium with Playwright at a laptop's width (1280 px) and a phone's (390 x 844), and writes
reports/browser.json and reports/browser.md; `--only NAME` measures only what NAME names (the report then
holds only that).

How a wait is measured: a MutationObserver in the page stamps every DOM change (figures drawn
included; not the screen-reader-only status line) with performance.now(); the click is stamped the same way.
The page has settled once nothing changed for QUIET_MS, no progress indicator is left and the result of this
text (an action: the element it changes) is on the page; the wait is the last change minus the click.
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
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.data import PROJECT_ROOT
from demo.i18n import intervention_name
from tools.bench.machine import machine_info
from tools.processes import free_port

CHROMIUM = "/usr/bin/chromium"
TREE = "#tb-tree figure > svg"  # the Treebank's tree itself, not Gradio's loader figure beside it
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
# and the first click, pointer press or key after an action armed it (window.__input = null) stamps that input
OBSERVER = """
window.__lastChange = performance.now();
window.__input = undefined;
for (const type of ['pointerdown', 'keydown', 'click'])
  addEventListener(type, () => { if (window.__input === null) window.__input = performance.now(); }, true);
const shown = m => !(m.target.nodeType === 1 ? m.target : m.target.parentElement)?.closest('.sr-only');
new MutationObserver(ms => { if (ms.some(shown)) window.__lastChange = performance.now(); })
  .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""
CLICK = "() => { const t = performance.now(); document.querySelector('#run').click(); return t; }"
# still working: a Gradio progress indicator or the Lab's own "analysing" state
PROGRESS = """(document.querySelectorAll('.progress-text, .eta-bar, .meta-text').length > 0
  || document.body.classList.contains('lab-busy'))"""
# ... or no result for this text yet
BUSY = f"""text => {PROGRESS}
  || ![...document.querySelectorAll('.lab-result')].some(r => r.dataset.text === text)"""
# ... or the element an action changes still shows what it showed before
UNCHANGED = f"([selector, before]) => {PROGRESS} || (document.querySelector(selector)?.textContent ?? '') === before"
# ... or the element a tab shows is not shown yet
HIDDEN = f"([selector]) => {PROGRESS} || !document.querySelector(selector)?.checkVisibility()"


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
        if time.perf_counter() - start > 300:  # a shared machine's load can hold the start-up for minutes
            server.terminate()
            raise SystemExit("app.py did not answer within 300 s")
        try:
            urllib.request.urlopen(url, timeout=1)
            return server, url
        except OSError:
            time.sleep(0.3)


def choose_model(page, model: str) -> None:
    if model != "all":
        page.locator("#model input").click()
        page.get_by_role("option", name=MODEL_OPTION[model]).click()


def settle(page, clicked: float, busy: str, arg, timeout_s: float = 90) -> float:
    """Wait until the page has settled after `clicked` (its performance.now(), ms): nothing changed for QUIET_MS
    and the JS predicate `busy`(arg) false; seconds from `clicked` to the page's last change."""
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        page.wait_for_timeout(250)
        now, last, still = page.evaluate("arg => [performance.now(), window.__lastChange, (" + busy + ")(arg)]", arg)
        if last > clicked and not still and now - last >= QUIET_MS:
            return (last - clicked) / 1000
    raise TimeoutError(f"the page did not settle within {timeout_s} s")


def settle_after_click(page, text: str, timeout_s: float = 90) -> float:
    """Type `text`, click Analyse, wait until the page has settled; seconds from the click to its last change."""
    page.locator("#sentence textarea").fill(text)
    page.wait_for_timeout(300)  # the input's own re-render is not part of the wait
    return settle(page, page.evaluate(CLICK), BUSY, text, timeout_s)


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


def after_input(page, act: Callable[[], object], busy: str, arg) -> float:
    """Seconds from the input that `act` makes (its first click, press or key, as OBSERVER stamps it) until the
    page has settled."""
    page.evaluate("window.__input = null")
    act()
    clicked = page.evaluate("window.__input")
    if clicked is None:
        raise RuntimeError("the action made no input")
    return settle(page, clicked, busy, arg)


def changes(page, selector: str, act: Callable[[], object]) -> float:
    """after_input until `selector`'s text is no longer what it was before."""
    return after_input(page, act, UNCHANGED, [selector, page.locator(selector).text_content() or ""])


def pick(page, menu: str, option: Callable[[], Any]) -> Callable[[], object]:
    """Open the dropdown `menu` (not timed: the user's choice is the option's click); the click on `option`()."""
    page.locator(f"{menu} input").click()
    page.wait_for_timeout(300)
    return lambda: option().click()


def lab_on_dcnn(page) -> None:
    choose_model(page, "dcnn")
    settle_after_click(page, EN[0])


def opened_tab(page, name: str, shown: str) -> None:
    page.get_by_role("tab", name=name).click()
    settle(page, 0, HIDDEN, [shown])


def ig_on_dcnn(page) -> float:
    lab_on_dcnn(page)
    return changes(page, "#result", page.locator("#attr-method input[value='integrated_gradients']").click)


def intervention(page) -> float:
    lab_on_dcnn(page)
    max_pool = intervention_name("max_pool", "en")
    return changes(page, "#result", pick(page, "#intervention", lambda: page.get_by_role("option", name=max_pool)))


def shared_link(url: str) -> Callable:
    def load(page) -> float:  # from the navigation's start (performance.now()'s origin) to the settled page
        page.goto(url + "?" + urllib.parse.urlencode({"text": EN[1], "model": "dcnn"}))
        return settle(page, 0, BUSY, EN[1])

    return load


def probes_run(page) -> float:
    opened_tab(page, "Probes", "#probe-run")
    return changes(page, "#probe-summary", page.locator("#probe-run").click)


def treebank(page) -> None:
    opened_tab(page, "Treebank", TREE)


def tree_sentence(page) -> float:
    treebank(page)
    return changes(page, "#tb-tree-summary", pick(page, "#tb-sentence", lambda: page.get_by_role("option").nth(2)))


def tree_random(page) -> float:
    treebank(page)
    return changes(page, "#tb-tree-summary", page.locator("#tb-random").click)


def tree_search(page) -> float:
    treebank(page)
    page.locator("#tb-words textarea, #tb-words input").first.fill("not good")
    page.wait_for_timeout(300)
    return changes(page, "#tb-hits", page.locator("#tb-search").click)


def tree_node(page) -> float:
    treebank(page)
    return changes(page, "#tb-node-attr-summary", page.locator("#tb-nodes tr[data-row='2'] button").click)


def tree_click(page) -> float:
    """A click on a node of the tree opens the Lab tab of this page on its phrase: until its analysis settled."""
    treebank(page)
    node = page.locator("#tb-tree svg a.tree-node").last
    phrase = node.locator("title").text_content().split("\n")[0]
    return after_input(page, node.locator("circle").click, BUSY, phrase)


def tree_link(page) -> float:
    """A Ctrl-click on a node of the tree opens the Lab on its phrase in a new tab: from the click in this page until
    the new page has settled on the phrase's analysis (the two pages' clocks joined by performance.timeOrigin)."""
    treebank(page)
    node = page.locator("#tb-tree svg a.tree-node").last
    phrase = node.locator("title").text_content().split("\n")[0]
    page.evaluate("window.__input = null")
    with page.context.expect_page() as opened:
        node.locator("circle").click(modifiers=["ControlOrMeta"])
    lab = opened.value
    clicked = page.evaluate("performance.timeOrigin + window.__input")
    lab.wait_for_load_state()
    last = settle(lab, 0, BUSY, phrase) * 1000 + lab.evaluate("performance.timeOrigin")
    return (last - clicked) / 1000


def dataset_task(page) -> float:
    treebank(page)
    return changes(page, "#tb-data-summary", pick(page, "#tb-data-task", lambda: page.get_by_role("option").nth(1)))


def train_tab(page) -> float:
    return after_input(page, page.get_by_role("tab", name="Train").click, HIDDEN, ["#train-start"])


def train_bad_file(page) -> float:
    opened_tab(page, "Train", "#train-start")
    bad = Path(tempfile.mkdtemp()) / "reviews.csv"
    bad.write_text("just one column\nand no label\n", encoding="utf-8")

    def upload() -> None:  # a file chooser makes no click here: the upload's start is the input
        page.evaluate("window.__input = performance.now()")
        page.locator("#train-file input[type=file]").set_input_files(bad)

    return changes(page, "#train-file-summary", upload)


def checkpoints_tab(page) -> float:
    return after_input(page, page.get_by_role("tab", name="Checkpoints").click, HIDDEN, ["#checkpoints"])


def actions(url: str) -> dict[str, tuple[Callable, float]]:
    """Every action of every tab: (what it does on a new page, seconds it should settle within)."""
    return {
        "Lab: integrated gradients on the DCNN": (ig_on_dcnn, 0.5),
        "Lab: an intervention on the DCNN (max pooling)": (intervention, 0.5),
        "Lab: a shared link (?text=...&model=dcnn), page load": (shared_link(url), 1.0),
        "Probes: run the suite": (probes_run, 0.5),
        "Treebank: pick a sentence": (tree_sentence, 0.5),
        "Treebank: random sentence": (tree_random, 0.5),
        "Treebank: search": (tree_search, 0.5),
        "Treebank: pick a node (table row)": (tree_node, 0.5),
        "Treebank: a tree node clicked (the Lab tab opens on it)": (tree_click, 0.5),
        "Treebank: a tree node's link, new tab (Ctrl-click)": (tree_link, 1.0),
        "Treebank: dataset task switch": (dataset_task, 0.5),
        "Train: open the tab": (train_tab, 0.5),
        "Train: a bad file's validation": (train_bad_file, 0.5),
        "Checkpoints: open the tab": (checkpoints_tab, 0.5),
    }


def measure_actions(url: str, rounds: int, wanted: Callable[[str], bool]) -> list[dict]:
    """Each action `rounds` times, each round on a new page (en-US, the laptop's width)."""
    from playwright.sync_api import sync_playwright

    results: list[dict] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            for name, (action, goal) in actions(url).items():
                if not wanted(name):
                    continue
                seconds = []
                for _ in range(rounds):
                    context = browser.new_context(locale="en-US", viewport={"width": LAPTOP[0], "height": LAPTOP[1]})
                    context.add_init_script(OBSERVER)
                    page = context.new_page()
                    page.goto(url)
                    page.locator("#run").wait_for()
                    page.wait_for_timeout(1000)  # the page's own start-up is not part of the wait
                    seconds.append(action(page))
                    context.close()
                load = os.getloadavg()[0]
                median = statistics.median(seconds)
                results.append(
                    {"action": name, "goal_s": goal, "s": seconds, "median_s": median, "load_average_1min": load}
                )
                print(f"{name}: {median:.2f} s (load {load:.2f})", flush=True)
        finally:
            browser.close()
    return results


def measure(url: str, rounds: int, wanted: Callable[[str], bool]) -> list[dict]:
    from playwright.sync_api import sync_playwright

    results: list[dict] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            for name, text, repeat_text, model, locale, (width, height) in SCENARIOS:
                if not wanted(f"Lab: analyse, {name}"):
                    continue
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
        "# Every tab in a real browser",
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
    lines += [
        "",
        "## Every tab's actions",
        "",
        "Each round a new page (English, 1280 px) set up as the action needs (the tab open, the Lab's analysis of a "
        "sentence on the DCNN, ...), then the action, timed from its click (the first pointer press, click or key "
        f"after it was armed) until the page stopped changing ({QUIET_MS} ms without a change, no progress "
        "indicator, the element it changes changed). A link's page load is timed from the navigation's start.",
        "",
        "| action | median (s) | goal (s) | every round (s) | load (1 min) |",
        "|---|---:|---:|---|---:|",
    ]
    for r in report["actions"]:
        rounds = ", ".join(f"{s:.2f}" for s in r["s"])
        over = " **over**" if r["median_s"] > r["goal_s"] else ""
        lines.append(
            f"| {r['action']} | {r['median_s']:.2f}{over} | {r['goal_s']:.1f} | {rounds} | "
            f"{r['load_average_1min']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped benchmark stops its app too (finally:)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="new pages per scenario (each: fresh + repeat)")
    parser.add_argument("--checkpoints", default=None, help="LAB_CHECKPOINTS for the app (default: the bundled)")
    parser.add_argument("--out", default=str(PROJECT_ROOT / "reports" / "browser"), help="writes OUT.json and OUT.md")
    parser.add_argument(
        "--only",
        default="",
        help="only the scenarios and actions whose name contains this (case ignored), e.g. 'treebank: pick'; "
        "the report then holds only those",
    )
    args = parser.parse_args(argv)
    load_before = list(os.getloadavg())
    server, url = start_app(args.checkpoints)

    def wanted(name: str) -> bool:
        return args.only.lower() in name.lower()

    try:
        results = measure(url, args.rounds, wanted)
        done = measure_actions(url, args.rounds, wanted)
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
        "actions": done,
    }
    Path(args.out + ".json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    Path(args.out + ".md").write_text(markdown(report), encoding="utf-8")
    print(f"wrote {args.out}.json and {args.out}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
