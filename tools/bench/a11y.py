"""The lab's accessibility by axe-core (WCAG 2.0 and 2.1, levels A and AA) in Debian chromium, every tab.

`python -m tools.bench.a11y` (`make a11y`) starts `python app.py` on the bundled checkpoints and, at each width
of WIDTHS and each language of LANGUAGES (the browser's locale, hence its Accept-Language), opens every tab of
a new page and runs axe-core on it (the copy bundled in axe-playwright-python, with the rules of TAGS); then it
analyses a sentence with all five models on the Lab (and opens every figure's table), runs the Probes tab's
suite, and runs axe on every tab once more. It writes reports/a11y.md: the violations per rule for every page,
width and language, each violation's elements, the machine, the date and the versions of axe-core and chromium.
"""

import argparse
import datetime
import re
import signal
import sys
import time
from pathlib import Path

from axe_playwright_python.sync_playwright import Axe

from core.data import PROJECT_ROOT
from tools.bench.browser import ARGS, CHROMIUM, OBSERVER, settle_after_click, start_app
from tools.bench.machine import machine_info

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]  # axe-core's tags of the WCAG 2.0/2.1 A and AA success criteria
WIDTHS = {390: 844, 768: 1024, 1400: 900}  # a phone, a tablet upright, a laptop: width -> height (CSS px)
# the page's language follows the browser's locale: (the locale, the page's words in demo.i18n, the sentence
# "all five" analyses)
LANGUAGES = {
    "en": ("en-US", "en", "The acting is great, but the plot is dull and far too long."),
    "zh-CN": ("zh-CN", "zh", "这部电影不怎么好看，但是演员很棒"),
    "zh-TW": ("zh-TW", "zh-TW", "这部电影不怎么好看，但是演员很棒"),
}
TABS = {"lab": "tab_lab", "probes": "tab_probes", "treebank": "tab_treebank", "train": "tab_train"}
TABS |= {"checkpoints": "tab_models", "api": "tab_api"}  # ui.py's tab ids -> their names' locale keys
QUIET_MS = 800  # a tab has settled when nothing on the page changed for this long
AXE = Axe()


def violations(page) -> list[dict]:
    """axe-core's violations of TAGS on the page as it is now: rule, impact, help and the elements (selector,
    markup and the first check's message)."""
    found = AXE.run(page, options={"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"]})
    return [
        {
            "rule": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": [
                {
                    "target": " ".join(map(str, node["target"])),
                    "html": node["html"][:160],
                    "message": next((c["message"] for k in ("any", "all", "none") for c in node[k]), ""),
                }
                for node in v["nodes"]
            ],
        }
        for v in found.response["violations"]
    ]


def axe_version(page) -> str:
    """The version of the axe-core that `violations` injected into the page."""
    return page.evaluate("() => window.axe ? axe.version : ''")


def quiet(page, ms: int = QUIET_MS, timeout_ms: int = 30_000) -> None:
    """Wait until nothing on the page changed for `ms` (OBSERVER's stamp) and no progress indicator is left."""
    page.wait_for_function(
        """ms => performance.now() - window.__lastChange > ms
          && !document.querySelector('.progress-text, .eta-bar, .meta-text')""",
        arg=ms,
        timeout=timeout_ms,
        polling=200,
    )


def open_tab(page, tab: str, lang: str) -> None:
    """Click the tab with ui.py's id `tab`; on a narrow screen the last tabs are under Gradio's "more tabs" menu,
    whose buttons carry only their names (in demo.i18n's language `lang`)."""
    from demo.i18n import t

    button = page.locator(f'button[role="tab"][data-tab-id="{tab}"]')
    if button.count() and button.is_visible():
        button.click()
    else:
        page.locator(".overflow-menu > button").click()
        page.locator(".overflow-dropdown").get_by_role("button", name=t(TABS[tab], lang), exact=True).click()
    quiet(page)


def new_page(browser, url: str, locale: str, width: int, height: int):
    """A new page at `url` in its own context (its own visitor), settled."""
    context = browser.new_context(locale=locale, viewport={"width": width, "height": height})
    context.add_init_script(OBSERVER)  # what quiet and settle_after_click read
    page = context.new_page()
    page.goto(url)
    page.locator("#run").wait_for()
    quiet(page)
    return page


def open_tables(page) -> None:
    """Every figure's "show as a table" open, so that axe checks the tables as shown."""
    page.evaluate("() => document.querySelectorAll('#result details.figure-data').forEach(d => d.open = true)")
    quiet(page)


def run_probes(page) -> None:
    """Run the Probes tab's suite (the tab open) and wait for its results to settle."""
    page.locator("#probe-run").click()
    page.locator("#probe-summary").get_by_text(re.compile(r"\d")).first.wait_for()
    quiet(page)


