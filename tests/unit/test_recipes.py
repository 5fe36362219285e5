"""Every model x task resolves to the training settings, model configuration, vectors and search space pinned in
tests/unit/resolved_recipes.json (first written from the settings the shipped checkpoints were trained with).
A change to configs/recipes/ or to how core.training resolves a run shows up here as a failure to review; a
deliberate one edits the pinned value in the JSON."""

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from core.data import TASKS
from core.data.vectors import Vectors
from core.models import MODELS, model_class
from core.training import config as training_config
from core.training import recipes
from core.training.config import TrainConfig, model_config, resolve_recipe, vectors_file
from core.training.recipes import load_recipe

PINNED = Path(__file__).with_name("resolved_recipes.json")


def _vectors_choice(model: str, task: str, root: Path, monkeypatch) -> dict:
    """The vectors file name a run picks with every set built, and with only the language's word2vec."""
    monkeypatch.setattr(training_config, "PROJECT_ROOT", root)
    folder = root / ".cache" / "vectors"
    folder.mkdir(parents=True, exist_ok=True)
    lang = TASKS[task][0]
    for name in (lang, "zh-fasttext"):
        (folder / f"{name}.safetensors").touch()
    cfg = TrainConfig(model=model, task=task)
    every = vectors_file(cfg, lang)
    (folder / "zh-fasttext.safetensors").unlink()
    plain = vectors_file(cfg, lang)
    return {"all_built": every and every.name, "word2vec_only": plain and plain.name}


def resolved(model: str, task: str, root: Path, monkeypatch) -> dict:
    """Everything a recipe decides for one run of `model` on `task` (JSON-ready): the training settings left
    unset (None) by default, which the recipe fills, and the model configuration without and with vectors."""
    data = SimpleNamespace(labels=["a", "b", "c"])
    vocab = [None] * 40
    vectors = Vectors(words=["w"], matrix=np.zeros((1, 300), dtype=np.float32))
    cfg = TrainConfig(model=model, task=task)
    filled = [f.name for f in dataclasses.fields(TrainConfig) if f.default is None]
    return {
        "training": {name: getattr(resolve_recipe(cfg), name) for name in filled},
        "model_random_vectors": dataclasses.asdict(model_config(cfg, data, vocab, None)),
        "model_300d_vectors": dataclasses.asdict(model_config(cfg, data, vocab, vectors)),
        "vectors": _vectors_choice(model, task, root, monkeypatch),
    }


@pytest.mark.parametrize("model", list(MODELS))
def test_every_task_resolves_as_pinned(model, tmp_path, monkeypatch):
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))[model]
    assert {k: list(v) for k, v in load_recipe(model).search_space.items()} == pinned["search_space"]
    assert set(pinned["tasks"]) == set(TASKS)
    for task in TASKS:
        assert resolved(model, task, tmp_path / task, monkeypatch) == pinned["tasks"][task], (model, task)


@pytest.mark.parametrize("model", list(MODELS))
def test_a_recipe_names_only_settings_and_fields_that_exist(model):
    recipe = load_recipe(model)
    filled = {f.name for f in dataclasses.fields(TrainConfig) if f.default is None}
    assert set(recipe.training) <= filled, set(recipe.training) - filled
    config_fields = set(model_class(model).config_class.__dataclass_fields__)
    for task, preset in recipe.presets.items():
        assert task in TASKS and set(preset) <= config_fields, (task, set(preset) - config_fields)
    assert recipe.random_embeddings_for <= set(TASKS) and set(recipe.task_vectors) <= set(TASKS)


def test_an_unknown_recipe_entry_is_refused(tmp_path, monkeypatch):
    (tmp_path / "nbow.toml").write_text("[training]\nlr = 0.1\n[vector]\nby_task = {}\n")
    monkeypatch.setattr(recipes, "RECIPES", tmp_path)
    load_recipe.cache_clear()
    try:
        with pytest.raises(ValueError, match="unknown entries vector"):
            load_recipe("nbow")
    finally:
        load_recipe.cache_clear()


def test_an_unknown_model_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown model 'nope'; choose one of nbow"):
        resolve_recipe(TrainConfig(model="nope"))
