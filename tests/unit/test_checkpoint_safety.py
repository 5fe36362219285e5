"""Security (issue 13): no pickle loading anywhere, pickle files refused where a checkpoint is expected,
checkpoint file names that cannot leave their folder, and a Hugging Face token that is never logged.

test_trainer.py checks that a `.pt` file is refused by load_checkpoint and test_hub.py that Hub, task and
model names are validated and that the token stays out of an unreachable Hub's log; this file covers
the rest: the whole source tree, every pickle suffix, pickle bytes disguised as a checkpoint file, a run
with pickle disabled, and the token through the in-process code paths at DEBUG level.
"""

import ast
import json
import logging
import pickle  # only to disable it below; this file never loads one
import shutil
from pathlib import Path

import pytest
import torch

import core.checkpoints.hub as hub
import core.checkpoints.manifest as manifest
import core.predict as predict_module
import demo
import tools.release.push as push
from core.checkpoints.checkpoint import UNSAFE_SUFFIXES, CheckpointError, load_checkpoint
from core.checkpoints.files import sha256
from core.predict import Lab
from service.lab import ServedLab
from service.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "core").rglob("*.py")) + sorted((ROOT / "demo").rglob("*.py")) + [ROOT / "app.py"]
TOOLS = sorted((ROOT / "tools").rglob("*.py"))  # not served, but they read checkpoints and the Hub token (push)
EVERYTHING = SHIPPED + TOOLS + sorted((ROOT / "tests").rglob("*.py"))
PICKLE_MODULES = {"pickle", "_pickle", "cPickle", "dill", "cloudpickle", "joblib", "shelve"}
# a protocol-0 pickle that, when loaded, writes a marker file: proof that nothing unpickles what it is given
EXPLOIT = "cbuiltins\nexec\n(Vopen({path!r}, 'w').write('pwned')\ntR."
CANARY = "hf_CanaryTokenThatMustNeverAppear0123456789"


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func) + "()"
    return ""


def pickle_loads(source: str, where: str, shipped: bool) -> list[str]:
    """Every call that unpickles, and (in shipped code) every import of a pickling module, as 'file:line what'."""
    found = []
    for node in ast.walk(ast.parse(source, where)):
        at = f"{where}:{getattr(node, 'lineno', 0)}"
        if shipped and isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{at} import {n}" for n in names if n.split(".")[0] in PICKLE_MODULES]
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            module, function = name.split(".")[0], name.split(".")[-1]
            flag = {k.arg: getattr(k.value, "value", None) for k in node.keywords}
            if (
                name.endswith(("torch.load", "serialization.load", "jit.load", "read_pickle", "Unpickler"))
                or (module in PICKLE_MODULES and function in ("load", "loads"))
                or (name.endswith(("np.load", "numpy.load")) and flag.get("allow_pickle") is True)
                or flag.get("weights_only", True) is False
                or flag.get("use_safetensors", True) is False
            ):
                found.append(f"{at} {name}(...)")
    return found


def test_no_pickle_loading_anywhere_in_the_source():
    assert len(SHIPPED) > 10
    found = [
        hit
        for path in EVERYTHING
        for hit in pickle_loads(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), path in SHIPPED)
    ]
    assert not found, "pickle loading (use safetensors + JSON):\n" + "\n".join(found)


def test_the_scanner_finds_what_it_looks_for():
    source = (
        "import pickle, joblib\nimport torch\nfrom numpy import load\nx = torch.load('m.pt')\n"
        "y = pickle.loads(b'')\nz = np.load('a.npy', allow_pickle=True)\n"
        "w = M.from_pretrained('r', use_safetensors=False)\n"
        "v = torch.load('m', weights_only=False)\nok = np.load('a.npy')\nok = pickle.dumps(1)\n"
    )
    hits = [h.split(" ", 1)[1] for h in pickle_loads(source, "probe.py", shipped=True)]
    assert sorted(hits) == sorted(
        [
            "import pickle",
            "import joblib",
            "torch.load(...)",
            "pickle.loads(...)",
            "np.load(...)",
            "M.from_pretrained(...)",
            "torch.load(...)",
        ]
    )
    assert pickle_loads(source, "probe.py", shipped=False) == [
        h for h in pickle_loads(source, "probe.py", True) if " import " not in h
    ]


