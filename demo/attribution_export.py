"""The Lab's file upload: every line of a user's text file explained by the chosen model(s) with every
attribution method, returned as files to download (attributions.jsonl, words.csv and the dataset card), the
same files `make attribute` writes (core/analysis/export.py). Pure function first, then layout and wiring.

An export is long work on a budget: its chunks run in the model worker through the long lane, in arrival order
with the long requests (web/runner.py), up to EXPORT_MAX_WORDS words and Settings.export_seconds of the worker's time;
its event has a concurrency group of its own (EXPORT_CONCURRENCY at once), so that the `model` group's slots
stay for /predict, /compare and the Lab. Its files are written in a temporary folder, copied into Gradio's cache
(which Gradio cleans) and the folder removed before the answer goes out."""

import tempfile
from collections.abc import Callable
from pathlib import Path

import gradio as gr

from core.analysis.export import (
    EXPORT_MAX_WORDS,
    MAX_WORDS,
    MIN_WORDS,
    UPLOAD_MAX_CHARS,
    UPLOAD_MAX_LINES,
    ExportError,
    card,
    read_lines,
    text_records,
    write_export,
)
from core.notices import InputError
from core.predict import Cancelled
from demo.i18n import L, error, failure_text, notice_text, request_lang, t
from demo.plots import esc
from service.lab import ServedLab
from service.settings import DEFAULTS
from web.owners import Visitors
from web.page_load import on_page_load
from web.runner import ModelFailureError, RequestGate, abandoned

EXPORT_CONCURRENCY = 2  # exports in their handlers at once; the others wait in Gradio's queue, holding nothing


def export_file(
    lab: ServedLab,
    path: str | None,
    model: str,
    task: str,
    lang: str,
    ui: str,
    keep: Callable[[str], str],
    progress=None,
    gate: RequestGate | None = None,
    seconds: float = DEFAULTS.export_seconds,
) -> tuple[list[str], str]:
    """(the files to download, a line saying what they hold and what was left out); a refused file raises
    gr.Error with one line. `lab`: the visitor's view; `keep(path)`: where a written file stays (the app: Gradio's
    cache), the folder it was written in is removed; `gate`: the request's (None: run here, no time budget)."""
    if not path:
        raise error(t("export_no_file", ui), ui)
    try:
        lines = read_lines(Path(path).read_bytes())
        found = text_records(
            lab, lines, task, lang, model, progress, gate.export_runner(lab, seconds) if gate else None
        )
    except ExportError as err:
        raise error(notice_text(err, ui), ui) from None
    except InputError as err:  # the model or task chosen above (check_text refuses each line on its own)
        raise error(notice_text(err.notice, ui), ui) from None
    except ModelFailureError as err:
        raise error(esc(failure_text(err.failure, ui)), ui) from None
    except Cancelled:
        raise abandoned() from None
    records = found.records
    task_lang = lab.checkpoints[(records[0]["task"], records[0]["model"])].meta.get("lang", "en")
    source = f"an uploaded file (`{Path(path).name.replace('`', '')}`, {len(lines)} lines)"  # as typed, not Markdown
    with tempfile.TemporaryDirectory(prefix="attributions-") as out:
        files = write_export(
            records, out, card("Word attributions of an uploaded file", task_lang, source, records, found.skipped)
        )
        kept = [keep(str(f)) for f in files]
    summary = t(
        "export_done", ui, pairs=len(records), lines=len(lines), skipped=found.skipped, min=MIN_WORDS, max=MAX_WORDS
    )
    if found.stopped:
        summary += " " + t(
            f"export_stopped_{found.stopped}",
            ui,
            left=found.left,
            pairs=found.pairs,
            words=EXPORT_MAX_WORDS,
            seconds=f"{seconds:g}",
        )
    return kept, summary


def build(lab: ServedLab, visitors: Visitors, model: gr.Dropdown, task: gr.Dropdown, lang: gr.Radio) -> None:
    """A closed accordion under the Lab's result: the upload, its button, the files and a line on them."""
    seconds = visitors.settings.export_seconds  # the worker's time one export may take
    with gr.Accordion(L("export_title"), open=False, elem_id="attr-export"):
        info = gr.Markdown()
        with gr.Row():
            upload = gr.File(label=L("export_file"), file_types=[".txt"], type="filepath", elem_id="attr-export-file")
            files = gr.File(
                label=L("export_files"), file_count="multiple", interactive=False, elem_id="attr-export-files"
            )
        run = gr.Button(L("export_run"), elem_id="attr-export-run")
        summary = gr.Markdown()

    def on_run(
        path,
        model_value,
        task_value,
        lang_value,
        request: gr.Request,
        profile: gr.OAuthProfile | None = None,
        progress=gr.Progress(),
    ):
        visitors.writer(request, profile)  # long work that writes files: on a Space, for signed-in users
        return export_file(
            visitors.lab(lab, request),  # the visitor's own tasks and the public ones, never another's
            path,
            model_value,
            task_value,
            lang_value,
            request_lang(request),
            lambda written: files.move_resource_to_block_cache(written) or written,  # a path in, its copy out
            lambda done, total: progress((done, total)),
            RequestGate(),
            seconds,
        )

    run.click(
        on_run,
        [upload, model, task, lang],
        [files, summary],
        api_visibility="private",
        concurrency_id="export",
        concurrency_limit=EXPORT_CONCURRENCY,
    )

    def on_load(request: gr.Request) -> str:
        ui = request_lang(request)
        return (
            t("export_info", ui, lines=UPLOAD_MAX_LINES, chars=UPLOAD_MAX_CHARS)
            + " "
            + t("export_budget", ui, words=EXPORT_MAX_WORDS, seconds=f"{seconds:g}")
        )

    on_page_load(on_load, [info])  # in the page's language
