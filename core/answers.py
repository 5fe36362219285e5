"""Recent answers, kept to answer an identical request again without running the model (a lecture hall clicks
the same examples). A Prediction is a function of the request and of the checkpoint that answers it, so the key
is both: the request as checked (text, task, language, word cap, model, methods, view options, intervention) and
the checkpoint's identity (Lab.answer_identity): its folder, source and the sha256 of its files (config.json's
"files" and shared vectors); a Lab that serves several owners adds the model's owner, so that one visitor's answer
is never another's. A model retrained in place has new hashes, so a new key.

Only short texts are kept (their answers are small: tens of KB each), at most `capacity`, the least
recently used first. A cached Prediction is shared by the requests it answers: the app only reads them.
"""

import json
import threading
from collections import OrderedDict
from collections.abc import Hashable

CAPACITY = 256  # answers of up to MAX_WORDS words, 17-70 KB each (8-40 words): 4-18 MB
MAX_WORDS = 40  # the app's short lane (web/runner.py LONG_WORDS): longer texts are rarely sent twice


def checkpoint_identity(checkpoint, source: str) -> str:
    """What tells one served checkpoint from every other: where it is, and what its files hold."""
    meta = checkpoint.meta
    held = {"files": meta.get("files"), "vectors": meta.get("shared_vectors")}
    return json.dumps([str(checkpoint.path), source, held], sort_keys=True, default=str)


class AnswerCache:
    """key -> answer, at most `capacity`, least recently used first; safe to share between threads."""

    def __init__(self, capacity: int = CAPACITY, max_words: int = MAX_WORDS):
        self.capacity, self.max_words = capacity, max_words
        self._answers: OrderedDict[Hashable, object] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def keeps(self, words: int) -> bool:
        return self.capacity > 0 and words <= self.max_words

    def get(self, key: Hashable):
        with self._lock:
            answer = self._answers.get(key)
            if answer is None:
                self.misses += 1
                return None
            self._answers.move_to_end(key)
            self.hits += 1
            return answer

    def put(self, key: Hashable, answer: object) -> None:
        with self._lock:
            self._answers[key] = answer
            self._answers.move_to_end(key)
            while len(self._answers) > self.capacity:
                self._answers.popitem(last=False)

    def __len__(self) -> int:
        return len(self._answers)
