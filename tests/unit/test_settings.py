"""service.settings: every LAB_* variable is one typed field read from the environment, a bad value is refused in
one line naming it, docs/space.md's table is the fields', and nothing else in the service, the front end, the app
or the tools reads a LAB_* variable itself."""

import ast

import pytest

from core.data import PROJECT_ROOT
from service.settings import DEFAULTS, Settings, SettingsError, one_line, table, variables, with_table
from tools.import_graph import project_modules


def test_each_field_is_its_variable_typed(monkeypatch):
    monkeypatch.setenv("LAB_TRAIN_MAX_ROWS", "50")
    monkeypatch.setenv("LAB_TRAIN_MAX_MINUTES", "2.5")
    monkeypatch.setenv("LAB_USER_MODELS", "/tmp/elsewhere")
    monkeypatch.setenv("LAB_SIGN_IN", " Required ")
    monkeypatch.setenv("LAB_QUEUE_SIZE", "")  # empty: unset
    settings = Settings.load()
    assert settings.train_max_rows == 50 and settings.train_max_minutes == 2.5
    assert str(settings.user_models) == "/tmp/elsewhere" and settings.requires_sign_in
    assert settings.queue_size == DEFAULTS.queue_size == 128
    assert Settings.load(train_max_rows=7).train_max_rows == 7  # a caller's own over the environment


def test_the_space_changes_the_defaults_of_sign_in_and_proxies(monkeypatch):
    for name in ("SPACE_ID", "LAB_SIGN_IN", "LAB_FORWARDED_HOPS"):
        monkeypatch.delenv(name, raising=False)
    assert (Settings.load().requires_sign_in, Settings.load().hops) == (False, 0)
    monkeypatch.setenv("SPACE_ID", "someone/lab")
    assert (Settings.load().requires_sign_in, Settings.load().hops) == (True, 1)
    monkeypatch.setenv("LAB_FORWARDED_HOPS", "2")
    assert Settings.load().hops == 2


def test_ray_address_is_lab_ray_address_else_ray_address(monkeypatch):
    monkeypatch.delenv("LAB_RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_ADDRESS", "head:6379")
    assert Settings.load().ray_address == "head:6379"
    monkeypatch.setenv("LAB_RAY_ADDRESS", "other:6379")
    assert Settings.load().ray_address == "other:6379"


@pytest.mark.parametrize(
    "name, value, words",
    [
        ("LAB_SIGN_IN", "maybe", "LAB_SIGN_IN='maybe': Input should be 'required' or 'optional'"),
        ("LAB_TRAIN_MAX_ROWS", "many", "LAB_TRAIN_MAX_ROWS='many': Input should be a valid integer"),
        ("LAB_USER_MODELS_IN_MEMORY", "0", "LAB_USER_MODELS_IN_MEMORY='0': Input should be greater than or equal"),
        ("LAB_TRAIN_BACKEND", "spark", "LAB_TRAIN_BACKEND='spark': Input should be 'local' or 'ray'"),
    ],
)
def test_a_bad_value_is_refused_in_one_line_naming_it(monkeypatch, name, value, words):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as err:
        Settings.load()
    assert str(err.value).startswith(words) and "\n" not in str(err.value)


def test_two_bad_values_make_one_line():
    with pytest.raises(Exception) as err:
        Settings(queue_size="x", sign_in="maybe")
    line = one_line(err.value)  # type: ignore[arg-type]
    assert "LAB_QUEUE_SIZE='x'" in line and "LAB_SIGN_IN='maybe'" in line and "\n" not in line


def test_the_docs_table_is_the_fields():
    doc = (PROJECT_ROOT / "docs" / "space.md").read_text(encoding="utf-8")
    assert with_table(doc) == doc, "docs/space.md's settings table is stale: make settings-table"
    for name in Settings.model_fields:
        assert f"| `{variables(name)[0]}`" in table()
        assert Settings.model_fields[name].description, f"{name} has no description"


def _lab_reads(path) -> list[str]:
    """The LAB_* variables a file reads from os.environ (get, getenv, [...] in a load), by name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        name = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            target = node.func.value
            reads_environ = node.func.attr == "get" and isinstance(target, ast.Attribute) and target.attr == "environ"
            if (reads_environ or node.func.attr == "getenv") and isinstance(node.args[0], ast.Constant):
                name = node.args[0].value
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if isinstance(node.value, ast.Attribute) and node.value.attr == "environ":
                name = getattr(node.slice, "value", None)
        if isinstance(name, str) and name.startswith("LAB_"):
            found.append(name)
    return found


def test_nothing_but_the_settings_reads_a_lab_variable():
    """core reads its own one (LAB_CACHE_DIR, core.data.tasks); everything above core goes through Settings."""
    reads = {module: _lab_reads(path) for module, path in project_modules().items()}
    assert reads["core.data.tasks"] == ["LAB_CACHE_DIR"]
    elsewhere = sorted(f"{module}: {name}" for module, names in reads.items() for name in names)
    assert elsewhere == ["core.data.tasks: LAB_CACHE_DIR"], elsewhere


def test_the_scan_sees_a_read_and_not_a_write(tmp_path):
    path = tmp_path / "x.py"
    path.write_text('import os\na = os.environ.get("LAB_X")\nb = os.environ["LAB_Y"]\nos.environ["LAB_Z"] = "1"\n')
    assert _lab_reads(path) == ["LAB_X", "LAB_Y"]
