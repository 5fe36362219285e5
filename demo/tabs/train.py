"""The Train tab and the endpoints `/train` (a file and settings -> a job id), `/train_status` (progress and,
when done, the task to predict with) and `/train_cancel`: a user's labelled file becomes a model in the lab.

Training runs in demo.training's worker process; this tab only submits, polls (a timer, once a second while
a job is active) and draws what the job's state holds. A job is its submitter's (demo/owners.py): to anyone
else its id is unknown. Callbacks first, then the layout, then the wiring.
"""

import os
from dataclasses import dataclass

import gradio as gr
import pandas as pd

from core.data.user import USER_DATA_TEXT, UserDataError, check_rows, choose_columns, read_table
from core.models import PAPER_MODELS
from core.notices import Notice
from demo.endpoints import endpoint
from demo.i18n import L, error, label_name, model_name, notice_text, request_lang, t
from demo.owners import Visitors
from demo.plots import esc, md
from demo.tabs.lab import LabView, task_choices
from demo.training import TrainingQueue
from demo.training_ray import training_queue
from service.jobs import ACTIVE, JOB_TEXT, JobError, list_jobs
from service.lab import ServedLab
from service.publish import push_job


def _error(err: UserDataError | JobError, ui: str) -> gr.Error:
    return error(esc(notice_text(err, ui)), ui)  # on the page, a toast titled in its language


def file_summary(path: str | None, text_column: str, label_column: str, limits, ui: str) -> tuple:
    """What the chosen file holds (rows, columns, labels, language) or what is wrong with it, and the
    column choices."""
    if not path:
        return "", gr.update(choices=[], value=""), gr.update(choices=[], value="")
    try:  # read once: the columns to choose from, then the checks on the chosen ones
        table = read_table(path, limits.max_bytes, limits.max_rows)
    except UserDataError as err:
        return f"❌ {md(notice_text(err, ui))}", gr.update(choices=[]), gr.update(choices=[])
    columns = table.columns
    if len(columns) < 2:  # nothing to choose between: said as such
        return f"❌ {t('train_one_column', ui, column=md(columns[0] if columns else ''))}", *[gr.update(choices=[])] * 2
    chosen = "", ""
    try:  # the columns taken (chosen, else detected) show in the pickers and the message, even when refused
        chosen = choose_columns(columns, table.rows, text_column, label_column)
        rows = check_rows(table, *chosen)
    except UserDataError as err:
        taken = t("train_columns_taken", ui, text=md(chosen[0]), label=md(chosen[1])) if all(chosen) else ""
        return (
            f"❌ {taken}{md(notice_text(err, ui))}",
            gr.update(choices=columns, value=chosen[0]),
            gr.update(choices=columns, value=chosen[1]),
        )
    labels = ", ".join(label_name(l, ui) for l in rows.label_names[:8]) + (" …" if len(rows.label_names) > 8 else "")
    text = t(
        "train_file_ok",
        ui,
        rows=len(rows.texts),
        text=md(rows.text_column),
        label=md(rows.label_column),
        n=len(rows.label_names),
        labels=md(labels),
        language=t(f"lang_{rows.lang}", ui),
    )
    return (
        f"✅ {text}",
        gr.update(choices=columns, value=rows.text_column),
        gr.update(choices=columns, value=rows.label_column),
    )


# the API page's example upload (its snippets: handle_file('reviews.csv')), a file of the caller's
UPLOAD_EXAMPLE = {
    "path": "reviews.csv",
    "url": "reviews.csv",
    "orig_name": "reviews.csv",
    "meta": {"_type": "gradio.FileData"},
}


def uploaded_path(file: object) -> str:
    """The server path of a file sent to this app (gradio_client's handle_file, or /gradio_api/upload and then
    {"path": ..., "meta": {"_type": "gradio.FileData"}}), which Gradio checked lies in its upload folder (or
    fetched, a URL) before the call, as for the tab's File component; anything else is no file (""): a bare path
    or a dict without that mark reaches the endpoint unchecked."""
    meta = file.get("meta") if isinstance(file, dict) else None
    path = file.get("path") if isinstance(file, dict) else None
    marked = isinstance(meta, dict) and meta.get("_type") == "gradio.FileData"
    return path if marked and isinstance(path, str) else ""


