"""Where the app runs its models: one thread pool that a request spreads "all five" over, the lanes that
schedule each request's work (RequestGate runs core's Plans), the worker process that runs long requests and
probe suites, and the warm-up.

Gradio's queue is first-in first-out per concurrency group, so with one worker a 12-word sentence waited
behind every 150-word text queued before it (short-request p95 4.5 s under 10% long inputs).
The model events therefore enter their handlers up to Settings.model_concurrency at a time and `LANES` schedules
the work: one short and one long request run at once, each lane in arrival order. A long request's models
run in `WORKER`, a process of their own at a lower CPU priority: in this process they would share one GIL
with the short requests, which then waited up to 1.35 s (p95). A handler whose client disconnected stops
waiting for its lane, and stops before its next model once admitted (Gradio marks the event dead when its
stream closes), in this process and in the worker alike: the worker finishes the model it runs and stays
warm, since starting a new one (torch, tokenizers, checkpoints) cost the next visitor about 5 s.
A probe suite (hundreds of sentences through every model: seconds) runs in the worker too: in this process, a
class's probe runs (5% of its requests) kept the GIL busy most of the time, and what they allocated stayed here."""

import logging
import os
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypedDict

import gradio as gr
from gradio.context import Context, LocalContext

from core.analysis.export import BudgetSpent, Sentence
from core.analysis.probes import ProbeReport
from core.data import PROJECT_ROOT
from core.predict import Cancelled, Comparison, Lab, ModelFailure, ModelJob, Plan, Prediction, Request
from service import processes, serve_ray
from service.fair import Turns
from service.lab import ServedLab
from service.serving import ExportJob, Refusal, SuiteJob, decode, encode
from service.settings import Settings
from web.fair_queue import client_of
from web.thread_hops import analytics_on_loop

log = logging.getLogger(__name__)
# "all five" runs the models side by side: torch releases the GIL, and one request's small tensors
# rarely use both cores on their own
MODEL_POOL = ThreadPoolExecutor(max_workers=min(5, os.cpu_count() or 1), thread_name_prefix="model")
LONG_WORDS = 40  # more words than this: the long lane (SST test sentences: mean 19.2 words, 95% <= 35, 1.5% > 40)
POLL_S = 0.25  # how often a waiting request checks that its client is still there (its turn wakes it at once)
WORKER_NICE = 10  # the worker's CPU priority below the server's: on a busy machine short requests come first
WORKER_JOBS = 500  # model runs before the worker is replaced, so that what long texts left in its memory never adds up


