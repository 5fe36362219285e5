"""The Train tab and the endpoints `/train` (a file and settings -> a job id), `/train_status` (progress and,
when done, the task to predict with) and `/train_cancel`: a user's labelled file becomes a model in the lab.

Training runs in web.training's worker process; this tab only submits, polls (a timer, once a second while
a job is active) and draws what the job's state holds. A job is its submitter's (web/owners.py): to anyone
else its id is unknown. The pure functions first, then the wiring; the layout is demo/tabs/train_layout.py's.
"""

import gradio as gr
import pandas as pd

from core.data.user import USER_DATA_TEXT, UserDataError, check_rows, choose_columns, read_table
from core.notices import Notice
from demo.i18n import error, label_name, model_name, notice_text, request_lang, t
from demo.plots import esc, md
from demo.tabs.lab import LabView, task_choices
from demo.tabs.named import named
from demo.tabs.train_layout import Page, layout
from service.jobs import ACTIVE, JOB_TEXT, JobError, TrainLimits, TrainRequest, list_jobs
from service.lab import ServedLab
from service.publish import push_job
from web.endpoints import endpoint
from web.owners import Visitors
from web.training import TrainingQueue
from web.training_ray import training_queue


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
    if warning := job.get("degenerate"):  # said on the model's Lab panel too (demo.lab_html.accuracy_text)
        line += " · ⚠️ " + md(stored_text(warning, ui))
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


def build(lab: ServedLab, lab_view: LabView, visitors: Visitors, tab: gr.Tab) -> None:
    queue = training_queue(lab, visitors.settings)
    page = layout(queue.limits, visitors.policy)
    _wire_file(page, queue.limits)
    _wire_start(page, queue, visitors)
    _wire_job(page, lab, lab_view, queue, visitors, tab)
    _wire_push(page, queue, visitors)
    _endpoints(queue, visitors)


def _submit(queue: TrainingQueue, visitors: Visitors, request, profile, asked: TrainRequest) -> str:
    """Start's and /train's: the training `asked` (the file as its path) queued for the requester; its id."""
    owner, client = visitors.writer(request, profile)
    try:
        return queue.submit(asked, owner, client)["id"]
    except (UserDataError, JobError) as err:
        raise _error(err, request_lang(request)) from None


def _cancel(queue: TrainingQueue, visitors: Visitors, job: str, request: gr.Request | None) -> str:
    """Cancel's and /train_cancel's: the requester's job cancelled; its status line."""
    try:
        return status_text(queue.cancel(job, visitors.owner(request)), request_lang(request))
    except JobError as err:
        raise _error(err, request_lang(request)) from None


def _wire_file(page: Page, limits: TrainLimits) -> None:
    """The file's summary and the column choices follow the file and either column."""

    def on_file(path, text_value, label_value, request: gr.Request):
        return file_summary(path, text_value, label_value, limits, request_lang(request))

    columns = [page.text_column, page.label_column]
    for trigger in (page.file.upload, page.file.clear, *(column.input for column in columns)):
        trigger(on_file, [page.file, *columns], [page.summary, *columns], api_visibility="private")


def _wire_start(page: Page, queue: TrainingQueue, visitors: Visitors) -> None:
    """Start queues a job, which the job box then names and the timer polls."""

    # Gradio passes the request and the profile, then each input (Page.settings), as positional parameters
    def on_start(request: gr.Request, profile: gr.OAuthProfile | None, *settings):
        return _submit(queue, visitors, request, profile, named(TrainRequest, settings))

    def on_started(job_id, request: gr.Request):
        """The job box names the new job (and the owner's others) by file, date and model; polling starts."""
        return gr.update(choices=job_choices(queue, visitors.owner(request)), value=job_id), gr.Timer(active=True)

    # the new id goes to a hidden box (the /train answer), and the job box gets it with its name: never a raw id
    started = page.start.click(on_start, page.settings, page.new_job, api_visibility="private")
    started.success(on_started, page.new_job, [page.job, page.timer], api_visibility="private")


def _wire_job(
    page: Page, lab: ServedLab, lab_view: LabView, queue: TrainingQueue, visitors: Visitors, tab: gr.Tab
) -> None:
    """The job box, filled with the owner's jobs as the tab opens; the chosen job's status, curves and confusion
    matrix, polled while it is active; Cancel."""

    def on_open(request: gr.Request):
        """The owner's jobs as the tab opens, not on every page load: listing them reads every job's file (a stat
        each, which a lecture hall's page loads all waited on: docs/performance.md)."""
        return gr.update(choices=job_choices(queue, visitors.owner(request)))

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

    def on_cancel(job_id, request: gr.Request):  # its own name: a private event takes one; /train_cancel the API's
        return _cancel(queue, visitors, job_id, request)

    shown = [page.status, page.loss_plot, page.dev_plot, page.confusion, page.timer, lab_view.task]
    # quietly: Gradio's own "processing | 0.5s" would show in the status line every second
    page.timer.tick(on_tick, page.job, shown, api_visibility="private", show_progress="hidden")
    page.job.input(lambda: gr.Timer(active=True), None, page.timer, api_visibility="private")  # an earlier job, chosen
    page.cancel.click(on_cancel, page.job, page.status, api_visibility="private")
    tab.select(on_open, None, page.job, api_visibility="private", show_progress="hidden")


def _wire_push(page: Page, queue: TrainingQueue, visitors: Visitors) -> None:
    """Publish: the chosen job's model pushed to the Hub with the sign-in's token, else the pasted one."""

    def on_push(job_id, repo_id, token_value, request: gr.Request, oauth: gr.OAuthToken | None = None):
        ui = request_lang(request)
        try:
            token_value = (oauth.token if oauth else None) or token_value
            url = push_job(job_id, repo_id, token_value, queue.root, visitors.owner(request))
        except JobError as err:
            raise _error(err, ui) from None
        return t("train_pushed", ui, url=url)

    page.push.click(on_push, [page.job, page.repo, page.token], page.pushed, api_visibility="private")


def _endpoints(queue: TrainingQueue, visitors: Visitors) -> None:
    """/train, /train_cancel and /train_status: gr.api, each parameter named and described on the API page (the
    tab's components would show their translated labels as "[object Object]", the columns as an empty choice and
    Gradio's sample PDF)."""

    def train(
        file: gr.FileData,
        model: str = "dcnn",
        text_column: str = "",
        label_column: str = "",
        epochs: int = min(3, queue.limits.max_epochs),
        minutes: float = min(5.0, queue.limits.max_minutes),
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
        asked = TrainRequest(
            file=uploaded_path(file),
            model=model,
            text_column=text_column,
            label_column=label_column,
            epochs=epochs,
            minutes=minutes,
            vectors=vectors,
        )
        return _submit(queue, visitors, request, profile, asked)

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

    def train_cancel(job: str, request: gr.Request | None = None) -> str:
        """Cancel a queued or running job; returns its status line.

        Args:
            job: the job id /train returned
        """
        return _cancel(queue, visitors, job, request)

    endpoint(train, examples={"file": UPLOAD_EXAMPLE}, api_name="train")
    endpoint(train_cancel, api_name="train_cancel")
    endpoint(train_status, api_name="train_status")
