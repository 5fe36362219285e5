"""`python -m core.serving [--nice N]`: a process that runs core.predict.ModelJobs for the app.

demo/runner.py sends long requests' models here, so that they never hold the server's GIL, and at a lower
CPU priority, so that on a busy machine the server's short requests come first. Jobs arrive as
JSON lines on stdin; each answer, a Prediction or a ModelFailure, leaves as one JSON line on the process's
original stdout (anything else the process prints goes to stderr). Each checkpoint is loaded the first
time a job names it; the process ends at the end of its input.
"""

import argparse
import json
import os
import sys
from dataclasses import fields, is_dataclass
from typing import TextIO

from core.analysis.attribution import Attribution
from core.notices import Notice
from core.predict import CheckedText, Lab, ModelFailure, ModelJob, Prediction, TokenInfo
from core.text import Token
from core.views import Heatmap, KMaxGraph, LineCurves, Pyramid, Table, Text, Trajectory, WordCurve

# What may cross the pipe: these dataclasses (rebuilt by name), tuples, view Texts (their code and
# params, not their English), and JSON's own values. Nothing else is ever constructed from the input.
WIRE_TYPES = {
    cls.__name__: cls
    for cls in (
        ModelJob,
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


def serve(jobs: TextIO, answers: TextIO) -> int:
    """Answer every job read from `jobs`, in order; returns how many at the end of the input."""
    lab, done = Lab({}), 0
    for line in jobs:
        answers.write(encode(decode(line).run_in(lab)) + "\n")
        answers.flush()
        done += 1
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.serving", description=__doc__.split("\n\n")[0])
    parser.add_argument("--nice", type=int, default=0, help="lower this process's CPU priority by N")
    args = parser.parse_args(argv)
    if args.nice:
        os.nice(args.nice)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print must not corrupt the answers
    serve(sys.stdin, answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
