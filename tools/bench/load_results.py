"""What a load test keeps of each request (tools.bench.loadtest, tools.bench.hall): its endpoint, time and error,
and the check that an answer is well formed."""

from dataclasses import dataclass
from typing import Any

LONG_ENDPOINTS = {"/probes", "/train"}  # their own work budget: the short p95 target is on the others


@dataclass
class Result:
    endpoint: str
    seconds: float
    error: str = ""  # "" = a well-formed answer
    long: bool = False  # a long text or a long endpoint: outside the short p95


def check_answer(endpoint: str, answer: Any) -> None:
    """Raise ValueError unless `answer` is a well-formed answer of `endpoint`: a prediction (a list of them for
    /compare) with its label among its labels, or a non-empty report."""
    if endpoint in ("/predict", "/compare"):
        answers = answer if isinstance(answer, list) else [answer]
        well_formed = bool(answers) and all(
            isinstance(a, dict) and a.get("label") in a.get("labels", ()) for a in answers
        )
    else:
        well_formed = isinstance(answer, dict) and bool(answer)
    if not well_formed:
        raise ValueError(f"malformed answer: {str(answer)[:200]}")


def error_line(err: Exception) -> str:
    """A failed request in one line of the report."""
    return f"{type(err).__name__}: {err}".splitlines()[0][:300] or type(err).__name__
