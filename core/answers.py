"""Recent answers, kept to answer an identical request again without running the model (a lecture hall clicks
the same examples). A Prediction is a function of the request and of the checkpoint that answers it, so the key
is both: the request as checked (text, task, language, word cap, model, methods, view options, intervention) and
the checkpoint's identity (Lab.answer_identity): its folder, source and the sha256 of its files (config.json's
"files" and shared vectors); a Lab that serves several owners adds the model's owner, so that one visitor's answer
is never another's. A model retrained in place has new hashes, so a new key.

Only short texts are kept (their answers are small: tens of KB each), at most `capacity`, the least
recently used first. A cached Prediction is shared by the requests it answers: the app only reads them. The
app keeps other answers to identical requests here too, each under a key of its own kind made of the answers' keys:
a treebank tree, a probe suite's report, the Lab's analysis as drawn for the page (its HTML, 70-280 KB for one
model to all five). Requests for the same key at the same moment wait for one computation (`kept`).
"""

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

# answers of up to MAX_WORDS words, 17-70 KB each (8-40 words), and analyses drawn for the page beside them, 70-280
# KB each: at most ~70 MB (every entry five models drawn)
CAPACITY = 256
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
        self._computing: dict[Hashable, _Computing] = {}  # key -> the answer being computed for it now
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

    def kept(self, key: Hashable, compute: Callable[[], T], keep: Callable[[T], bool] = lambda _: True) -> T:
        """The answer kept under `key`, else compute()'s, kept where `keep` says so. Requests for one key at the
        same moment (a lecture hall opening the teacher's link) wait for the first one's compute instead of each
        running it; if that one raises, each computes its own. So `compute` must never wait for a client's turn
        (web.runner's lanes): a request waiting on it would wait behind that client's other requests."""
        with self._lock:
            if (answer := self._answers.get(key)) is not None:
                self._answers.move_to_end(key)
                self.hits += 1
                return answer  # type: ignore[return-value]
            self.misses += 1
            computing = self._computing.get(key)
            first = computing is None
            if computing is None:
                computing = self._computing[key] = _Computing()
        if not first:
            computing.done.wait()
            return computing.answer if computing.answered else compute()
        try:
            answer = compute()
            computing.answer, computing.answered = answer, True
            if keep(answer):
                self.put(key, answer)
            return answer
        finally:
            with self._lock:
                del self._computing[key]
            computing.done.set()

    def __len__(self) -> int:
        return len(self._answers)


class _Computing:
    """An answer some request is computing: the others asking for it wait for `done`."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.answer: Any = None
        self.answered = False
