"""Every repository path the README and docs/ name exists, and every relative Markdown link reaches a file: a
moved file (tests/ regrouped, service/ out of core/) must take its mentions along."""

import re

import pytest

from core.data import PROJECT_ROOT

PATH = re.compile(
    r"(?<![\w/.-])((?:app\.py|(?:core|service|demo|tools|tests|docs|configs|probes|checkpoints)/[\w./*<>-]*[\w*>]))"
)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CODE = re.compile(r"`[^`\n]*`")
PAGES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_every_path_a_page_names_exists(page):
    text = page.read_text(encoding="utf-8")
    named = {m.group(1).rstrip(".") for m in PATH.finditer(text)}
    missing = sorted(p for p in named if not any(c in p for c in "*<>") and not (PROJECT_ROOT / p).exists())
    broken = sorted(
        target
        for target in (m.group(1) for m in LINK.finditer(CODE.sub("", text)))  # a link in a code span is text
        if not target.startswith(("http:", "https:", "mailto:")) and not (page.parent / target).exists()
    )
    assert not missing and not broken, f"named but absent: {missing}; links that reach nothing: {broken}"


def test_the_scan_finds_what_it_should():
    assert PATH.findall("see `service/jobs.py` and tests/unit/test_cleanup.py.") == [
        "service/jobs.py",
        "tests/unit/test_cleanup.py",
    ]
    assert LINK.findall("[a](space.md#x) [b](https://x.org)") == ["space.md", "https://x.org"]
    assert not LINK.findall(CODE.sub("", "a file named `x[a](javascript:alert(8)).csv`"))
