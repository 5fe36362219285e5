"""Screenshots of the Lab at a phone's, a tablet's and a laptop's size, in English and Chinese.

`python -m tools.bench.screens` (`make screens`) starts `python app.py` on the bundled checkpoints, analyses one
sentence with all five models in Debian chromium at each size of SIZES and each language, and writes two
captures of the screen (not the whole page) per size and language into reports/screens/: `<size>-<lang>-top.png`,
the page as it opens with the sentence typed, and `<size>-<lang>-result.png`, scrolled to the result. Each is
stored with a 256-colour palette, so that a capture stays under ~200 KB.

It also measures the text of every figure as shown (CSS px: its font size times the drawing's scale), per
figure kind, size and language (Traditional Chinese too), of the analysis and of the Treebank tab (the tree of
its first sentence, the dataset charts), and on long sentences (a 36-word review, a long Chinese one, the Treebank's
first test tree of 21 words or more), into reports/screens/text_sizes.json (docs/lab.md, "On every screen").
"""

import argparse
import io
import json
import signal
import statistics
import sys
from pathlib import Path

from PIL import Image

from core.data import PROJECT_ROOT
from tools.bench.browser import ARGS, CHROMIUM, OBSERVER, settle_after_click, start_app

# (name, width, height): a phone, a tablet upright, a laptop
SIZES = [("phone", 390, 844), ("tablet", 768, 1024), ("laptop", 1400, 900)]
# (name, browser locale, sentence): the page's language follows the browser's
LANGUAGES = [
    ("en", "en-US", "The acting is great, but the plot is dull and far too long."),
    ("zh", "zh-CN", "这部电影不怎么好看，但是演员很棒"),
]
# the panels below the screen are laid out only when scrolled to (content-visibility): no placeholder boxes
SHOW_ALL = "#result .model-panel { content-visibility: visible !important; }"
MEASURED = [*LANGUAGES, ("zh-TW", "zh-TW", LANGUAGES[1][2])]  # text sizes: Taiwan's page too
# long sentences, measured only: a 36-word review (and a long Chinese one) on the Lab, and the Treebank's first
# test sentence of at least TREE_WORDS words (the tree the issue measured shrunk to 0.54x at 768 px)
LONG = [
    (
        "en",
        "en-US",
        "The acting is great and the music is lovely, but the plot is dull, the jokes are old, the ending drags on "
        "for far too long and nobody in the theatre seemed to care at all.",
    ),
    (
        "zh",
        "zh-CN",
        "这部电影的演员很棒，音乐也很美，但是故事太无聊了，笑话都很老套，结尾拖得太长，整个电影院里好像没有人在乎。",
    ),
]
TREE_WORDS = 21
# each figure's text sizes as shown (font size x the drawing's scale on the page) by figure kind, under `where`
TEXT_SIZES = """(where) => {
  const kinds = {};
  for (const f of document.querySelectorAll(where + ' figure.view')) {
    const svg = f.querySelector(':scope > svg'), box = svg.getBoundingClientRect();
    if (!box.width) continue;
    const scale = box.width / svg.viewBox.baseVal.width, kind = f.dataset.name.replace(/^[a-z_]+-\\d+-/, '');
    for (const text of svg.querySelectorAll('text'))
      if (text.textContent.trim()) (kinds[kind] ||= []).push(scale * parseFloat(text.getAttribute('font-size')));
  }
  return kinds;
}"""


def save(png: bytes, path: Path) -> int:
    """The capture with a 256-colour palette (the page's flat colours survive it); its size in bytes."""
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT)
    image.save(path, optimize=True)
    return path.stat().st_size


def summary(sizes: dict[str, list[float]]) -> dict[str, dict]:
    return {
        kind: {"median": round(statistics.median(v), 1), "min": round(min(v), 1), "texts": len(v)}
        for kind, v in sorted(sizes.items())
    }


