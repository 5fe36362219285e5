"""Three of Gradio's internals web/ sets or reads without a test of its own elsewhere (docs/performance.md, "Gradio's
internals"): the queue's idle polling interval, the upload folder and the components' type-stub writer. Each fails
loudly, naming the internal, when an upgrade renames it."""

import inspect
from pathlib import Path

import gradio as gr
import gradio.queueing
from gradio.utils import get_upload_folder

from service.settings import Settings
from web.gradio_import import STUB_WRITER, leave_stubs
from web.runner import queued


def test_the_queue_polls_as_set_and_gradio_still_reads_sleep_when_free():
    settings = Settings(queue_poll_ms=25)
    with gr.Blocks() as demo:
        gr.Markdown("x")
    queued(demo, settings)
    assert demo._queue.sleep_when_free == 0.025
    read = inspect.getsource(gradio.queueing.Queue)
    assert "self.sleep_when_free" in read, "gradio.queueing.Queue no longer reads sleep_when_free (web/runner.py)"


def test_the_upload_folder_is_gradio_s_temp_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    assert Path(get_upload_folder()) == tmp_path, "gradio.utils.get_upload_folder moved (web/limits.py)"


def test_gradio_defines_its_components_without_rewriting_their_type_stubs():
    """web/gradio_import.py, imported before gradio (by web/, demo/ and the tests' conftest): ComponentMeta still
    calls the stub writer by that name, and the name is ours."""
    import gradio.component_meta as meta

    called = meta.ComponentMeta.__new__.__code__.co_names
    assert STUB_WRITER in called, f"ComponentMeta no longer calls {STUB_WRITER} (web/gradio_import.py)"
    assert meta.create_or_modify_pyi is leave_stubs
