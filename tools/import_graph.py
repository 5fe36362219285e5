"""The project's own import graph, read from the source (AST) without importing anything.

    python -m tools.import_graph              # module -> the project modules it imports; exit 1 on a cycle
    python -m tools.import_graph --packages   # the same, collapsed to packages (core.data, tools.bench, ...)

Every import counts, including those inside functions: a lazy import still ties two modules together
(it only hides a cycle until the function runs). An import names the deepest project module it reaches:
`from core.data import tasks` is an edge to core.data.tasks, `from core.data import PROJECT_ROOT` one to
core.data. tests/unit/test_architecture.py asserts the layering on the same graph.
"""

import argparse
import ast
import functools
import sys
from pathlib import Path

from core.data import PROJECT_ROOT

PACKAGES = ("core", "service", "web", "demo", "tools")
SCRIPTS = ("app.py",)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules(root: Path = PROJECT_ROOT) -> dict[str, Path]:
    """{dotted module name: source file} of the project's packages and top-level scripts."""
    modules = {module_name(path, root): path for package in PACKAGES for path in sorted((root / package).rglob("*.py"))}
    modules.update({Path(script).stem: root / script for script in SCRIPTS if (root / script).is_file()})
    return modules


@functools.cache  # the layering tests ask for each file's syntax tree many times over
def syntax_tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def imported_names(path: Path, module: str) -> set[str]:
    """Every dotted name `path` imports (anywhere in it), relative imports resolved; for `from X import Y`
    both X and X.Y, since Y may be a submodule."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(syntax_tree(path)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def _deepest_project_module(name: str, modules: dict[str, Path]) -> str | None:
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end])
    return None


def import_graph(root: Path = PROJECT_ROOT) -> dict[str, set[str]]:
    """{module: the project modules it imports}, self-references (a package's own names) left out."""
    modules = project_modules(root)
    graph = {}
    for module, path in modules.items():
        targets = {_deepest_project_module(name, modules) for name in imported_names(path, module)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph with every module replaced by its package (a top-level module stands for itself)."""

    def package(module: str) -> str:
        parts = module.split(".")
        return ".".join(parts[:2]) if len(parts) > 2 else parts[0] if len(parts) == 2 else module

    collapsed: dict[str, set[str]] = {}
    for module, targets in graph.items():
        collapsed.setdefault(package(module), set()).update(package(t) for t in targets)
    return {p: targets - {p} for p, targets in collapsed.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None (depth-first search, modules in sorted order)."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" once fully explored
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return path[path.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.import_graph", description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", action="store_true", help="collapse modules into their packages")
    args = parser.parse_args(argv)
    graph = import_graph()
    shown = package_graph(graph) if args.packages else graph
    for module in sorted(shown):
        print(f"{module} -> {', '.join(sorted(shown[module])) or '(nothing of ours)'}")
    if cycle := find_cycle(graph):
        print(f"import cycle: {' -> '.join(cycle)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
