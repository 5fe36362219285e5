"""Where the app runs its models: one thread pool that Lab.compare spreads "all five" over, the lanes that
schedule each request's work, and the warm-up.

Gradio's queue is first-in first-out per concurrency group, so with one worker a 12-word sentence waited
behind every 150-word text queued before it (issue 21: short-request p95 4.5 s under 10% long inputs).
The model events therefore enter their handlers up to MODEL_CONCURRENCY at a time and `LANES` schedules
the work: one short and one long request run at once, each lane in arrival order, and a long request
steps aside before each of its models while short ones are in (for at most LONG_YIELD_S), since the two
would otherwise share one GIL. A handler whose client disconnected stops waiting for its lane, and stops
before its next model once admitted (Gradio marks the event dead when its stream closes)."""

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import gradio as gr
from gradio.context import LocalContext

from core.predict import Cancelled, Lab

log = logging.getLogger(__name__)
# "all five" runs the models side by side: torch releases the GIL, and one request's small tensors
# rarely use both cores on their own
MODEL_POOL = ThreadPoolExecutor(max_workers=min(5, os.cpu_count() or 1), thread_name_prefix="model")
MODEL_CONCURRENCY = 16  # model events inside their handlers at once (the rest wait in Gradio's queue)
LONG_WORDS = 40  # more words than this: the long lane (SST test sentences: mean 19.2 words, 95% <= 35, 1.5% > 40)
POLL_S = 0.1  # how often a waiting request checks that its client is still there
LONG_YIELD_S = 10.0  # the longest a long request waits for short ones before each of its models


class Lanes:
    """Short work first: one slot for short work and one for long work, each in arrival order, and a long
    request that steps aside before each of its models while short requests are in. A waiting request
    gives up when its client leaves."""

    def __init__(self, long_words: int = LONG_WORDS):
        self.long_words = long_words
        self._slots = {False: threading.Semaphore(1), True: threading.Semaphore(1)}  # keyed by "is long"
        self._shorts = 0  # short requests admitted or waiting for their slot
        self._no_shorts = threading.Condition()

    def is_long(self, words: int, on_demand: bool = False) -> bool:
        """`on_demand`: a slow attribution method was asked for (seconds of work)."""
        return words > self.long_words or on_demand

    def _count_short(self, change: int) -> None:
        with self._no_shorts:
            self._shorts += change
            if not self._shorts:
                self._no_shorts.notify_all()

    @contextmanager
    def admit(self, words: int, on_demand: bool = False, alive: Callable[[], bool] = lambda: True) -> Iterator[bool]:
        long = self.is_long(words, on_demand)
        if not long:
            self._count_short(+1)
        try:
            slot = self._slots[long]
            while not slot.acquire(timeout=POLL_S):
                if not alive():
                    raise Cancelled()
            try:
                yield not long  # a long request runs its models one by one: the pool stays free for short ones
            finally:
                slot.release()
        finally:
            if not long:
                self._count_short(-1)

    def yield_to_short(self, alive: Callable[[], bool] = lambda: True, limit_s: float = LONG_YIELD_S) -> None:
        """Before a long request's next model: wait while short requests are in, at most `limit_s`."""
        deadline = time.monotonic() + limit_s
        with self._no_shorts:
            while self._shorts and time.monotonic() < deadline:
                self._no_shorts.wait(timeout=POLL_S)
                if not alive():
                    raise Cancelled()


LANES = Lanes()


def client_alive() -> Callable[[], bool]:
    """For the Gradio event being handled: False once its client has disconnected. Gradio sets `alive` to
    False on the running job's events when the client's stream closes; outside an event, always True."""
    blocks, event_id = LocalContext.blocks.get(None), LocalContext.event_id.get(None)
    queue = getattr(blocks, "_queue", None)
    if queue is None or event_id is None:
        return lambda: True

    def alive() -> bool:
        for job in queue.active_jobs:
            for event in job or ():
                if event._id == event_id:
                    return event.alive
        return True  # not (or no longer) among the running jobs: nothing says it was abandoned

    return alive


class RequestGate:
    """core.predict.Gate for the request being handled: the app's lanes and its client's liveness."""

    def __init__(self, lanes: Lanes = LANES):
        self.lanes, self.alive, self.long = lanes, client_alive(), False

    def admit(self, words: int, on_demand: bool = False):
        self.long = self.lanes.is_long(words, on_demand)
        return self.lanes.admit(words, on_demand, self.alive)

    def admit_long(self):
        """Work without a word count of its own (a probe suite: hundreds of sentences) takes the long lane."""
        self.long = True
        return self.lanes.admit(self.lanes.long_words + 1, alive=self.alive)

    def before_model(self) -> None:
        if not self.alive():
            raise Cancelled()
        if self.long:
            self.lanes.yield_to_short(self.alive)


def abandoned() -> gr.Error:
    """What a handler raises when its client left (core's Cancelled): one log line, no trace."""
    log.info("request cancelled: its client disconnected")
    return gr.Error("cancelled: the client disconnected", print_exception=False)


def warm_up(lab: Lab) -> None:
    """Load the tokenizers (spaCy, jieba) and touch every model once, so the first request is fast."""
    for text, lang in (("a good film", "en"), ("很好", "zh")):
        if lab.tasks(lang):
            try:
                lab.compare(text, lab.tasks(lang)[0], lang, executor=MODEL_POOL)
            except Exception:  # warming up is best effort
                log.warning("warm-up failed for %s", lang, exc_info=True)
