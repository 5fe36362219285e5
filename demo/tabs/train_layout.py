"""The Train tab's layout (demo/tabs/train.py wires it): the file and its columns, the training settings, the
job with its curves, and publishing. Components only: no event, no job."""

from dataclasses import dataclass

import gradio as gr

from core.models import PAPER_MODELS
from demo.i18n import L, model_name
from demo.tabs.named import components
from service.budgets import SpacePolicy
from service.jobs import TrainLimits, TrainRequest


@dataclass
class Page:
    """The tab's components (layout), which the wiring connects."""

    file: gr.File
    summary: gr.Markdown
    text_column: gr.Dropdown
    label_column: gr.Dropdown
    model: gr.Dropdown
    vectors: gr.Radio
    epochs: gr.Slider
    minutes: gr.Slider
    start: gr.Button
    cancel: gr.Button
    job: gr.Dropdown
    new_job: gr.Textbox  # the /train answer, hidden: the job box names the job (never a raw id)
    status: gr.Markdown
    loss_plot: gr.LinePlot
    dev_plot: gr.LinePlot
    confusion: gr.Dataframe
    repo: gr.Textbox
    token: gr.Textbox
    push: gr.Button
    pushed: gr.Markdown
    timer: gr.Timer  # polls the job once a second while it is active

    @property
    def settings(self) -> list:
        """The file and the training settings: a TrainRequest's fields (demo/tabs/named.py)."""
        return components(TrainRequest, self)


def _file_column() -> tuple:
    """The file, what it holds, and its two columns."""
    with gr.Column(scale=3):
        file = gr.File(
            label=L("train_file"), file_types=[".csv", ".tsv", ".jsonl"], type="filepath", elem_id="train-file"
        )
        summary = gr.Markdown(elem_id="train-file-summary")
        with gr.Row():
            text_column, label_column = _column_menu("text"), _column_menu("label")
    return file, summary, text_column, label_column


def _column_menu(role: str) -> gr.Dropdown:
    """The menu of the file's column that holds the `role` ("text" or "label"), filled once a file is read."""
    return gr.Dropdown(
        [],
        value="",
        allow_custom_value=True,
        label=L(f"train_{role}_column"),
        info=L("train_column_info"),
        elem_id=f"train-{role}-column",
    )


def _settings_column(limits: TrainLimits) -> tuple:
    """The model, the word vectors, the epochs and the time budget (within this server's limits), Start, Cancel."""
    with gr.Column(scale=2):
        model = gr.Dropdown(
            [(model_name(m), m) for m in PAPER_MODELS], value="dcnn", label=L("train_model"), elem_id="train-model"
        )
        vectors = gr.Radio(
            [(L("train_vectors_none"), "none"), (L("train_vectors_auto"), "auto")],
            value="none",
            label=L("train_vectors"),
        )
        epochs = gr.Slider(
            1,
            limits.max_epochs,
            value=min(3, limits.max_epochs),
            step=1,
            label=L("train_epochs"),
            elem_id="train-epochs",
        )
        minutes = gr.Slider(
            0.5, limits.max_minutes, value=min(5.0, limits.max_minutes), step=0.5, label=L("train_minutes")
        )
        with gr.Row():
            start = gr.Button(L("train_start"), variant="primary", elem_id="train-start")
            cancel = gr.Button(L("train_cancel"), variant="stop", elem_id="train-cancel")
    return model, vectors, epochs, minutes, start, cancel


def layout(limits: TrainLimits, policy: SpacePolicy) -> Page:
    """Top to bottom: the sign-in (where Hugging Face's own is there), the file and the settings side by side, the
    job, its status, curves and confusion matrix, and the publishing accordion."""
    gr.Markdown(L("train_md"))
    # a LoginButton is what makes Gradio add its OAuth routes: only with Hugging Face's own, never its mock, which
    # would sign every visitor in as HF_TOKEN's owner
    if policy.login:  # training (and publishing) is for signed-in users
        with gr.Row():
            gr.LoginButton()
            gr.Markdown(L("train_sign_in") if policy.sign_in else "")
    elif policy.sign_in:
        gr.Markdown(L("train_sign_in_off"))
    with gr.Row():
        file, summary, text_column, label_column = _file_column()
        model, vectors, epochs, minutes, start, cancel = _settings_column(limits)
    job = gr.Dropdown([], value=None, allow_custom_value=True, label=L("train_job"), elem_id="train-job")
    new_job = gr.Textbox(visible=False)
    status = gr.Markdown(elem_id="train-status")
    with gr.Row():
        loss_plot = gr.LinePlot(x="epoch", y="loss", label=L("train_loss"), elem_id="train-loss")
        dev_plot = gr.LinePlot(x="epoch", y="accuracy", label=L("train_dev"), elem_id="train-dev")
    confusion = gr.Dataframe(visible=False, interactive=False, label=L("train_confusion"), elem_id="train-confusion")
    with gr.Accordion(L("train_publish"), open=False):
        with gr.Row():  # with Hugging Face's sign-in above it gives the token; elsewhere the user pastes one
            repo = gr.Textbox(label=L("train_repo"), placeholder="your-name/my-dcnn", elem_id="train-repo")
            token = gr.Textbox(label=L("train_token"), type="password", visible=not policy.login, elem_id="train-token")
        push = gr.Button(L("train_push"), elem_id="train-push")
        pushed = gr.Markdown(elem_id="train-pushed")
    return Page(
        file=file,
        summary=summary,
        text_column=text_column,
        label_column=label_column,
        model=model,
        vectors=vectors,
        epochs=epochs,
        minutes=minutes,
        start=start,
        cancel=cancel,
        job=job,
        new_job=new_job,
        status=status,
        loss_plot=loss_plot,
        dev_plot=dev_plot,
        confusion=confusion,
        repo=repo,
        token=token,
        push=push,
        pushed=pushed,
        timer=gr.Timer(1.0, active=False),
    )
