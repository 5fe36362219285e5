"""Every command-line flag of the project's CLIs says what it does in `--help`: each function that builds an
argparse parser (found in the source) is called, a main(argv) with its parsing stopped, and every argument of
the parser and of its sub-commands must carry `help=`."""

import argparse
import ast
import importlib
import inspect

import pytest

from core.data import PROJECT_ROOT

PACKAGES = ("core", "service", "web", "demo", "tools")


def parser_builders() -> list[tuple[str, str]]:
    """(module, function) for each function whose body calls ArgumentParser(...)."""
    found = []
    files = [f for top in PACKAGES for f in sorted((PROJECT_ROOT / top).rglob("*.py"))] + [PROJECT_ROOT / "app.py"]
    for path in files:
        module = ".".join(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(call, ast.Call)
                and getattr(call.func, "attr", getattr(call.func, "id", "")) == "ArgumentParser"
                for call in ast.walk(node)
            ):
                found.append((module, node.name))
    return found


class Built(Exception):
    """Raised where the parser would parse: it carries the parser the function built."""

    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser


def every_parser(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """The parser and its sub-commands' parsers, each by its prog."""
    found = [(parser.prog, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += every_parser(sub)
    return found


BUILDERS = parser_builders()


def test_the_scan_finds_the_clis():
    assert {
        ("core.training.train", "parse_args"),
        ("tools.bench.loadtest", "arguments"),
        ("tools.release.bundle", "main"),
    } <= set(BUILDERS)


@pytest.mark.parametrize(("module", "function"), BUILDERS, ids=[f"{m}.{f}" for m, f in BUILDERS])
def test_every_flag_has_help(module, function, monkeypatch):
    def stop(self, *args, **kwargs):
        raise Built(self)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", stop)
    build = getattr(importlib.import_module(module), function)
    if inspect.signature(build).parameters:  # a main(argv): stopped where it would parse
        with pytest.raises(Built) as built:
            build([])
        parser = built.value.parser
    else:  # a builder that returns its parser
        parser = build()
    silent = [
        f"{prog}: {'/'.join(action.option_strings) or action.dest}"
        for prog, parser in every_parser(parser)
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) and not action.help
    ]
    assert not silent, f"flags without help=: {silent}"
