"""Every probe pass rate docs/analysis.md quotes is the one reports/probes.json holds (`make probes` writes it):
each table after a `<!-- probes table: SUITE -->` marker, cell by cell, and each number in the prose before a
`<!-- probes: SUITE / MODELS / CAPABILITIES; OR TESTS -->` marker (a range `a-b %` spans the named values; a
`<!-- probes: SUITE / seconds -->` marker quotes the run's seconds). A percentage of the Probes section without
a marker fails too, so a number cannot be quoted from memory."""

import json
import re

import pytest

from core.data import PROJECT_ROOT

GUIDE = PROJECT_ROOT / "docs" / "analysis.md"
REPORT = PROJECT_ROOT / "reports" / "probes.json"
TABLE = re.compile(r"<!-- probes table: (\w+) -->\n(\|.*\|\n)\|[-:|]+\|\n((?:\|.*\|\n)+)")
QUOTED = re.compile(r"(\d+(?:\.\d+)?)(?:-(\d+))? (?:%|s)<!-- probes:\s+([^>]*?)\s*-->")
UNSOURCED = re.compile(r"\d+(?:-\d+)? %(?!<!-- probes:)")


def _suites() -> dict:
    return {suite["suite"]: suite for suite in json.loads(REPORT.read_text(encoding="utf-8"))["suites"]}


def _probes_section(text: str) -> str:
    start = text.index("## Probes")
    return text[start : text.index("\n## ", start + 1)]


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")][1:]  # the label column left out


def _table_mismatches(section: str, suites: dict) -> list[str]:
    tables = TABLE.findall(section)
    found = [f"tables for {sorted(s for s, *_ in tables)}, the report has {sorted(suites)}"]
    found = found if sorted(s for s, *_ in tables) != sorted(suites) else []
    for name, header, body in tables:
        suite = suites[name]
        expected = [[str(round(rates[m] * 100)) for m in suite["models"]] for rates in suite["pass_rates"].values()]
        if _cells(header) != suite["models"] or [_cells(row) for row in body.splitlines()] != expected:
            found.append(f"the {name} table")
    return found


def _named_values(suite: dict, spec: str) -> list[float]:
    """The values a marker names: percentages (rounded as the guide words them), or the run's seconds."""
    parts = [p.strip() for p in spec.split("/")]
    if parts == ["seconds"]:
        return [round(suite["seconds"], 2)]
    tests = {name: {m: c["rate"] for m, c in row.items()} for name, row in suite["test_cells"].items()}
    rates = {**suite["pass_rates"], **tests}
    models, keys = parts[0].split(","), parts[1].split(";")
    return [round(rates[key.strip()][m.strip()] * 100) for key in keys for m in models]


def _quote_mismatches(section: str, suites: dict) -> list[str]:
    found = []
    for low, high, marker in QUOTED.findall(section):
        suite_name, spec = " ".join(marker.split()).split(" / ", 1)
        values = _named_values(suites[suite_name], spec)
        quoted = [float(low), float(high)] if high else [float(low)]
        if quoted != ([min(values), max(values)] if high else [values[0]]) or (not high and len(set(values)) > 1):
            found.append(f"{low}{'-' + high if high else ''} against {values} ({marker})")
    return found


def test_every_table_cell_is_the_reports():
    assert _table_mismatches(_probes_section(GUIDE.read_text(encoding="utf-8")), _suites()) == []


def test_every_quoted_number_is_the_reports():
    section = _probes_section(GUIDE.read_text(encoding="utf-8"))
    assert len(QUOTED.findall(section)) >= 10
    assert _quote_mismatches(section, _suites()) == []


def test_no_percentage_without_its_source():
    assert UNSOURCED.findall(_probes_section(GUIDE.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [("| 42 | 2 | 11 |", "| 42 | 2 | 0 |"), ("(2-11 %", "(2-9 %")],
)
def test_a_number_changed_in_the_guide_is_found(old, new):
    text = GUIDE.read_text(encoding="utf-8")
    assert old in text
    section = _probes_section(text.replace(old, new))
    assert _table_mismatches(section, _suites()) + _quote_mismatches(section, _suites()) != []