class Lane:
    """One slot, taken in turns between clients (service.fair.Turns): the waiting client served least recently
    goes next, each client's requests in arrival order, so one client's flood waits behind everybody else's next
    request. A request that leaves it and asks again (a file export, chunk by chunk) has had its turn. A waiting
    request gives up when its client leaves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns = Turns()
        self._busy = False

    def acquire(self, alive: Callable[[], bool], client: str = "") -> None:
        ticket = threading.Event()  # set when it may be its turn: the lane woke it, not every waiter
        with self._lock:
            self._turns.add(ticket, client)
        try:
            while True:
                ticket.clear()
                with self._lock:
                    if not self._busy and self._turns.chosen is ticket:
                        self._turns.take(ticket)
                        self._busy = True
                        return
                if not alive():
                    raise Cancelled()
                ticket.wait(POLL_S)
        except BaseException:
            with self._lock:
                self._turns.remove(ticket)
                self._wake()  # the one it leaves the turn to may go now
            raise

    def release(self) -> None:
        with self._lock:
            self._busy = False
            self._wake()

    def _wake(self) -> None:
        if not self._busy and isinstance(chosen := self._turns.chosen, threading.Event):
            chosen.set()


class Lanes:
    """Short work first: one slot for short work and one for long work, each in turns between clients."""

    def __init__(self, long_words: int = LONG_WORDS):
        self.long_words = long_words
        self._slots = {False: Lane(), True: Lane()}  # keyed by "is long"

    def is_long(self, words: int, on_demand: bool = False) -> bool:
        """`on_demand`: a slow attribution method was asked for (seconds of work)."""
        return words > self.long_words or on_demand

    @contextmanager
    def admit(self, long: bool, alive: Callable[[], bool] = lambda: True, client: str = "") -> Iterator[bool]:
        slot = self._slots[long]
        slot.acquire(alive, client)
        try:
            yield not long  # a long request runs its models one by one, in the worker: the pool stays for short ones
        finally:
            slot.release()


class ModelWorker:
    """The process that runs long requests' models and probe suites (`python -m service.serving`), one job at a time:
    started on first use, replaced after `jobs_per_process` runs or when it dies. When the client of the job it
    runs has left, the answer is thrown away and the request stops there; the process goes on. `models`: the
    checkpoints it keeps loaded (warm_up: the app's own and as many visitors' models as the app keeps)."""

    def __init__(self, jobs_per_process: int = WORKER_JOBS, nice: int = WORKER_NICE, models: int | None = None):
        self.jobs_per_process, self.nice, self.models = jobs_per_process, nice, models
        self._lock = threading.Lock()
        self._process: processes.Worker | None = None
        self._jobs = 0

    def run(self, job: ModelJob | SuiteJob | ExportJob, alive: Callable[[], bool] = lambda: True):
        """The job's answer (service.serving), or a ModelFailure when the process died on it."""
        with self._lock:
            process = self._started()
            if process.stdin is None or process.stdout is None:  # _started opens both as pipes
                raise RuntimeError("the model worker has no pipes")
            try:
                process.stdin.write(encode(job) + "\n")
                process.stdin.flush()
                answer = process.stdout.readline()
                if not answer:
                    raise EOFError("no answer")
            except (OSError, EOFError) as err:  # it died: out of memory, a signal
                self._stop(kill=True)
                name = getattr(job, "model", "probes")  # a SuiteJob runs every model of its task
                log.error("model worker ended during %s (exit %s): %s", name, process.poll(), err)
                return ModelFailure(name, f"exit status {process.poll()}", "worker_ended")
            outcome = decode(answer)
            self._jobs += 1
            if self._jobs >= self.jobs_per_process:
                self._stop()
            if not alive():  # its client left while it ran: the next model boundary
                raise Cancelled()
            return outcome

    def _started(self) -> processes.Worker:
        if self._process is None or self._process.poll() is not None:
            args = ["--nice", str(self.nice)] + (["--models", str(self.models)] if self.models else [])
            self._process = processes.start("service.serving", args, dict(os.environ), PROJECT_ROOT, pipes=True)
            self._jobs = 0
            log.info("model worker started (pid %d)", self._process.pid)
        return self._process

    def _stop(self, kill: bool = False) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if kill:
            process.kill()
        elif process.stdin is not None:
            process.stdin.close()  # it ends at the end of its input
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def close(self) -> None:
        with self._lock:
            self._stop()


LANES = Lanes()
LOCAL_WORKER = ModelWorker()
WORKER: serve_ray.Worker = LOCAL_WORKER  # until the app's settings choose (choose_worker)


def choose_worker(settings: Settings) -> None:
    """The model worker by the app's settings (build_demo, before any request): the local one, or with
    LAB_SERVE_BACKEND=ray a Ray Serve deployment in front of it (service.serve_ray)."""
    global WORKER
    WORKER = serve_ray.worker(LOCAL_WORKER, settings)


def queued(demo: gr.Blocks, settings: Settings) -> gr.Blocks:
    """`demo` with Gradio's queue set up as measured: queue_options, and its idle polling every queue_poll_ms."""
    demo.queue(**queue_options(settings))
    demo._queue.sleep_when_free = settings.queue_poll_ms / 1000
    analytics_on_loop()  # its kept analytics summary without a thread per event (web/thread_hops.py)
    return demo


# a REST call answered beside Gradio's queue (web/rest.py) says here whether its caller still waits, and who it is
CALLER_ALIVE: ContextVar[Callable[[], bool] | None] = ContextVar("caller_alive", default=None)
CALLER_CLIENT: ContextVar[str | None] = ContextVar("caller_client", default=None)


def current_client() -> str:
    """The client (web.fair_queue.client_key) of the request being handled: the lanes give its work turns."""
    if (direct := CALLER_CLIENT.get()) is not None:
        return direct
    return client_of(LocalContext.event_id.get(None))


