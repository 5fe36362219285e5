"""The model registry: key -> class, the one list of models (the Makefile, the tools and the front end read it).
Imported lazily so that loading one model never needs the others.

A model outside core registers without an edit here: `register_model(key, "package.module:Class")` or
`register_model(key, "path/to/file.py:Class")`, or, for every process (the CLI, a worker), the environment variable
LAB_MODELS="key=target,key=target" read when this module is imported."""

import importlib
import importlib.util
import os
import sys
from pathlib import Path

# key -> class name in core.models.<key>, or "module:Class" / "file.py:Class" (register_model): the baseline, then
# the papers' models in the order every table and menu shows them
MODELS = {
    "nbow": "NBoW",
    "tensor_cnn": "TensorCNN",
    "mrnn": "MRNN",
    "dcnn": "DCNN",
    "adasent": "AdaSent",
    "agt": "AGT",
}
BASELINES = ("nbow",)  # a reference model of no paper: trained and probed, never shipped in the lab
PAPER_MODELS = [key for key in MODELS if key not in BASELINES]
REGISTERED_ENV = "LAB_MODELS"


def register_model(key: str, target: str, baseline: bool = False) -> None:
    """Adds model `key`, its class found at `target` ("module:Class" or "file.py:Class"), to MODELS (and to
    PAPER_MODELS unless it is a `baseline`); ValueError for a key taken by another target or a target without a
    class name."""
    if not key.isidentifier() or not key.islower():
        raise ValueError(f"a model key is a lower-case identifier, got {key!r}")
    if ":" not in target:
        raise ValueError(f"register {key!r} as 'module:Class' or 'file.py:Class', got {target!r}")
    if MODELS.get(key, target) != target:
        raise ValueError(f"model {key!r} is already registered as {MODELS[key]!r}")
    MODELS[key] = target
    if not baseline and key not in PAPER_MODELS:
        PAPER_MODELS.append(key)


def model_class(key: str):
    if key not in MODELS:
        raise ValueError(f"unknown model {key!r}; choose one of {', '.join(MODELS)}")
    module_name, _, class_name = MODELS[key].rpartition(":")
    return getattr(_module(module_name or f"core.models.{key}"), class_name)


def load_cards() -> None:
    """Imports every registered model, so that each card has declared its views' words (core.views.VIEW_TEXT)."""
    for key in MODELS:
        model_class(key)


def _module(name: str):
    if not name.endswith(".py"):
        return importlib.import_module(name)
    path = Path(name).resolve()
    module_name = f"lab_model_{path.stem}_{abs(hash(str(path)))}"  # one module per file, whoever imports it
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ValueError(f"{path} is not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # before it runs: its dataclasses look their module up
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
    return sys.modules[module_name]


for _entry in filter(None, os.environ.get(REGISTERED_ENV, "").split(",")):
    _key, _, _target = _entry.partition("=")
    register_model(_key.strip(), _target.strip())