def _duration(seconds: float, ui: str) -> str:
    minutes, rest = divmod(int(round(seconds)), 60)
    return t("duration_min", ui, minutes=minutes, seconds=rest) if minutes else t("duration_s", ui, seconds=rest)


def status_text(job: dict, ui: str) -> str:
    """The job's state in one line: a finished job says why its training ended (every epoch, patience, the time
    budget, a cancel), and a job that went on elsewhere (service.remote) says so after it."""
    stop = job.get("stop")
    if job["status"] == "cancelled" and stop:  # "Cancelled during epoch 2 of 5." says all of "Cancelled."
        line = md(stored_text(stop, ui))
    else:
        line = _state_text(job, ui) + (f" {md(stored_text(stop, ui))}" if stop else "")
    if notice := job.get("notice"):
        line += " · " + md(stored_text(notice, ui))
    return line


def stored_text(entry: dict, ui: str) -> str:
    """A job's stored error or notice (a code, its params and the English) in the UI language; one without a
    code core words (a bug's exception) as its English message."""
    table = next((text for text in (USER_DATA_TEXT, JOB_TEXT) if entry["code"] in text), None)
    return (
        notice_text(Notice(entry["code"], entry["params"]), ui, table)
        if table
        else entry.get("message", "").split(": ", 1)[-1]
    )


def _state_text(job: dict, ui: str) -> str:
    status = job["status"]
    if status == "queued":
        return t("train_status_queued", ui, position=job["queue_position"])
    if status == "running":
        eta = t("train_eta", ui, time=_duration(job["eta_seconds"], ui)) if job["eta_seconds"] is not None else ""
        # within an epoch, as far as the live loss curve has come (the progress itself moves per epoch)
        done = max(job["progress"], job["loss"][-1][0] if job.get("loss") else 0)
        return t(
            "train_status_running",
            ui,
            epoch=done,
            epochs=job["epochs"],
            percent=100 * done / job["epochs"],
            eta=eta,
        )
    if status == "done":
        m = job["metrics"]
        return t(
            "train_status_done",
            ui,
            task=md(job.get("title") or job["task"]),
            model=md(model_name(job["model"])),
            accuracy=m["test_accuracy"],
            n=m["test_examples"],
        )
    if status == "failed":
        return t("train_status_failed", ui, error=md(stored_text(job["error"], ui)))
    return t(f"train_status_{status}", ui)