def client_alive() -> Callable[[], bool]:
    """For the Gradio event being handled: False once its client has disconnected. Gradio sets `alive` to
    False on the running job's events when the client's stream closes; outside an event, always True."""
    if (direct := CALLER_ALIVE.get()) is not None:
        return direct
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


class ModelFailureError(Exception):
    """A model gave no answer where the work cannot go on without it (a file export's chunk)."""

    def __init__(self, failure: ModelFailure):
        super().__init__(f"{failure.model}: {failure.error}")
        self.failure = failure


class RequestGate:
    """How the request being handled runs its model work: the app's lanes, its client's liveness, and the
    worker process for a long request's models. `long`: the request is long whatever its size (it stays long
    once one of its plans was)."""

    def __init__(self, lanes: Lanes = LANES, worker: serve_ray.Worker | None = None, long: bool = False):
        # the app's worker when the request is handled: choose_worker may have replaced it since import
        self.lanes, self.worker, self.alive, self.long = lanes, worker or WORKER, client_alive(), long
        self.client = current_client()

    def run(self, plan: Plan, executor: Executor | None = None) -> Comparison:
        """The answer to core's `plan`: its jobs admitted to their lane by the request's size, then run side by side
        on `executor` (short) or one by one in the worker (long); Cancelled when the client left, before each model.
        A plan whose answers are all kept takes no lane: the lanes admit work, not answers; nor do the models
        whose answers another request kept while this one waited for its turn (a lecture hall asking for one link:
        each request waits in its client's turn, never behind another client's)."""
        if not plan.jobs:
            return plan.finish([])
        self.long = self.long or self.lanes.is_long(plan.words, plan.on_demand)
        with self.lanes.admit(self.long, self.alive, self.client) as side_by_side:
            plan = plan.rechecked()
            pool = executor if side_by_side else None
            one = lambda job: self.run_job(job, plan.here)
            outcomes = list(map(one, plan.jobs) if pool is None else pool.map(one, plan.jobs))
        return plan.finish(outcomes)

    def probes(
        self,
        lab: ServedLab,
        task: str | None,
        suite: str = "",
        text: str | None = None,
        capabilities: dict | None = None,
    ) -> ProbeReport:
        """A probe suite (or a visitor's own cases, `text`) on the checkpoints `lab` serves, as
        core.analysis.probes.run_suite (run_text_cases) would answer it: in the long lane, run by the worker."""
        checkpoints = tuple((t, m, str(c.path)) for (t, m), c in lab.checkpoints.items())
        self.long = True
        # a shipped suite's report depends on the suite, the task and the checkpoints only: kept with the answers
        kept = lab.answers if text is None and capabilities is None else None
        key = lab.kept_key("probes", task, suite, task=task) if kept is not None else ()
        if kept is not None and (report := kept.get(key)) is not None:
            return report
        with self.lanes.admit(True, self.alive, self.client):
            # a lecture hall asks for one suite at once: the requests behind the first find its report here
            if kept is not None and (report := kept.get(key)) is not None:
                return report
            outcome = self.worker.run(SuiteJob(checkpoints, task, suite, text, capabilities), self.alive)
        if isinstance(outcome, Refusal):
            raise outcome.error()
        if isinstance(outcome, ModelFailure):
            raise RuntimeError(f"probes: {outcome.error}")
        if kept is not None:
            kept.put(key, outcome)
        return outcome

    def export_runner(self, lab: ServedLab, seconds: float) -> Callable[[tuple[str, str], list[Sentence]], list[dict]]:
        """core.analysis.export.text_records' `run` for an uploaded file: each chunk in the long lane (in arrival
        order with the long requests: one waits behind at most a chunk of each export), run by the worker, until the
        chunks have taken `seconds` of its time (BudgetSpent); ModelFailureError when the worker gives no records."""
        spent = 0.0

        def run(key: tuple[str, str], sentences: list[Sentence]) -> list[dict]:
            nonlocal spent
            if spent >= seconds:
                raise BudgetSpent()
            job = ExportJob(*key, str(lab.checkpoints[key].path), tuple(sentences))
            with self.lanes.admit(True, self.alive, self.client):
                start = time.monotonic()
                outcome = self.worker.run(job, self.alive)
                spent += time.monotonic() - start
            if isinstance(outcome, ModelFailure):
                raise ModelFailureError(outcome)
            return outcome

        return run

    def run_job(
        self, job: ModelJob, here: Callable[[ModelJob], Prediction | ModelFailure]
    ) -> Prediction | ModelFailure:
        """One model of an admitted plan: in the worker (long) or `here`, unless the client has left."""
        if not self.alive():
            raise Cancelled()
        return self.worker.run(job, self.alive) if self.long else here(job)


