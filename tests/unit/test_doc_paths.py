"""Every repository path the README, docs/ and reports/ name exists, and every relative Markdown link reaches a
file: a moved file (tests/ regrouped, service/ out of core/, reports out of docs/) must take its mentions along.
docs/ stays prose and its figures, under 1 MB; docs/models.md's file map names every module."""

import fnmatch
import re

import pytest

from core.data import PROJECT_ROOT
from tools.commands import markdown, sections

PATH = re.compile(
    r"(?<![\w/.-])((?:app\.py|bench\.mk|(?:core|service|web|demo|tools|tests|docs|reports|configs|probes|checkpoints)/[\w./*<>-]*[\w*>]))"
)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CODE = re.compile(r"`[^`\n]*`")
PAGES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").rglob("*.md"))]
PAGES += sorted((PROJECT_ROOT / "reports").rglob("*.md"))
HISTORY = PROJECT_ROOT / "docs" / "history"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_every_path_a_page_names_exists(page):
    text = page.read_text(encoding="utf-8")
    # docs/history/ is a record of what was: it names files removed since, but its links still reach
    named = set() if HISTORY in page.parents else {m.group(1).rstrip(".") for m in PATH.finditer(text)}
    missing = sorted(p for p in named if not any(c in p for c in "*<>") and not (PROJECT_ROOT / p).exists())
    broken = sorted(
        target
        for target in (m.group(1) for m in LINK.finditer(CODE.sub("", text)))  # a link in a code span is text
        if not target.startswith(("http:", "https:", "mailto:")) and not (page.parent / target).exists()
    )
    assert not missing and not broken, f"named but absent: {missing}; links that reach nothing: {broken}"


# a module named without its folder (`runner.py`, `tabs/lab.py`): a file of the project ends so; the pages about
# the authors' own code name their files, which live outside the project
BARE_MODULE = re.compile(r"`([\w/]+\.py)`")
OTHER_PEOPLES_CODE = ("oracle.md", "dcnn_peer.md")
TRACKED = [
    str(f.relative_to(PROJECT_ROOT))
    for top in ("core", "service", "web", "demo", "tools", "tests")
    for f in (PROJECT_ROOT / top).rglob("*.py")
] + ["app.py"]


@pytest.mark.parametrize("page", [p for p in PAGES if p.name not in OTHER_PEOPLES_CODE], ids=lambda p: p.name)
def test_every_module_a_page_names_without_its_folder_exists(page):
    named = {m.group(1) for m in BARE_MODULE.finditer(page.read_text(encoding="utf-8"))}
    missing = sorted(n for n in named if not any(f == n or f.endswith("/" + n) for f in TRACKED))
    assert not missing, f"{page.name} names modules the project does not have: {missing}"


def test_the_scan_finds_what_it_should():
    assert PATH.findall("see `service/jobs.py`, bench.mk and tests/unit/test_cleanup.py.") == [
        "service/jobs.py",
        "bench.mk",
        "tests/unit/test_cleanup.py",
    ]
    assert LINK.findall("[a](space.md#x) [b](https://x.org)") == ["space.md", "https://x.org"]
    assert BARE_MODULE.findall("`runner.py` (the lanes), `tabs/lab.py`, `x.csv`") == ["runner.py", "tabs/lab.py"]
    assert not LINK.findall(CODE.sub("", "a file named `x[a](javascript:alert(8)).csv`"))


def test_docs_is_prose_under_a_megabyte():
    """What a command writes goes to reports/ (reports/README.md): docs/ is what people write and read."""
    files = [f for f in (PROJECT_ROOT / "docs").rglob("*") if f.is_file()]
    size = sum(f.stat().st_size for f in files)
    largest = sorted(files, key=lambda f: -f.stat().st_size)[:3]
    assert size < 1_000_000, f"docs/ holds {size:,} bytes; largest: {largest}"
    assert not [f.name for f in files if f.suffix == ".json"], "a JSON report belongs in reports/"


def test_the_file_map_names_every_module():
    """docs/models.md, "File map": each module of core/, service/, web/, demo/ and tools/ by its path, by a glob, or by
    its name in the row of its folder (`core/data/` ... `sst.py`)."""
    text = (PROJECT_ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    rows = [line for line in text.split("## File map", 1)[1].split("\n## ", 1)[0].splitlines() if line.startswith("|")]

    def named(path: str) -> bool:
        for row in rows:
            heads = re.findall(r"`([^`]+)`", row.split("|")[1])  # the row's first cell: what it describes
            if any(path == h or ("*" in h and fnmatch.fnmatch(path, h)) for h in heads):
                return True
            for folder in (h for h in heads if h.endswith("/") and path.startswith(h)):
                if re.search(rf"(?<![\w/.]){re.escape(path[len(folder) :])}", row):
                    return True
        return False

    modules = sorted(
        str(f.relative_to(PROJECT_ROOT))
        for top in ("core", "service", "web", "demo", "tools")
        for f in (PROJECT_ROOT / top).rglob("*.py")
        if f.name not in ("__init__.py", "__main__.py")
    )
    assert [m for m in modules if not named(m)] == []


def test_commands_md_is_the_makefile_s_targets():
    """docs/commands.md is written from the Makefile and bench.mk (make commands): every target with a description."""
    assert (PROJECT_ROOT / "docs" / "commands.md").read_text(encoding="utf-8") == markdown(), "make commands"
    listed = {name for _, targets in sections() for name, _ in targets}
    assert {"demo", "test", "test-quick", "lint", "commands", "first-answer", "loadtest", "oracle"} <= listed


def test_the_docs_index_names_every_guide():
    index = (PROJECT_ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    table = index.split("## Guides", 1)[1]
    rows = [line for line in table.strip().splitlines() if line.strip()]
    assert all(line.startswith("|") for line in rows), "one table, no blank line or prose inside it"
    guides = sorted(f.name for f in (PROJECT_ROOT / "docs").iterdir() if f.suffix in (".md", ".ipynb"))
    assert [g for g in guides if g != "README.md" and f"]({g})" not in table] == []