def curves(job: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The live training-loss curve (a point per batch or group of batches) and the dev accuracy of every
    evaluation so far, both against epochs (fractional within an epoch). A job stored before its dev points were
    recorded live places its evaluations evenly in each finished epoch."""
    loss = pd.DataFrame(job["loss"], columns=["epoch", "loss"])
    dev = job.get("dev") or [
        (r["epoch"] - 1 + (i + 1) / len(r.get("dev_evals", [r["dev_accuracy"]])), accuracy)
        for r in job["history"]
        for i, accuracy in enumerate(r.get("dev_evals", [r["dev_accuracy"]]))
    ]
    return loss, pd.DataFrame(dev, columns=["epoch", "accuracy"])


def confusion_table(job: dict, ui: str) -> pd.DataFrame:
    labels = [label_name(l, ui) for l in job["metrics"]["labels"]]
    return pd.DataFrame(
        [[gold, *row] for gold, row in zip(labels, job["metrics"]["confusion"])], columns=[t("col_gold", ui), *labels]
    )


def job_choices(queue: TrainingQueue, owner: str) -> list[tuple[str, str]]:
    """The job box's choices: the owner's jobs, newest first, each named by its file, date and model."""
    jobs = [j for j in list_jobs(queue.root) if j.get("owner") == owner]
    return [(f"{j.get('title') or j['file']} · {model_name(j['model'], cited=False)}", j["id"]) for j in reversed(jobs)]


@dataclass
class TrainView:
    queue: TrainingQueue
    job: gr.Dropdown


def build(lab: ServedLab, lab_view: LabView, visitors: Visitors) -> TrainView:
    queue = training_queue(lab, visitors.settings)
    limits = queue.limits
    on_space = bool(os.environ.get("SPACE_ID"))
    gr.Markdown(L("train_md"))
    if on_space:  # Gradio's Hugging Face login works on a Space: training (and publishing) is for signed-in users
        with gr.Row():
            gr.LoginButton()
            gr.Markdown(L("train_sign_in") if visitors.policy.sign_in else "")
    with gr.Row():
        with gr.Column(scale=3):
            file = gr.File(
                label=L("train_file"), file_types=[".csv", ".tsv", ".jsonl"], type="filepath", elem_id="train-file"
            )
            summary = gr.Markdown(elem_id="train-file-summary")
            with gr.Row():
                text_column = gr.Dropdown(
                    [],
                    value="",
                    allow_custom_value=True,
                    label=L("train_text_column"),
                    info=L("train_column_info"),
                    elem_id="train-text-column",
                )
                label_column = gr.Dropdown(
                    [],
                    value="",
                    allow_custom_value=True,
                    label=L("train_label_column"),
                    info=L("train_column_info"),
                    elem_id="train-label-column",
                )
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
    job = gr.Dropdown([], value=None, allow_custom_value=True, label=L("train_job"), elem_id="train-job")
    new_job = gr.Textbox(visible=False)
    status = gr.Markdown(elem_id="train-status")
    with gr.Row():
        loss_plot = gr.LinePlot(x="epoch", y="loss", label=L("train_loss"), elem_id="train-loss")
        dev_plot = gr.LinePlot(x="epoch", y="accuracy", label=L("train_dev"), elem_id="train-dev")
    confusion = gr.Dataframe(visible=False, interactive=False, label=L("train_confusion"), elem_id="train-confusion")
    with gr.Accordion(L("train_publish"), open=False):
        with gr.Row():  # on a Space the sign-in above gives the token; elsewhere the user pastes one
            repo = gr.Textbox(label=L("train_repo"), placeholder="your-name/my-dcnn", elem_id="train-repo")
            token = gr.Textbox(label=L("train_token"), type="password", visible=not on_space, elem_id="train-token")
        push = gr.Button(L("train_push"), elem_id="train-push")
        pushed = gr.Markdown(elem_id="train-pushed")
    timer = gr.Timer(1.0, active=False)

    # -- callbacks -------------------------------------------------------------------------------------
    def on_file(path, text_value, label_value, request: gr.Request):
        return file_summary(path, text_value, label_value, limits, request_lang(request))

    def submit(path, model, text_column, label_column, epochs, minutes, vectors, request, profile) -> str:
        owner, client = visitors.writer(request, profile)
        try:
            return queue.submit(path, model, text_column, label_column, epochs, minutes, vectors, owner, client)["id"]
        except (UserDataError, JobError) as err:
            raise _error(err, request_lang(request)) from None

    def on_start(
        path,
        model,
        text_value,
        label_value,
        epochs,
        minutes,
        vectors,
        request: gr.Request,
        profile: gr.OAuthProfile | None,
    ):
        return submit(path, model, text_value, label_value, epochs, minutes, vectors, request, profile)

    def train(
        file: gr.FileData,
        model: str = "dcnn",
        text_column: str = "",
        label_column: str = "",
        epochs: int = min(3, limits.max_epochs),
        minutes: float = min(5.0, limits.max_minutes),
        vectors: str = "none",
        request: gr.Request | None = None,
        profile: gr.OAuthProfile | None = None,
    ) -> str:
        """Queue a training job on a labelled CSV/TSV/JSONL file; returns the job id for /train_status (the
        job, its task and its model are this session's owner's: /owner; on a Space, the signed-in user's).

        Args:
            file: the labelled CSV, TSV (a header row) or JSONL file, uploaded: gradio_client's handle_file(path)
            model: the model to train: tensor_cnn, mrnn, dcnn, adasent or agt
            text_column: the column of texts; "": detected (a name such as text or review; of two columns, the longer)
            label_column: the column of labels; "": detected (a name such as label or stars; of two, the shorter)
            epochs: passes over the training rows, a whole number from 1 to this server's maximum
            minutes: the training time budget in minutes, from 0.5 to this server's maximum
            vectors: none (random word vectors) or auto (pretrained ones of the file's language, when present)
        """
        return submit(uploaded_path(file), model, text_column, label_column, epochs, minutes, vectors, request, profile)

    def on_started(job_id, request: gr.Request):
        """The job box names the new job (and the owner's others) by file, date and model; polling starts."""
        return gr.update(choices=job_choices(queue, visitors.owner(request)), value=job_id), gr.Timer(active=True)

    def train_status(job: str, request: gr.Request | None = None) -> dict:
        """A job's status (queued/running/done/failed/cancelled/stopped), queue position, progress, per-epoch
        history, ETA and, when done, the task to predict with (/predict, /compare) and its test metrics.

        Args:
            job: the job id /train returned
        """
        try:
            return queue.status(job, visitors.owner(request))
        except JobError as err:
            raise _error(err, request_lang(request)) from None

    def on_tick(job_id, request: gr.Request):
        ui = request_lang(request)
        try:
            current = queue.status(job_id, visitors.owner(request)) if job_id else None
        except JobError as err:
            current, problem = None, f"❌ {md(notice_text(err, ui))}"
        else:
            problem = t("train_no_job", ui)
        if current is None:
            return problem, None, None, gr.update(visible=False), gr.Timer(active=False), gr.update()
        loss, dev = curves(current)
        done = current["status"] == "done"
        table = gr.update(value=confusion_table(current, ui), visible=True) if done else gr.update(visible=False)
        # the new task joins the Lab's Task menu; what the Lab shows stays the visitor's choice
        lab_task = gr.update(choices=task_choices(visitors.lab(lab, request)), visible=True) if done else gr.update()
        return (status_text(current, ui), loss, dev, table, gr.Timer(active=current["status"] in ACTIVE), lab_task)

    def train_cancel(job: str, request: gr.Request | None = None) -> str:
        """Cancel a queued or running job; returns its status line.

        Args:
            job: the job id /train returned
        """
        try:
            return status_text(queue.cancel(job, visitors.owner(request)), request_lang(request))
        except JobError as err:
            raise _error(err, request_lang(request)) from None

    def on_cancel(
        job_id, request: gr.Request
    ):  # its own name: a private event takes one, and /train_cancel is the API's
        return train_cancel(job_id, request)

    def on_push(job_id, repo_id, token_value, request: gr.Request, oauth: gr.OAuthToken | None = None):
        ui = request_lang(request)
        try:
            url = push_job(
                job_id, repo_id, (oauth.token if oauth else None) or token_value, queue.root, visitors.owner(request)
            )
        except JobError as err:
            raise _error(err, ui) from None
        return t("train_pushed", ui, url=url)

    # -- wiring ----------------------------------------------------------------------------------------
    file.upload(
        on_file, [file, text_column, label_column], [summary, text_column, label_column], api_visibility="private"
    )
    file.clear(
        on_file, [file, text_column, label_column], [summary, text_column, label_column], api_visibility="private"
    )
    for column in (text_column, label_column):
        column.input(
            on_file, [file, text_column, label_column], [summary, text_column, label_column], api_visibility="private"
        )
    # the new id goes to a hidden box (the /train answer), and the job box gets it with its name: never a raw id
    started = start.click(
        on_start, [file, model, text_column, label_column, epochs, minutes, vectors], new_job, api_visibility="private"
    )
    started.success(on_started, new_job, [job, timer], api_visibility="private")
    timer.tick(  # quietly: Gradio's own "processing | 0.5s" would show in the status line every second
        on_tick,
        job,
        [status, loss_plot, dev_plot, confusion, timer, lab_view.task],
        api_visibility="private",
        show_progress="hidden",
    )
    job.input(lambda: gr.Timer(active=True), None, timer, api_visibility="private")  # an earlier job, chosen
    cancel.click(on_cancel, job, status, api_visibility="private")
    push.click(on_push, [job, repo, token], pushed, api_visibility="private")
    # the endpoints: gr.api, each parameter named and described on the API page (the tab's components would show
    # their translated labels as "[object Object]", the columns as an empty choice and Gradio's sample PDF)
    endpoint(train, examples={"file": UPLOAD_EXAMPLE}, api_name="train")
    endpoint(train_cancel, api_name="train_cancel")
    endpoint(train_status, api_name="train_status")
    return TrainView(queue, job)


def page_updates(queue: TrainingQueue, seen: ServedLab, owner: str) -> tuple:
    """On a page load, for its owner: the Lab tab's task choice (the public tasks and the owner's, trained since
    the app started) and the job box (the owner's jobs)."""
    return (
        gr.update(choices=task_choices(seen), visible=len(seen.tasks()) > 1),
        gr.update(choices=job_choices(queue, owner)),
    )