class EventGroup(TypedDict):
    concurrency_id: str
    concurrency_limit: int


# probe suites wait in Gradio's queue under a group of their own (as exports do), not in the model events' slots:
# a hall's probe runs, waiting for the one long lane, held all 16 and the short requests queued behind them
PROBE_EVENTS = EventGroup(concurrency_id="probes", concurrency_limit=4)


def abandoned() -> gr.Error:
    """What a handler raises when its client left (core's Cancelled): one log line, no trace."""
    log.info("request cancelled: its client disconnected")
    return gr.Error("cancelled: the client disconnected", print_exception=False)


def queue_options(settings: Settings) -> dict:
    """Gradio's queue (app.py): every model event a client's fair share admits (web/fair_queue.py: at most twice
    Settings.model_concurrency + Settings.queue_size) enters its handler at once, where the lanes give its work
    its turn: Gradio's own line is first come, first served, and a slot held by a flood's request waiting for the
    long lane would keep everyone else's short one out. Other groups (probes, exports) wait, at most
    Settings.queue_size; waiting clients get their queue position once a second, not on every job start."""
    return {
        "default_concurrency_limit": handler_places(settings),
        "max_size": settings.queue_size,
        "status_update_rate": 1,
    }


def handler_places(settings: Settings) -> int:
    """The most model events in their handlers at once: every place fair shares can give (service.fair)."""
    return 2 * (settings.model_concurrency + settings.queue_size)


def handler_threads(settings: Settings) -> int:
    """Gradio's worker threads (launch's max_threads): every model event in its handler, and the other groups'."""
    return handler_places(settings) + PROBE_EVENTS["concurrency_limit"] + 16


# what a page's tabs load once, in warm_up's thread after the models: not in the first request that needs it
_WARM_UPS: "weakref.WeakKeyDictionary[gr.Blocks, list[Callable[[], object]]]" = weakref.WeakKeyDictionary()


def on_warm_up(load: Callable[[], object]) -> None:
    """Call `load` (cached by the caller) when warm_up runs for the page being built."""
    if Context.root_block is None:
        raise RuntimeError("on_warm_up outside a gr.Blocks being built")
    _WARM_UPS.setdefault(Context.root_block, []).append(load)


def warm_up(lab: ServedLab, demo: gr.Blocks | None = None) -> None:
    """Load the tokenizers (spaCy, jieba) and touch every model once, here and in the worker, so that the
    first request, short or long, is fast. The worker keeps every checkpoint of `lab` loaded, and as many trained
    ones as the app keeps (service.model_cache). Then what `demo`'s tabs asked for (on_warm_up)."""
    WORKER.models = WORKER.models or len(lab.checkpoints) + lab.user_models.capacity
    models = Lab(lab.checkpoints, lab.sources)  # without the app's kept answers: every model runs, here and there
    for text, lang in (("a good film", "en"), ("很好", "zh")):
        for task in models.tasks(lang)[:1]:
            for long in (False, True):  # here, then in the worker
                try:
                    plan = models.plan_compare(Request(text, task=task, lang=lang))
                    if long:
                        RequestGate(long=True).run(plan, MODEL_POOL)
                    else:
                        plan.run_here(MODEL_POOL)
                except Exception:  # warming up is best effort
                    log.warning("warm-up failed for %s", lang, exc_info=True)
    for load in _WARM_UPS.get(demo, []) if demo is not None else []:
        try:
            load()
        except Exception:
            log.warning("warm-up of %s failed", load, exc_info=True)
