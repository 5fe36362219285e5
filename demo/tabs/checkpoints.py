"""The Checkpoints tab: which checkpoints the app serves, where each came from, and which failed to load."""

import json

import gradio as gr
import pandas as pd

from core.predict import Lab
from demo.i18n import L, model_name, msg, task_name


def _accuracy(path) -> str:
    try:
        metrics = json.loads((path / "metrics.json").read_text(encoding="utf-8"))
        return f"{metrics['test']['accuracy']:.3f}"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def tables(lab: Lab, ui: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    loaded = [[task_name(t, ui), model_name(m), msg(f"lang_{c.meta.get('lang', 'en')}", ui), len(c.meta.get("labels", [])),
               _accuracy(c.path), lab.sources.get((t, m), str(c.path))] for (t, m), c in sorted(lab.checkpoints.items())]
    columns = [msg(k, ui) for k in ("col_task", "col_model", "col_lang", "col_classes", "col_accuracy", "col_source")]
    errors = [[path, error] for path, error in sorted(lab.errors.items())]
    return (pd.DataFrame(loaded, columns=columns),
            pd.DataFrame(errors, columns=[msg("col_path", ui), msg("col_error", ui)]))


def build(lab: Lab) -> tuple[gr.Dataframe, gr.Dataframe]:
    gr.Markdown(L("models_md"))
    loaded = gr.Dataframe(interactive=False, wrap=True, elem_id="checkpoints")
    failed = gr.Dataframe(interactive=False, wrap=True, elem_id="load-errors", visible=bool(lab.errors))
    return loaded, failed
