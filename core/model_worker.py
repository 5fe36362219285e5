"""`python -m core.model_worker [--nice N]`: a process that runs core.predict.ModelJobs for the app.

demo/runner.py sends long requests' models here, so that they never hold the server's GIL, and at a lower
CPU priority, so that on a busy machine the server's short requests come first (issue 21). Jobs arrive as
JSON lines on stdin; each answer, a Prediction or a ModelFailure, leaves as one JSON line on the process's
original stdout (anything else the process prints goes to stderr). Each checkpoint is loaded the first
time a job names it; the process ends at the end of its input.
"""

import argparse
import json
import os
import sys
from typing import TextIO

from core.predict import Lab, ModelFailure, ModelJob, Prediction
from core.views import from_plain, plain, view_from_dict, view_to_dict


def encode_job(job: ModelJob) -> str:
    return json.dumps(plain(job), ensure_ascii=False)


def decode_job(line: str) -> ModelJob:
    return from_plain(ModelJob, json.loads(line))


def encode_outcome(outcome: Prediction | ModelFailure) -> str:
    if isinstance(outcome, ModelFailure):
        return json.dumps({"failure": plain(outcome)}, ensure_ascii=False)
    return json.dumps({"prediction": {**plain(outcome), "views": [view_to_dict(v) for v in outcome.views]}},
                      ensure_ascii=False)


def decode_outcome(line: str) -> Prediction | ModelFailure:
    data = json.loads(line)
    if "failure" in data:
        return from_plain(ModelFailure, data["failure"])
    prediction = from_plain(Prediction, data["prediction"])
    prediction.views = [view_from_dict(v) for v in prediction.views]
    return prediction


def serve(jobs: TextIO, answers: TextIO) -> int:
    """Answer every job read from `jobs`, in order; returns how many at the end of the input."""
    lab, done = Lab({}), 0
    for line in jobs:
        answers.write(encode_outcome(decode_job(line).run_in(lab)) + "\n")
        answers.flush()
        done += 1
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.model_worker", description=__doc__.split("\n\n")[0])
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
