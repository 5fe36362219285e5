"""The Checkpoints tab: which checkpoints the app serves, where each came from, and which failed to load."""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from core.checkpoints.files import read_json, sha256
from core.gitinfo import git_commit
from demo.i18n import L, model_name, request_lang, source_text, t, task_name
from service.lab import ServedLab
from web.owners import Visitors


@dataclass
class Facts:
    """What the Lab says beside each prediction: how good the checkpoint is, and which files made it."""

    accuracy: float | None  # measured test accuracy of the shipped files (metrics.json), a fraction
    paper: float | None  # the paper's reported accuracy, in percent
    sha256: str  # of model.safetensors
    commit: str  # of the app
    title: str = ""  # the task's name where people see it by another than its id (a visitor's file and date)
    degenerate: dict | None = None  # metrics.json's "degenerate": a model that answers one class (core.training)


def _metrics(path) -> dict:
    """The checkpoint's metrics.json (every page load lists every checkpoint: read again only once it changes)."""
    try:
        return read_json(Path(path) / "metrics.json")
    except (OSError, ValueError):
        return {}


def _number(metrics: dict, *keys) -> float | None:
    value: Any = metrics
    try:
        for key in keys:
            value = value[key]
        return float(value)
    except (KeyError, TypeError, ValueError):
        return None


def _accuracy(path) -> str:
    accuracy = _number(_metrics(path), "test", "accuracy")
    return "" if accuracy is None else f"{accuracy:.3f}"


def _paper(path) -> str:
    paper = _number(_metrics(path), "paper", "accuracy")
    return "" if paper is None else f"{paper / 100:.3f}"


class FactBook(Mapping):
    """Facts per (task, model) of the Lab's checkpoints, each read on first use (its sha256 hashes the weights
    once) and again when its checkpoint is replaced: a model the Train tab adds while the app runs has its own."""

    def __init__(self, lab: ServedLab):
        self.lab, self.commit = lab, git_commit() or "?"
        self.found: dict[tuple[str, str], tuple[Path, Facts]] = {}

    def __getitem__(self, key: tuple[str, str]) -> Facts:
        path = self.lab.checkpoints[key].path
        if (hit := self.found.get(key)) is None or hit[0] != path:
            metrics = _metrics(path)
            try:
                digest = sha256(path / "model.safetensors")
            except OSError:
                digest = "?"
            accuracy, paper = _number(metrics, "test", "accuracy"), _number(metrics, "paper", "accuracy")
            title, degenerate = self.lab.titles.get(key[0], ""), metrics.get("degenerate")
            hit = self.found[key] = path, Facts(accuracy, paper, digest, self.commit, title, degenerate)
        return hit[1]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.lab.checkpoints)

    def __len__(self) -> int:
        return len(self.lab.checkpoints)


def facts(lab: ServedLab) -> FactBook:
    """Per (task, model): its metrics and the sha256 of its weights, for the checkpoints `lab` serves now or later."""
    return FactBook(lab)


def tables(lab: ServedLab, ui: str) -> tuple[dict, dict]:
    """The served checkpoints and the ones that failed to load, as gr.Dataframe values ({"headers", "data"}: no
    pandas frame built and converted back on every page load)."""
    loaded = [
        [
            lab.titles.get(task) or task_name(task, ui),
            model_name(m),
            t(f"lang_{c.meta.get('lang', 'en')}", ui),
            len(c.meta.get("labels", [])),
            _accuracy(c.path),
            _paper(c.path),
            source_text(lab.sources.get((task, m), str(c.path)), ui),
        ]
        for (task, m), c in sorted(lab.checkpoints.items())
    ]
    columns = [
        t(k, ui)
        for k in ("col_task", "col_model", "col_lang", "col_classes", "col_accuracy", "col_paper", "col_source")
    ]
    errors = [[path, error] for path, error in sorted(lab.errors.items())]
    return {"headers": columns, "data": loaded}, {"headers": [t("col_path", ui), t("col_error", ui)], "data": errors}


def build(lab: ServedLab, visitors: Visitors, tab: gr.Tab) -> None:
    """The tables, filled as the tab opens with what the visitor may see (its own trained models among them), not
    on every page load: they read each checkpoint's metrics (a stat each), which a lecture hall's page loads all
    waited on (docs/performance.md)."""
    gr.Markdown(L("models_md"))
    loaded = gr.Dataframe(interactive=False, wrap=True, elem_id="checkpoints")
    failed = gr.Dataframe(interactive=False, wrap=True, elem_id="load-errors", visible=bool(lab.errors))

    def on_open(request: gr.Request):
        return tables(visitors.lab(lab, request), request_lang(request))

    tab.select(on_open, None, [loaded, failed], api_visibility="private", show_progress_on=loaded)