def _exploit(path: Path, marker: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(EXPLOIT.format(path=str(marker)).encode())
    return path


@pytest.mark.parametrize("suffix", UNSAFE_SUFFIXES)
def test_a_pickle_file_is_refused_where_a_checkpoint_is_expected(lab_root, tmp_path, suffix):
    marker = tmp_path / "pwned"
    for target in (
        _exploit(tmp_path / f"model{suffix}", marker),
        shutil.copytree(lab_root / "sst5" / "dcnn", tmp_path / f"folder{suffix}"),
    ):  # even a real folder
        with pytest.raises(CheckpointError, match="refusing a pickle-style checkpoint"):
            load_checkpoint(target)
    root = tmp_path / "root"  # where a Lab looks: the file sits where a checkpoint folder should
    _exploit(root / "sst5" / f"dcnn{suffix}", marker)
    assert Lab.load(root).checkpoints == {}
    assert not marker.exists()


@pytest.mark.parametrize("name", ["pytorch_model.bin", "model.pt", "model.ckpt"])
def test_pickle_weights_beside_a_config_are_never_loaded(lab_root, tmp_path, name):
    """A folder that holds pickle weights instead of safetensors: the missing file is named, the others serve."""
    marker = tmp_path / "pwned"
    root = tmp_path / "checkpoints"
    shutil.copytree(lab_root / "sst5", root / "sst5")
    (root / "sst5" / "dcnn" / "model.safetensors").unlink()
    _exploit(root / "sst5" / "dcnn" / name, marker)
    lab = Lab.load(root)
    (error,) = lab.errors.values()
    assert "model.safetensors is missing" in error and ("sst5", "dcnn") not in lab.checkpoints
    assert lab.predict("a good film", "tensor_cnn").label
    assert not marker.exists()


def test_pickle_bytes_named_safetensors_are_refused_even_with_a_matching_hash(lab_root, tmp_path):
    marker = tmp_path / "pwned"
    folder = shutil.copytree(lab_root / "sst5" / "dcnn", tmp_path / "dcnn")
    weights = _exploit(folder / "model.safetensors", marker)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["files"]["model.safetensors"] = sha256(weights)  # a consistent tamper
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(CheckpointError, match="model.safetensors is not a valid safetensors file"):
        load_checkpoint(folder)
    assert not marker.exists()


def test_loading_and_predicting_never_unpickles(lab_root, monkeypatch):
    """With pickle and torch.load disabled, every checkpoint still loads and every model still answers."""

    def refuse(*args, **kwargs):
        raise AssertionError("something tried to unpickle")

    for owner, name in (
        (pickle, "load"),
        (pickle, "loads"),
        (pickle, "Unpickler"),
        (torch, "load"),
        (torch.serialization, "load"),
    ):
        monkeypatch.setattr(owner, name, refuse)
    lab = Lab.load(lab_root)
    assert not lab.errors and len(lab.checkpoints) == 12
    for text in ("It is not a bad film.", "这部电影不怎么好看"):
        result = lab.compare(text)
        assert len(result.predictions) == 5 and not result.failures


@pytest.mark.parametrize("entry", ["../outside.txt", "/etc/hostname", "sub/../../outside.txt"])
def test_checkpoint_file_names_cannot_leave_the_folder(lab_root, tmp_path, entry):
    folder = shutil.copytree(lab_root / "sst5" / "dcnn", tmp_path / "ck" / "dcnn")
    outside = tmp_path / "ck" / "outside.txt"
    outside.write_text("not part of the checkpoint")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    target = (folder / entry) if not entry.startswith("/") else Path(entry)
    config["files"][entry] = sha256(target) if target.is_file() else "0" * 64
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(CheckpointError, match="config.json"):
        load_checkpoint(folder)


# -- the Hugging Face token -------------------------------------------------------------------------------


def _reads_token(expr: ast.AST) -> bool:
    """The expression holds a token: get_token(), os.getenv/os.environ.get/os.environ[...] of a *TOKEN*
    variable, or the whole os.environ."""
    for node in ast.walk(expr):
        if _dotted(node) == "os.environ" and node is expr:
            return True
        if isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] == "get_token":
            return True
        key = (
            node.args[0]
            if isinstance(node, ast.Call) and node.args and _dotted(node.func).split(".")[-1] in ("getenv", "get")
            else node.slice
            if isinstance(node, ast.Subscript)
            else None
        )
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and "TOKEN" in key.value.upper():
            return True
        if (
            isinstance(node, ast.Call)
            and _dotted(node.func) == "dict"
            and node.args
            and _dotted(node.args[0]) == "os.environ"
        ):
            return True
    return False