def text_sizes(page, lang: str) -> dict[str, dict]:
    """The analysis's figures (every panel open), then the Treebank tab's tree and dataset charts."""
    from demo.i18n import t

    page.evaluate("() => document.querySelectorAll('#result details').forEach(d => d.open = true)")
    sizes = page.evaluate(TEXT_SIZES, "#result")
    name = t("tab_treebank", lang)
    tab = page.get_by_role("tab", name=name, exact=True)
    if not tab.count():  # a narrow screen folds the last tabs into "more tabs"
        page.locator(".overflow-menu button").first.click()
        tab = page.locator(".overflow-menu").get_by_role("button", name=name, exact=True)
    tab.click()
    page.locator("#tb-tree figure.view > svg").wait_for()
    page.locator("#tb-length figure.view > svg").wait_for()
    page.wait_for_timeout(500)
    for where in ("#tb-tree", "#tb-length", "#tb-confusion"):
        sizes |= page.evaluate(TEXT_SIZES, where)
    return summary(sizes)


def long_tree_link(url: str) -> str:
    """The Treebank tab opened on the first SST test sentence of at least TREE_WORDS words (a shared link)."""
    from core.analysis.treebank import Treebank
    from demo.links import LinkState, state_to_query

    trees = Treebank.load().trees["test"]
    index = next(i for i, tree in enumerate(trees) if len(tree.words) >= TREE_WORDS)
    return url + "?" + state_to_query(LinkState(tab="treebank", task="sst5", split="test", sentence=index))


def long_text_sizes(browser, url: str, width: int, height: int) -> dict[str, dict]:
    """Every figure's text sizes on long sentences: the Lab's (each language of LONG), the Treebank's long tree."""
    measured = {}
    for lang, locale, text in LONG:
        context = browser.new_context(locale=locale, viewport={"width": width, "height": height})
        context.add_init_script(OBSERVER)
        page = context.new_page()
        page.goto(url)
        page.locator("#run").wait_for()
        page.add_style_tag(content=SHOW_ALL)
        settle_after_click(page, text)
        page.evaluate("() => document.querySelectorAll('#result details').forEach(d => d.open = true)")
        length = f"{len(text.split())} words" if lang == "en" else f"{len(text)} characters"
        measured[f"{width} px {locale}, {length}"] = summary(page.evaluate(TEXT_SIZES, "#result"))
        if lang == "en":
            page.goto(long_tree_link(url))
            page.locator("#tb-tree figure.view > svg").wait_for()
            page.wait_for_timeout(500)
            measured[f"{width} px {locale}, Treebank tree of {TREE_WORDS}+ words"] = summary(
                page.evaluate(TEXT_SIZES, "#tb-tree")
            )
        context.close()
    return measured


def capture(url: str, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    written, measured = [], {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            for size, width, height in SIZES:
                for lang, locale, text in MEASURED:
                    context = browser.new_context(locale=locale, viewport={"width": width, "height": height})
                    context.add_init_script(OBSERVER)  # what settle_after_click reads
                    page = context.new_page()
                    page.goto(url)
                    page.locator("#run").wait_for()
                    page.wait_for_timeout(1000)
                    page.add_style_tag(content=SHOW_ALL)
                    settle_after_click(page, text)
                    if lang == "zh-TW":  # measured only: its captures would repeat the Simplified page's
                        measured[f"{width} px {locale}"] = text_sizes(page, lang)
                        context.close()
                        continue
                    page.evaluate("window.scrollTo(0, 0)")
                    top = out / f"{size}-{lang}-top.png"
                    print(f"{top.name}: {save(page.screenshot(), top) // 1024} KB", flush=True)
                    page.locator("#summary").evaluate("e => e.scrollIntoView({block: 'start'})")
                    page.wait_for_timeout(300)
                    result = out / f"{size}-{lang}-result.png"
                    print(f"{result.name}: {save(page.screenshot(), result) // 1024} KB", flush=True)
                    written += [top, result]
                    measured[f"{width} px {locale}"] = text_sizes(page, lang)
                    context.close()
                measured |= long_text_sizes(browser, url, width, height)
        finally:
            browser.close()
    (out / "text_sizes.json").write_text(json.dumps(measured, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for where, kinds in measured.items():
        print(where, " · ".join(f"{k} {v['median']}/{v['min']}" for k, v in kinds.items()), flush=True)
    return written


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run stops its app too (finally:)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", default=None, help="LAB_CHECKPOINTS for the app (default: the bundled)")
    parser.add_argument("--out", default=str(PROJECT_ROOT / "reports" / "screens"), help="the folder to write into")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    server, url = start_app(args.checkpoints)
    try:
        capture(url, out)
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
