"""The Lab's file upload: every line of a user's text file explained by the chosen model(s) with every
attribution method, returned as files to download (attributions.jsonl, words.csv and the dataset card), the
same files `make attribute` writes (core/analysis/export.py). Pure function first, then layout and wiring."""

import tempfile
from pathlib import Path

import gradio as gr

from core.analysis.export import (
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
from core.predict import Lab
from demo.i18n import L, error, notice_text, request_lang, t


def export_file(
    lab: Lab, path: str | None, model: str, task: str, lang: str, ui: str, progress=None
) -> tuple[list[str], str]:
    """(the files to download, one line saying what they hold); a refused file raises gr.Error with one line."""
    if not path:
        raise error(t("export_no_file", ui), ui)
    try:
        lines = read_lines(Path(path).read_bytes())
        records, skipped = text_records(lab, lines, task, lang, model, progress)
    except ExportError as err:
        raise error(notice_text(err, ui), ui) from None
    except InputError as err:  # the model or task chosen above (check_text refuses each line on its own)
        raise error(notice_text(err.notice, ui), ui) from None
    task_lang = lab.checkpoints[(records[0]["task"], records[0]["model"])].meta.get("lang", "en")
    source = f"an uploaded file ({Path(path).name}, {len(lines)} lines)"
    out = tempfile.mkdtemp(prefix="attributions-")
    title = "Word attributions of an uploaded file"
    files = write_export(records, out, card(title, task_lang, source, records, skipped))
    return [str(f) for f in files], t(
        "export_done", ui, pairs=len(records), lines=len(lines), skipped=skipped, min=MIN_WORDS, max=MAX_WORDS
    )


def build(lab: Lab, model: gr.Dropdown, task: gr.Dropdown, lang: gr.Radio) -> None:
    """A closed accordion under the Lab's result: the upload, its button, the files and a line on them."""
    with gr.Accordion(L("export_title"), open=False, elem_id="attr-export"):
        info = gr.Markdown()
        with gr.Row():
            upload = gr.File(label=L("export_file"), file_types=[".txt"], type="filepath", elem_id="attr-export-file")
            files = gr.File(
                label=L("export_files"), file_count="multiple", interactive=False, elem_id="attr-export-files"
            )
        run = gr.Button(L("export_run"), elem_id="attr-export-run")
        summary = gr.Markdown()

    def on_run(path, model_value, task_value, lang_value, request: gr.Request, progress=gr.Progress()):
        return export_file(
            lab,
            path,
            model_value,
            task_value,
            lang_value,
            request_lang(request),
            lambda done, total: progress((done, total)),
        )

    run.click(on_run, [upload, model, task, lang], [files, summary], api_visibility="private", concurrency_id="model")

    def on_load(request: gr.Request) -> str:
        return t("export_info", request_lang(request), lines=UPLOAD_MAX_LINES, chars=UPLOAD_MAX_CHARS)

    gr.on(None, on_load, None, info, api_visibility="private")  # triggers=None: on page load, in its language