def test_no_print_or_log_call_receives_a_token():
    found = []
    for path in SHIPPED + TOOLS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = _dotted(node.func)
            if name == "print" or name.split(".")[-1] in (
                "debug",
                "info",
                "warning",
                "error",
                "exception",
                "critical",
                "warn",
            ):
                values = list(node.args) + [k.value for k in node.keywords]
                found += [f"{path.relative_to(ROOT)}:{node.lineno}" for v in values if _reads_token(v)]
    assert not found, "a token (or the whole environment) reaches print/logging:\n" + "\n".join(found)


def test_the_token_check_finds_what_it_looks_for():
    calls = [
        'print(os.environ["HF_TOKEN"])',
        'log.info("t=%s", os.environ.get("HF_TOKEN"))',
        "log.debug(f'{get_token()}')",
        "print(dict(os.environ))",
        'log.error("%s", os.getenv("HUGGING_FACE_HUB_TOKEN"))',
        "print(os.environ)",
    ]
    for call in calls:
        (value,) = [v for v in ast.parse(call).body[0].value.args if not isinstance(v, ast.Constant)]
        assert _reads_token(value), call
    assert not _reads_token(ast.parse('os.environ.get("HF_HOME")').body[0].value)


def _everything_said(caplog, capfd) -> str:
    return "\n".join([caplog.text, *capfd.readouterr()])


def test_the_token_never_reaches_logs_output_or_the_page(lab_root, tmp_path, monkeypatch, caplog, capfd):
    monkeypatch.setenv("HF_TOKEN", CANARY)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    caplog.set_level(logging.DEBUG)
    config = tmp_path / "hub.toml"
    config.write_text(
        f'[hub]\nrepo_id = "someone/sentence-lab"\nrevision = "main"\ncache_dir = "{tmp_path / "cache"}"\n'
    )

    bundled = shutil.copytree(lab_root, tmp_path / "checkpoints", ignore=shutil.ignore_patterns(".complete"))
    manifest.write_manifest(bundled)

    lab = ServedLab.load(config=config, bundled=bundled)  # offline: the Hub is skipped, the bundled folder serves
    assert lab.checkpoints and not lab.errors
    assert hub.main(["sources", "--config", str(config), "--bundled", str(bundled)]) == 0
    assert push.main(["--repo", "someone/sentence-lab", "--checkpoints", str(bundled)]) == 2  # offline
    message = hub.describe_hub_error(
        RuntimeError(f"401 Client Error: url?token={CANARY} Authorization: Bearer {CANARY}")
    )
    predict_module.main(["a good film", "--model", "dcnn", "--json", "--checkpoints", str(lab_root)])
    said = _everything_said(caplog, capfd)
    assert said.strip() and CANARY not in said and CANARY not in message

    page = json.dumps(demo.build_demo(lab, str(lab_root), Settings.load()).get_config_file(), default=str)
    assert CANARY not in page and CANARY not in _everything_said(caplog, capfd)
