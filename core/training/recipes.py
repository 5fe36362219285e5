"""A model's recipe: configs/recipes/<model>.toml, how the model trains on our tasks, kept apart from its model file
(which holds the paper's architecture defaults in its config dataclass, with § citations).

    [training]          settings a run leaves unset (optimizer, lr, l2, batch_size, clip, epochs, evals_per_epoch)
    [search]            tools/research/sweep.py's space: setting = [kind, arguments...]
    [vectors]           random_for = [tasks trained from random vectors], by_task = {task = vectors set name}
    [presets.<task>]    model config fields: the paper's setting for that task

What was tried to reach these values is in docs/experiments.md. A model without a recipe file (a new one) trains
with DEFAULT_TRAINING, its config's defaults and no search space, presets or vectors choices.
"""

import functools
import tomllib
from dataclasses import dataclass

from core.data import PROJECT_ROOT
from core.models import model_class

RECIPES = PROJECT_ROOT / "configs" / "recipes"
SECTIONS = {"training", "search", "vectors", "presets"}
# the settings a recipe's [training] leaves out: the NBoW baseline's (configs/recipes/nbow.toml), which learn on
# every task in a few minutes on a CPU
DEFAULT_TRAINING = {"optimizer": "adagrad", "lr": 0.1, "l2": 1e-5, "batch_size": 32, "clip": 0, "epochs": 20}


@dataclass(frozen=True)
class Recipe:
    training: dict  # TrainConfig field -> value
    search_space: dict[str, list]  # setting -> [kind, *arguments]
    random_embeddings_for: frozenset[str]  # tasks whose paper trains from random vectors
    task_vectors: dict[str, str]  # task -> vectors set name under .cache/vectors/, when not the language's
    presets: dict[str, dict]  # task -> model config fields

    def preset(self, task: str) -> dict:
        return self.presets.get(task, {})


@functools.cache
def load_recipe(model: str) -> Recipe:
    model_class(model)  # an unknown model is refused by name, before any file is looked for
    path = RECIPES / f"{model}.toml"
    if not path.is_file():
        data: dict = {}
    else:
        with path.open("rb") as f:
            data = tomllib.load(f)
    unknown = set(data) - SECTIONS | set(data.get("vectors", {})) - {"random_for", "by_task"}
    if unknown:
        raise ValueError(f"{path}: unknown entries {', '.join(sorted(unknown))}")
    vectors = data.get("vectors", {})
    return Recipe(
        training=DEFAULT_TRAINING | data.get("training", {}),
        search_space=data.get("search", {}),
        random_embeddings_for=frozenset(vectors.get("random_for", [])),
        task_vectors=vectors.get("by_task", {}),
        presets=data.get("presets", {}),
    )
