"""docs/commands.md, written from the Makefile and the files it includes (bench.mk): every target with a `## `
description, under the files' own section headings (`# -- train ---`). `make commands` rewrites it;
tests/unit/test_doc_paths.py fails while the two differ. `python -m tools.commands --help`."""

import argparse
import re
from pathlib import Path

from core.data import PROJECT_ROOT

MAKEFILE = PROJECT_ROOT / "Makefile"
COMMANDS = PROJECT_ROOT / "docs" / "commands.md"
SECTION = re.compile(r"^# -- (.+?) -+$")
TARGET = re.compile(r"^([a-zA-Z0-9_%-]+):[^#=]*## (.+)$")
INCLUDE = re.compile(r"^-?include\s+(\S+)$")
INTRO = """# Make targets

Written from the Makefile and bench.mk (measurement and research) by `make commands` (each target's `## `
description); `make help` prints the same list.
"""


def makefile_lines(makefile: Path = MAKEFILE) -> list[str]:
    """The Makefile's lines with each included file's lines in place of its `include` line, as make reads them."""
    lines = []
    for line in makefile.read_text(encoding="utf-8").splitlines():
        if included := INCLUDE.match(line):
            lines += makefile_lines(makefile.parent / included.group(1))
        else:
            lines.append(line)
    return lines


def sections(makefile: Path = MAKEFILE) -> list[tuple[str, list[tuple[str, str]]]]:
    """[(section heading, [(target, description), ...]), ...] in the order make reads them."""
    found: list[tuple[str, list[tuple[str, str]]]] = [("", [])]
    for line in makefile_lines(makefile):
        if heading := SECTION.match(line):
            found.append((heading.group(1), []))
        elif target := TARGET.match(line):
            found[-1][1].append((target.group(1), target.group(2).strip()))
    return [(heading, targets) for heading, targets in found if targets]


def cell(text: str) -> str:
    """A description as a table cell: its pipes escaped."""
    return text.replace("|", "\\|")


def markdown(makefile: Path = MAKEFILE) -> str:
    """docs/commands.md's text: one table per section."""
    parts = [INTRO]
    for heading, targets in sections(makefile):
        rows = "\n".join(f"| `make {name}` | {cell(text)} |" for name, text in targets)
        parts.append(f"## {heading[0].upper() + heading[1:]}\n\n| target | what it does |\n|---|---|\n{rows}\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=COMMANDS, help="the file to write (default docs/commands.md)")
    args = parser.parse_args(argv)
    args.out.write_text(markdown(), encoding="utf-8")
    print(f"{args.out}: {sum(len(targets) for _, targets in sections())} targets")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
