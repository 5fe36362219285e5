"""The layering, read from the source (tools.import_graph, AST only): `core` is the library that the
app, the trainer and the CLIs import (text, data, models, the training loop, the checkpoint format, analysis and
Lab's predictions); `service` is the Space's plumbing around it (jobs, workers, the Ray driver, cleanup,
publishing, owners, the served Lab and its user models, budgets, settings); `web` adapts them to Gradio's server
(lanes, REST, sessions, owners, training queues); `demo` is the page on top, and `app` starts it; `tools` measure
and publish it and sit beside it. No import cycle anywhere, and no import that points the wrong way:
core <- service <- web <- demo <- app, every arrow down."""

import ast
import re

import pytest

from core.data import PROJECT_ROOT
from tools.import_graph import find_cycle, import_graph, imported_names, project_modules, syntax_tree

MODULES = project_modules()
LAYERS = ("core", "service", "web", "demo", "app")  # each imports only those before it
# core runs inside the app and the trainer: no front end, no tools, no child processes
CORE_MUST_NOT_IMPORT = ("gradio", "gradio_client", "service", "web", "demo", "tools", "subprocess")
SERVICE_MUST_NOT_IMPORT = ("gradio", "web", "demo", "tools")


def _imports(prefix: str) -> dict[str, set[str]]:
    """{module under `prefix`: the top-level names of everything it imports}."""
    return {
        module: {name.split(".")[0] for name in imported_names(path, module)}
        for module, path in MODULES.items()
        if module == prefix or module.startswith(prefix + ".")
    }


def test_the_scan_sees_the_project():
    assert {
        "core.predict",
        "core.checkpoints.hub",
        "core.checkpoints.manifest",
        "service.jobs",
        "service.lab",
        "service.owners",
        "service.user_models",
        "service.model_cache",
        "service.settings",
        "demo.ui",
        "web.runner",
        "tools.bench.cli",
        "tools.release.push",
        "app",
    } <= set(MODULES)
    assert all(path.is_relative_to(PROJECT_ROOT) for path in MODULES.values())


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def _layer_arrows(graph: dict[str, set[str]]) -> list[str]:
    """Every import from one layer to a later one (a module's layer: its top-level package)."""
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if module.split(".")[0] in rank and rank.get(target.split(".")[0], -1) > rank[module.split(".")[0]]
    )


def test_no_arrow_runs_back_up_the_layers():
    wrong = _layer_arrows(import_graph())
    assert not wrong, "imports against core <- service <- web <- demo <- app: " + ", ".join(wrong)


def test_the_layer_check_sees_an_arrow_up():
    graph = {"core.predict": {"service.lab"}, "service.lab": {"core.predict"}, "demo.ui": {"app"}, "tools.x": {"demo"}}
    assert _layer_arrows(graph) == ["core.predict -> service.lab", "demo.ui -> app"]


def test_find_cycle_reports_the_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


@pytest.mark.parametrize("forbidden", CORE_MUST_NOT_IMPORT)
def test_core_does_not_import(forbidden):
    found = sorted(module for module, names in _imports("core").items() if forbidden in names)
    assert not found, f"{forbidden} imported by {', '.join(found)}"


def test_front_end_does_not_import_torch():
    """The front end (web/, demo/, app.py) draws what core computed; torch stays behind core.predict."""
    found = sorted(
        module for prefix in ("web", "demo", "app") for module, names in _imports(prefix).items() if "torch" in names
    )
    assert not found, f"torch imported by {', '.join(found)}"


def test_only_tools_import_tools():
    found = sorted(
        module
        for prefix in ("core", "service", "web", "demo", "app")
        for module, names in _imports(prefix).items()
        if "tools" in names
    )
    assert not found, f"tools imported by {', '.join(found)}"


def test_the_product_s_tools_import_no_measurement():
    """tools/ outside bench/ and research/ is what a user or the release needs: it runs without the lab bench."""
    found = sorted(
        f"{module} -> {name}"
        for module, path in MODULES.items()
        if module.startswith("tools.") and not module.startswith(("tools.bench", "tools.research"))
        for name in imported_names(path, module)
        if name.startswith(("tools.bench", "tools.research"))
    )
    assert not found, f"the product's tools import the bench: {', '.join(found)}"


@pytest.mark.parametrize("forbidden", SERVICE_MUST_NOT_IMPORT)
def test_service_does_not_import(forbidden):
    found = sorted(module for module, names in _imports("service").items() if forbidden in names)
    assert not found, f"{forbidden} imported by {', '.join(found)}"


# Gradio's internals beyond its public `gradio` API: the private attributes the server adapter reaches
GRADIO_PRIVATE = re.compile(
    r"\._queue\b|\.fns\b|\.event_ids_to_events|\.active_jobs|\.event_queue_per_concurrency_id|__class__ ="
)


def test_only_the_server_adapter_touches_gradio_s_internals():
    """web/ is the one place that knows Gradio's server (docs/performance.md, "Gradio's internals"): no other
    module imports a gradio submodule or reaches a private attribute of Gradio's queue or Blocks."""
    outside = {module: path for module, path in MODULES.items() if module.split(".")[0] != "web"}
    imports = [
        (module, node)
        for module, path in outside.items()
        for node in ast.walk(syntax_tree(path))
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    names = [
        (module, name)
        for module, node in imports
        for name in ([node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names])
    ]
    submodules = sorted(f"{m} -> {name}" for m, name in names if name.startswith(("gradio.", "gradio_client.")))
    private = sorted(
        module for module, path in outside.items() if GRADIO_PRIVATE.search(path.read_text(encoding="utf-8"))
    )
    assert not submodules and not private, f"Gradio internals outside web/: {submodules} {private}"
