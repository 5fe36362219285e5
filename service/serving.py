"""`python -m service.serving [--nice N] [--models N]`: a process that runs the app's long work: core.predict.ModelJobs,
probe suites (SuiteJob) and an uploaded file's attributions, chunk by chunk (ExportJob).

web/runner.py sends long requests' models and every probe run here, so that they never hold the server's GIL
nor leave their memory in it, and at a lower CPU priority, so that on a busy machine the server's short requests
come first. Jobs arrive as JSON lines on stdin; each answer (a Prediction or a ModelFailure, a ProbeReport or
the Refusal of a suite, an export chunk's records) leaves as one JSON line on the process's original stdout
(anything else the process prints goes to stderr). Each checkpoint is loaded the first time a job names it; the
process ends at the end of its input.
"""

import argparse
import logging
import os
import sys
from dataclasses import dataclass
from typing import TextIO

from core.analysis.export import Sentence, attribution_records
from core.analysis.probes import (
    ProbeInputError,
    ProbeReport,
    SuiteError,
    run_suite,
    run_text_cases,
)
from core.checkpoints.checkpoint import CheckpointError
from core.notices import Notice
from core.predict import Lab, ModelFailure, ModelJob, Prediction
from core.wire import Wire
from service.lab import ServedLab
from service.model_cache import ModelCache
from service.settings import DEFAULTS, Settings

log = logging.getLogger(__name__)


@dataclass
class Refusal:
    """A suite the worker could not run: the error it raised, to be raised again in the app (`error()`)."""

    suite_error: str = ""  # a SuiteError's message (a shipped file that does not validate)
    notice: Notice | None = None  # a ProbeInputError's code and params

    def error(self) -> ProbeInputError | SuiteError:
        return ProbeInputError(self.notice.code, **self.notice.params) if self.notice else SuiteError(self.suite_error)


@dataclass(frozen=True)
class SuiteJob:
    """A probe suite by name (or a visitor's own cases, `text`) on the checkpoints that one visitor sees, run in
    the worker: each travels as (task, model, directory), and the suite sees these alone, as in the app."""

    checkpoints: tuple[tuple[str, str, str], ...]
    task: str | None  # None: the suite's own
    suite: str = ""
    text: str | None = None  # the visitor's cases instead of a suite (core.analysis.probes.parse_user_cases)
    capabilities: dict | None = None  # the names of the visitor's cases (run_text_cases)

    def run_in(self, lab: ServedLab) -> ProbeReport | Refusal | ModelFailure:
        """Run in a view of `lab` (the worker's own, which loads each checkpoint once) with the job's checkpoints."""
        view = {}
        for task, model, directory in self.checkpoints:
            served = lab.checkpoints.get((task, model))
            try:
                key = (task, model) if served and str(served.path) == directory else lab.add_checkpoint(directory)
            except (CheckpointError, OSError) as err:
                return ModelFailure(model, f"{type(err).__name__}: {err}", "checkpoint_unreadable")
            view[(task, model)] = lab.checkpoints[key]
        try:
            if self.text is None:
                return run_suite(Lab(view), self.suite, self.task)
            return run_text_cases(Lab(view), self.text, self.task or "", self.capabilities)
        except ProbeInputError as err:
            return Refusal(notice=err.notice)
        except SuiteError as err:
            return Refusal(suite_error=str(err))
        except Exception as err:  # a bug, not the input: the worker lives on for the next job
            log.exception("probes failed")
            return ModelFailure("probes", f"{type(err).__name__}: {err}")


@dataclass(frozen=True)
class ExportJob:
    """A chunk of an uploaded file's sentences explained by one model (core.analysis.export.attribution_records),
    run in the worker: the checkpoint travels as its directory. Its answer is the records, or a ModelFailure."""

    task: str
    model: str
    directory: str
    sentences: tuple[Sentence, ...]

    def run_in(self, lab: ServedLab) -> list[dict] | ModelFailure:
        served = lab.checkpoints.get((self.task, self.model))
        try:
            key = (self.task, self.model) if served and str(served.path) == self.directory else None
            key = key or lab.add_checkpoint(self.directory)
        except (CheckpointError, OSError) as err:
            return ModelFailure(self.model, f"{type(err).__name__}: {err}", "checkpoint_unreadable")
        try:
            return attribution_records(lab.checkpoints[key], list(self.sentences))
        except Exception as err:  # a bug, not the input: the worker lives on for the next job
            log.exception("export failed")
            return ModelFailure(self.model, f"{type(err).__name__}: {err}")


# What crosses the pipe: the jobs and their answers, and what their fields hold (core.wire)
WIRE = Wire(ModelJob, SuiteJob, ExportJob, Prediction, ModelFailure, ProbeReport, Refusal)


def encode(value) -> str:
    """One line of the pipe protocol."""
    return WIRE.dumps(value)


def decode(line: str):
    return WIRE.loads(line)


def run_model_job(job: ModelJob, lab: ServedLab) -> Prediction | ModelFailure:
    """A ModelJob run in the worker's lab (Lab.run), its checkpoint loaded first unless the lab serves it."""
    ckpt = lab.checkpoints.get((job.checked.task, job.model))
    if ckpt is None or str(ckpt.path) != job.directory:
        try:
            lab.add_checkpoint(job.directory, job.source)
        except (CheckpointError, OSError) as err:
            return ModelFailure(job.model, f"{type(err).__name__}: {err}", "checkpoint_unreadable")
    return lab.run(job)


def worker_lab(models: int = DEFAULTS.user_models_in_memory) -> ServedLab:
    """A worker's lab, empty until a job names a checkpoint; `models`: how many checkpoints stay loaded (the least
    recently used go first)."""
    return ServedLab({}, memory=ModelCache(models))


def answer(lab: ServedLab, line: str) -> str:
    """One job's line answered in `lab`: the line of its outcome (this process's worker, a Ray Serve replica)."""
    job = decode(line)
    return encode(run_model_job(job, lab) if isinstance(job, ModelJob) else job.run_in(lab))


def serve(jobs: TextIO, answers: TextIO, models: int = DEFAULTS.user_models_in_memory) -> int:
    """Answer every job read from `jobs`, in order; returns how many at the end of the input (`models`: worker_lab)."""
    lab, done = worker_lab(models), 0
    for line in jobs:
        answers.write(answer(lab, line) + "\n")
        answers.flush()
        done += 1
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.serving", description=__doc__.split("\n\n")[0])
    parser.add_argument("--nice", type=int, default=0, help="lower this process's CPU priority by N")
    parser.add_argument(
        "--models", type=int, default=None, help="checkpoints kept loaded (default: $LAB_USER_MODELS_IN_MEMORY)"
    )
    args = parser.parse_args(argv)
    if args.nice:
        os.nice(args.nice)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print must not corrupt the answers
    serve(sys.stdin, answers, args.models or Settings.at_start().user_models_in_memory)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    # every answer is written and flushed (serve): the interpreter's teardown of torch would cost ~1 CPU-s more, and
    # keep a retiring worker's app waiting for it (ModelWorker._stop)
    os._exit(code)
