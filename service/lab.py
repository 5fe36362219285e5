"""The Lab a shared Space serves: core.predict.Lab, plus the models trained while the app runs.

    lab = ServedLab.load(root, memory=ModelCache(settings.user_models_in_memory))
    lab.add_checkpoint(folder, source, owner, title)   # a finished job's model, served to `owner` alone
    lab.visible_to(owner).predict(...)                  # the public tasks and this owner's own
    lab.remove_checkpoints([folder])                    # service.cleanup removed its folder

Each task has an owner (service.owners; PUBLIC for the bundled ones and those trained from the command line) and
may have a title people see; a visitor's Lab holds the public tasks and its own, so every check, error and list
answers as if another visitor's did not exist. Added models' weights are held by recency (service.model_cache).
"""

import json
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import TypeVar

from core.analysis.treebank import NodeAttribution, Treebank, TreeView, node_attributions, tree_and_root, tree_view
from core.answers import AnswerCache
from core.checkpoints.checkpoint import Checkpoint, CheckpointError, load_checkpoint
from core.predict import Lab
from service.model_cache import ModelCache
from service.owners import PUBLIC, visible
from service.settings import DEFAULTS

T = TypeVar("T")


class ServedLab(Lab):
    """core's Lab as the Space serves it: plus the models visitors trained, their owners and titles, and the
    trained models held in memory (ModelCache)."""

    def __init__(
        self,
        checkpoints: dict[tuple[str, str], Checkpoint],
        sources: dict[tuple[str, str], str] | None = None,
        errors: dict[str, str] | None = None,
        answers: AnswerCache | None = None,
        owners: dict[str, str] | None = None,
        titles: dict[str, str] | None = None,
        memory: ModelCache | None = None,
    ):
        super().__init__(checkpoints, sources, errors, answers)
        self.owners = owners or {}  # task -> its owner (service.owners), for a visitor's task; the others are public
        self.titles = titles or {}  # task -> the name people see (a visitor's file and date), where not its id
        # models added while the app runs: the recently used ones stay loaded
        self.user_models = memory or ModelCache(DEFAULTS.user_models_in_memory)

    def add_checkpoint(
        self, directory: str | Path, source: str = "", owner: str = PUBLIC, title: str = ""
    ) -> tuple[str, str]:
        """Serve one more checkpoint (a model trained while the app runs, service.jobs) under its (task, model),
        replacing the owner's own model there (CheckpointError for a task of another owner, the public ones
        included), for `owner` alone unless PUBLIC; its weights are held by recency (service.model_cache).
        New dicts, swapped in whole: a request reading the old ones is unaffected."""
        ckpt = load_checkpoint(directory)
        key = (ckpt.meta.get("task", ""), ckpt.model.key)
        if key[0] in {t for t, _ in self.checkpoints} and self.owners.get(key[0], PUBLIC) != owner:
            raise CheckpointError(f"task {key[0]} is another owner's: {directory} is not served")
        if owner:  # before the model is served: never public for a moment
            self.owners = {**self.owners, key[0]: owner}
        if title:
            self.titles = {**self.titles, key[0]: title}
        # a StoredCheckpoint stands in for a Checkpoint: the same path, meta, model and vocab (loaded on use)
        self.checkpoints = {**self.checkpoints, key: self.user_models.add(ckpt)}  # type: ignore[dict-item]
        self.sources = {**self.sources, key: source or f"trained here: {directory}"}
        return key

    def remove_checkpoints(self, directories: list[str | Path]) -> list[tuple[str, str]]:
        """Stop serving the added checkpoints in `directories` (their folders were removed); their keys."""
        gone = {Path(d) for d in directories}
        keys = [k for k, c in self.checkpoints.items() if Path(c.path) in gone]
        self.checkpoints = {k: c for k, c in self.checkpoints.items() if k not in keys}
        self.sources = {k: s for k, s in self.sources.items() if k not in keys}
        for directory in gone:
            self.user_models.forget(directory)
        return keys

    def visible_to(self, viewer: str) -> "ServedLab":
        """The Lab as one visitor (an owner id, service.owners) sees it: the public tasks and its own. Another
        visitor's tasks are not there at all, so every check, error and list answers as if they did not exist."""
        # a snapshot, models before owners: add_checkpoint names a task's owner before it serves its model
        checkpoints, sources = self.checkpoints, self.sources
        hidden = {task for task, owner in self.owners.items() if not visible(owner, viewer)}
        return ServedLab(
            {k: c for k, c in checkpoints.items() if k[0] not in hidden},
            {k: s for k, s in sources.items() if k[0] not in hidden},
            self.errors,
            self.answers,
            {t: o for t, o in self.owners.items() if t not in hidden},
            {t: n for t, n in self.titles.items() if t not in hidden},
            ModelCache(self.user_models.capacity),
        )

    def answer_identity(self, key: tuple[str, str]) -> str:
        """core's identity and the model's owner: one visitor's kept answer is never another's (core.answers)."""
        return json.dumps([self.owners.get(key[0], PUBLIC), super().answer_identity(key)])

    def tree_view(
        self, treebank: Treebank, split: str, index: int, task: str, executor: Executor | None = None
    ) -> TreeView:
        """core.analysis.treebank.tree_view of one treebank sentence on this lab's models, kept with the answers
        (a lecture opens the same trees; each costs every model on every phrase, 50 ms of the app's CPU)."""
        key = self.kept_key("tree", split, index, task=task)
        return self._kept(
            key, lambda: tree_view(self.checkpoints, treebank.tree(split, index), task, split, index, executor)
        )

    def node_attributions(
        self, treebank: Treebank, split: str, index: int, node: int, task: str, executor: Executor | None = None
    ) -> NodeAttribution:
        """core.analysis.treebank.node_attributions of a treebank sentence's node, kept with the answers: a
        sentence picked again, or its tree's node, shows its panel without every model's occlusion again."""
        key = self.kept_key("node", split, index, node, task=task)
        return self._kept(
            key, lambda: node_attributions(self.checkpoints, treebank.tree(split, index), node, task, executor)
        )

    def tree_and_root(
        self, treebank: Treebank, split: str, index: int, task: str, executor: Executor | None = None
    ) -> tuple[TreeView, NodeAttribution]:
        """tree_view and node_attributions of the root, kept as those are: from one run of each model when the tree
        is not kept (core.analysis.treebank.tree_and_root)."""
        key = self.kept_key("tree", split, index, task=task)
        if self.answers is not None and (view := self.answers.get(key)) is not None:
            return view, self.node_attributions(treebank, split, index, 0, task, executor)
        view, root = tree_and_root(self.checkpoints, treebank.tree(split, index), task, split, index, executor)
        if self.answers is not None:
            self.answers.put(key, view)
            self.answers.put(self.kept_key("node", split, index, 0, task=task), root)
        return view, root

    def _kept(self, key: tuple, compute: Callable[[], T]) -> T:
        """The answer kept under `key`, else compute()'s, kept (none kept without answers)."""
        return compute() if self.answers is None else self.answers.kept(key, compute)
