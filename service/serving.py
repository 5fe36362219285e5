"""`python -m service.serving [--nice N] [--models N]`: a process that runs the app's long work: core.predict.ModelJobs,
probe suites (SuiteJob) and an uploaded file's attributions, chunk by chunk (ExportJob).

demo/runner.py sends long requests' models and every probe run here, so that they never hold the server's GIL
nor leave their memory in it, and at a lower CPU priority, so that on a busy machine the server's short requests
come first. Jobs arrive as JSON lines on stdin; each answer (a Prediction or a ModelFailure, a ProbeReport or
the Refusal of a suite, an export chunk's records) leaves as one JSON line on the process's original stdout
(anything else the process prints goes to stderr). Each checkpoint is loaded the first time a job names it; the
process ends at the end of its input.
"""

import argparse
import json
import logging
import os
import sys
from dataclasses import dataclass, fields, is_dataclass
from typing import TextIO

from core.analysis.attribution import Attribution
from core.analysis.export import Sentence, attribution_records
from core.analysis.probes import (
    Case,
    CaseResult,
    Cell,
    ProbeInputError,
    ProbeReport,
    SuiteError,
    run_suite,
    run_text_cases,
)
from core.checkpoints.checkpoint import CheckpointError
from core.checkpoints.memory import ModelCache, capacity_from_env
from core.notices import Notice
from core.predict import CheckedText, Lab, ModelFailure, ModelJob, Prediction, TokenInfo
from core.text import Token
from core.views import Heatmap, KMaxGraph, LineCurves, Pyramid, Table, Text, Trajectory, WordCurve

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

    def run_in(self, lab: Lab) -> ProbeReport | Refusal | ModelFailure:
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

    def run_in(self, lab: Lab) -> list[dict] | ModelFailure:
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


# What may cross the pipe: these dataclasses (rebuilt by name), tuples, view Texts (their code and
# params, not their English), and JSON's own values. Nothing else is ever constructed from the input.
WIRE_TYPES = {
    cls.__name__: cls
    for cls in (
        ModelJob,
        SuiteJob,
        ExportJob,
        Sentence,
        ProbeReport,
        Cell,
        CaseResult,
        Case,
        Refusal,
        CheckedText,
        Token,
        Notice,
        Prediction,
        ModelFailure,
        TokenInfo,
        Attribution,
        WordCurve,
        LineCurves,
        Trajectory,
        Heatmap,
        KMaxGraph,
        Pyramid,
        Table,
    )
}
TEXT_KEY = "\0text:"  # a dict key that is a Text (JSON keys are strings)


def to_wire(value):
    """`value` as JSON-ready data that from_wire turns back into the same objects."""
    if isinstance(value, Text):
        return {"$text": value.code, "params": to_wire(value.params)}
    if is_dataclass(value) and not isinstance(value, type):
        return {"$type": type(value).__name__, **{f.name: to_wire(getattr(value, f.name)) for f in fields(value)}}
    if isinstance(value, dict):
        return {TEXT_KEY + json.dumps(to_wire(k)) if isinstance(k, Text) else k: to_wire(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return {"$tuple": [to_wire(v) for v in value]}
    if isinstance(value, list) and not (value and isinstance(value[0], (int, float))):  # numbers go as they are
        return [to_wire(v) for v in value]
    return value


def _rebuilt(data: dict):
    """json.loads' object_hook: a dict of to_wire's back into what it stood for (inner dicts come first)."""
    if "$text" in data:
        return Text(data["$text"], **data["params"])
    if "$tuple" in data:
        return tuple(data["$tuple"])
    items = {
        json.loads(k[len(TEXT_KEY) :], object_hook=_rebuilt) if k.startswith(TEXT_KEY) else k: v
        for k, v in data.items()
        if k != "$type"
    }
    return WIRE_TYPES[data["$type"]](**items) if "$type" in data else items


def encode(value) -> str:
    """One line of the pipe protocol (no newline inside: JSON escapes it)."""
    return json.dumps(to_wire(value), ensure_ascii=False)


def decode(line: str):
    return json.loads(line, object_hook=_rebuilt)


def worker_lab(models: int | None = None) -> Lab:
    """A worker's Lab, empty until a job names a checkpoint; `models`: how many checkpoints stay loaded (the least
    recently used go first), by default as many as the app keeps of its own."""
    lab = Lab({})
    lab.user_models = ModelCache(models or capacity_from_env())
    return lab


def answer(lab: Lab, line: str) -> str:
    """One job's line answered in `lab`: the line of its outcome (this process's worker, a Ray Serve replica)."""
    return encode(decode(line).run_in(lab))


def serve(jobs: TextIO, answers: TextIO, models: int | None = None) -> int:
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
        "--models", type=int, default=None, help="checkpoints kept loaded (default $LAB_USER_MODELS_IN_MEMORY)"
    )
    args = parser.parse_args(argv)
    if args.nice:
        os.nice(args.nice)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print must not corrupt the answers
    serve(sys.stdin, answers, args.models)
    return 0


if __name__ == "__main__":
    sys.exit(main())
