"""Calls into core for the UI and the API: one model or all of them, failures isolated per model."""

import logging
import os
from concurrent.futures import ThreadPoolExecutor

from core.predict import InputError, Lab, Prediction

log = logging.getLogger(__name__)
AUTO, ALL = "auto", "all"
# "all five" runs the models side by side: torch releases the GIL, and one request's small tensors
# rarely use both cores on their own
_MODEL_POOL = ThreadPoolExecutor(max_workers=min(5, os.cpu_count() or 1), thread_name_prefix="model")


def _option(value: str | None) -> str | None:
    return None if value in (None, "", AUTO) else value


def run_models(lab: Lab, text: str, model: str, task: str | None = None, lang: str | None = None
               ) -> tuple[list[Prediction], list[tuple[str, str]]]:
    """(predictions, [(model, error)]): one model, or every model of the task for ALL. Bad input
    raises InputError; a model that breaks on good input is reported and the others still answer."""
    task, lang = _option(task), _option(lang)
    if not isinstance(text, str):
        raise InputError(f"text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise InputError("Please type a sentence: the text is empty.")
    if model != ALL:
        return [lab.predict(text, model, task, lang)], []
    task, _ = lab.resolve_task(text, task, lang, [])
    predictions, failures = [], []
    running = [(key, _MODEL_POOL.submit(lab.predict, text, key, task, lang)) for key in lab.models(task)]
    for key, future in running:
        try:
            predictions.append(future.result())
        except InputError:
            raise
        except Exception as err:  # one broken model must not take the others down
            log.exception("model %s failed on %r", key, text[:200])
            failures.append((key, f"{type(err).__name__}: {err}"))
    if not predictions and failures:
        raise RuntimeError("; ".join(f"{m}: {e}" for m, e in failures))
    return predictions, failures


def warm_up(lab: Lab) -> None:
    """Load the tokenizers (spaCy, jieba) and touch every model once, so the first request is fast."""
    for text, lang in (("a good film", "en"), ("很好", "zh")):
        if lab.tasks(lang):
            try:
                run_models(lab, text, ALL, lab.tasks(lang)[0], lang)
            except Exception:  # warming up is best effort
                log.warning("warm-up failed for %s", lang, exc_info=True)