def audit(url: str, widths: list[int], languages: list[str]) -> tuple[list[dict], dict]:
    """Every tab before and after "all five" at each width and language: one record per (tab, state, width,
    language) with its violations; and the versions of axe-core and chromium."""
    from playwright.sync_api import sync_playwright

    records, versions = [], {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        versions["chromium"] = browser.version
        try:
            for width in widths:
                for lang in languages:
                    locale, words, sentence = LANGUAGES[lang]
                    page = new_page(browser, url, locale, width, WIDTHS[width])
                    for state in ("before", "after"):
                        if state == "after":
                            open_tab(page, "lab", words)
                            settle_after_click(page, sentence)
                            open_tables(page)
                        for tab in TABS:
                            open_tab(page, tab, words)
                            if tab == "probes" and state == "after":  # its own analysis: the suite's results
                                run_probes(page)
                            found = violations(page)
                            records.append(
                                {"tab": tab, "state": state, "width": width, "lang": lang, "violations": found}
                            )
                            print(
                                f"{width} px {lang} {tab} {state}: "
                                + (", ".join(f"{v['rule']} ×{len(v['nodes'])}" for v in found) or "0 violations"),
                                flush=True,
                            )
                    versions["axe-core"] = axe_version(page)
                    page.context.close()
        finally:
            browser.close()
    return records, versions


def markdown(records: list[dict], versions: dict, machine: dict, date: str, command: str, minutes: float) -> str:
    """reports/a11y.md: the totals, a row per page (tab and state) with its violations per width and language,
    then every violation's elements."""
    total = sum(len(v["nodes"]) for r in records for v in r["violations"])
    columns = sorted({(r["width"], r["lang"]) for r in records}, key=lambda c: (c[0], list(LANGUAGES).index(c[1])))
    lines = [
        "# Accessibility: axe-core on every tab",
        "",
        f"`{command}` on {date}: axe-core {versions.get('axe-core', '?')} (axe-playwright-python's bundled copy), "
        f"rules tagged {', '.join(TAGS)} (WCAG 2.0 and 2.1, levels A and AA), in Debian chromium "
        f"{versions.get('chromium', '?')}; `python app.py` on the bundled checkpoints; commit `{machine['commit']}`, "
        f"{machine['cpu']}, {machine['cpus_usable']} usable cores, load average "
        f"{' / '.join(f'{x:.2f}' for x in machine['load_average'])} (1 / 5 / 15 min).",
        "",
        'Each page is a new visitor\'s, every tab opened in turn (*before*); then "all five" analyses a sentence '
        "on the Lab, every figure's table is opened, the Probes tab runs its suite and every tab is checked again "
        f"(*after*). A cell is the number of elements that violate a rule, by rule; 0: none. The run took "
        f"{minutes:.0f} minutes.",
        "",
        f"**{total} violating elements in {len(records)} checks.**",
        "",
        "| page | " + " | ".join(f"{w} px {lang}" for w, lang in columns) + " |",
        "|---|" + "---:|" * len(columns),
    ]
    by_cell = {(r["tab"], r["state"], r["width"], r["lang"]): r["violations"] for r in records}
    for tab in TABS:
        for state in ("before", "after"):
            cells = [
                ", ".join(f"{v['rule']} {len(v['nodes'])}" for v in by_cell.get((tab, state, *c), [])) or "0"
                for c in columns
            ]
            lines.append(f"| {tab}, {state} | " + " | ".join(cells) + " |")
    details = [
        f"- {r['width']} px {r['lang']}, {r['tab']} {r['state']}: `{v['rule']}` ({v['impact']}, {v['help']}): "
        + "; ".join(f"`{n['target']}`: {n['message']}" for n in v["nodes"])
        for r in records
        for v in r["violations"]
    ]
    if details:
        lines += ["", "## Every violation", "", *details]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run stops its app too (finally:)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", default=None, help="LAB_CHECKPOINTS for the app (default: the bundled)")
    parser.add_argument(
        "--widths", default=",".join(map(str, WIDTHS)), help=f"viewport widths in CSS px, of {list(WIDTHS)}"
    )
    parser.add_argument("--languages", default=",".join(LANGUAGES), help=f"page languages, of {list(LANGUAGES)}")
    parser.add_argument("--out", default=str(PROJECT_ROOT / "reports" / "a11y.md"), help="the report to write")
    args = parser.parse_args(argv)
    widths, languages = [int(w) for w in args.widths.split(",")], args.languages.split(",")
    if unknown := [w for w in widths if w not in WIDTHS] + [x for x in languages if x not in LANGUAGES]:
        parser.error(f"unknown width or language: {unknown}")
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    start = time.perf_counter()
    server, url = start_app(args.checkpoints)
    try:
        records, versions = audit(url, widths, languages)
    finally:
        server.terminate()
        server.wait(timeout=10)
    minutes = (time.perf_counter() - start) / 60
    command = ("python -m tools.bench.a11y " + " ".join(argv if argv is not None else sys.argv[1:])).strip()
    report = markdown(records, versions, machine_info(), date, command, minutes)
    Path(args.out).write_text(report, encoding="utf-8")
    print(f"wrote {args.out}")
    return 1 if any(r["violations"] for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
