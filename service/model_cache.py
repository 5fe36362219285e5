"""Models trained here, held in memory by recency: a shared Space may serve hundreds of them, each 7 to 57 MB.

    cache = ModelCache(capacity=8)                  # Settings.user_models_in_memory ($LAB_USER_MODELS_IN_MEMORY)
    stored = cache.add(load_checkpoint(directory))  # what ServedLab.checkpoints holds for it: meta and path always
    stored.model                                    # loaded again from disk if it was evicted meanwhile

At most `capacity` of them stay loaded; the least recently used one is dropped when another loads, and
comes back from its folder (the checkpoint files, verified as at first) the next time a request uses it.
The bundled checkpoints are not held here: they are few, and every page uses them.
"""

import threading
from collections import OrderedDict
from pathlib import Path

from core.checkpoints.checkpoint import Checkpoint, load_checkpoint


class ModelCache:
    def __init__(self, capacity: int):
        self.capacity = capacity
        self.loaded: OrderedDict[Path, Checkpoint] = OrderedDict()  # least recently used first
        self.lock = threading.Lock()

    def add(self, checkpoint: Checkpoint) -> "StoredCheckpoint":
        """Hold a freshly loaded checkpoint (replacing one loaded from the same folder before)."""
        self._keep(checkpoint)
        return StoredCheckpoint(checkpoint.path, checkpoint.meta, self)

    def get(self, path: Path) -> Checkpoint:
        """The checkpoint in `path`, loaded again when it was evicted; it becomes the most recently used."""
        with self.lock:
            if (checkpoint := self.loaded.get(path)) is not None:
                self.loaded.move_to_end(path)
                return checkpoint
        checkpoint = load_checkpoint(path)  # outside the lock: other models keep serving while one loads
        self._keep(checkpoint)
        return checkpoint

    def forget(self, path: Path) -> None:
        with self.lock:
            self.loaded.pop(path, None)

    def _keep(self, checkpoint: Checkpoint) -> None:
        with self.lock:
            self.loaded[checkpoint.path] = checkpoint
            self.loaded.move_to_end(checkpoint.path)
            while len(self.loaded) > self.capacity:
                self.loaded.popitem(last=False)  # a request still holding it finishes with it


class StoredCheckpoint:
    """A Checkpoint whose model and vocabulary come from a ModelCache: its meta and path stay in memory,
    its weights only while it is among the most recently used."""

    def __init__(self, path: Path, meta: dict, cache: ModelCache):
        self.path, self.meta, self.cache = path, meta, cache

    @property
    def model(self):
        return self.cache.get(self.path).model

    @property
    def vocab(self):
        return self.cache.get(self.path).vocab
