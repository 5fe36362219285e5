"""Train your own (issue 26): a user's labelled file -> checks -> a queued job -> a worker process -> a model
the lab serves. Tiny files, tiny runs: the worker is a real `python -m service.jobs run` process."""

import csv
import json
import os
import random
import threading
import time
from pathlib import Path

import pytest
from gradio_client import handle_file

from core.checkpoints.files import sha256
from core.data.user import UserDataError, load_user_task, read_rows
from core.gitinfo import git_commit
from demo.i18n import notice_text
from demo.lab_html import result_html
from demo.tabs.checkpoints import facts
from demo.tabs.train import status_text
from service.jobs import (
    ACTIVE,
    JobError,
    TrainLimits,
    TrainRequest,
    job_dir,
    jobs_dir,
    list_jobs,
    read_job,
    recover_jobs,
    run_job,
    submit_job,
    update_job,
)
from service.lab import ServedLab
from service.publish import push_job
from service.settings import Settings
from service.user_models import main as train_main
from web.training import TrainingQueue
from web.training_ray import RayTrainingQueue

POSITIVE, NEGATIVE = ["good", "great", "fun", "moving"], ["bad", "dull", "awful", "flat"]
NEUTRAL = ["the", "movie", "film", "plot", "is", "a"]
POSITIVE_ZH, NEGATIVE_ZH, NEUTRAL_ZH = (
    ["很好", "喜欢", "满意"],
    ["很差", "失望", "糟糕"],
    ["这个", "手机", "质量", "物流"],
)


def reviews(n: int = 80, seed: int = 3, zh: bool = False) -> list[tuple[str, str]]:
    """(text, stars) rows: a polar word among neutral ones decides 5 or 1 stars."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        positive = rng.random() < 0.5
        words = rng.sample(NEUTRAL_ZH if zh else NEUTRAL, 3)
        words.insert(
            rng.randint(0, 3),
            rng.choice((POSITIVE_ZH if zh else POSITIVE) if positive else (NEGATIVE_ZH if zh else NEGATIVE)),
        )
        rows.append(("".join(words) if zh else " ".join(words), "5" if positive else "1"))
    return rows


def write_csv(path: Path, rows, header=("id", "review", "stars"), delimiter=",") -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows([[i, *row] for i, row in enumerate(rows)] if header[0] == "id" else rows)
    return path


@pytest.fixture
def good_csv(tmp_path) -> Path:
    return write_csv(tmp_path / "reviews.csv", reviews())


def bad_files(folder: Path) -> dict[str, tuple[Path, dict]]:
    """One file per problem the issue names, and the parameters its message must carry."""
    rows = reviews(20)
    encoding = folder / "latin1.csv"
    encoding.write_bytes("id,review,stars\n0,good film,5\n1,caf\xe9 is bad,1\n".encode("latin-1"))
    empty = write_csv(folder / "empty.csv", rows[:2] + [("   ", "5")] + rows[2:])
    one = write_csv(folder / "one.csv", [(text, "5") for text, _ in rows])
    big = write_csv(folder / "big.csv", reviews(1200))  # about 32 KB
    return {
        "bad_encoding": (encoding, {"row": 3}),
        "missing_column": (write_csv(folder / "cols.csv", rows), {"column": "sentence"}),
        "one_label": (one, {"label": "5"}),
        "empty_text": (empty, {"row": 4}),
        "too_large": (big, {}),
    }


# -- the file ---------------------------------------------------------------------------------------


def test_columns_are_detected_by_name_and_the_language_per_file(tmp_path):
    rows = read_rows(write_csv(tmp_path / "a.csv", reviews()))
    assert (rows.text_column, rows.label_column, rows.lang, rows.label_names) == ("review", "stars", "en", ["1", "5"])
    zh = read_rows(write_csv(tmp_path / "b.tsv", reviews(zh=True), header=("评论", "标签"), delimiter="\t"))
    assert (zh.text_column, zh.label_column, zh.lang) == ("评论", "标签", "zh")
    # two columns with other names: the longer one is the text
    two = read_rows(write_csv(tmp_path / "c.csv", [(s, t) for t, s in reviews()], header=("y_value", "words")))
    assert (two.text_column, two.label_column) == ("words", "y_value")
    lines = [json.dumps({"sentence": t, "class": s}, ensure_ascii=False) for t, s in reviews()]
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert read_rows(tmp_path / "d.jsonl").text_column == "sentence"


def test_ambiguous_columns_must_be_chosen(tmp_path):
    path = write_csv(tmp_path / "three.csv", [(t, s, "x") for t, s in reviews()], header=("a", "b", "c"))
    with pytest.raises(UserDataError) as err:
        read_rows(path)
    assert err.value.code == "choose_columns" and "a, b, c" in str(err.value)
    assert read_rows(path, "a", "b").label_names == ["1", "5"]


def test_a_seeded_split_unless_the_file_has_one(tmp_path):
    path = write_csv(tmp_path / "r.csv", reviews(100))
    first, second = load_user_task(path, "user_r"), load_user_task(path, "user_r")
    assert [len(first.train), len(first.dev), len(first.test)] == [80, 10, 10]
    assert first.test == second.test and first.labels == ["1", "5"] and first.lang == "en"
    own = [(t, s, "test" if i < 7 else "dev" if i < 12 else "train") for i, (t, s) in enumerate(reviews(40))]
    task = load_user_task(write_csv(tmp_path / "s.csv", own, header=("text", "label", "split")), "user_s")
    assert [len(task.train), len(task.dev), len(task.test)] == [28, 5, 7]


def test_bad_files_get_their_message_in_both_languages(tmp_path):
    for code, (path, params) in bad_files(tmp_path).items():
        with pytest.raises(UserDataError) as err:
            read_rows(path, "sentence" if code == "missing_column" else "", "", max_bytes=4000)
        assert err.value.code == code, (path, err.value)
        assert params.items() <= err.value.params.items()
        assert all(str(v) in str(err.value) for v in params.values())
        chinese = notice_text(err.value, "zh")
        assert chinese != str(err.value) and all(str(v) in chinese for v in params.values())


def test_a_bad_file_or_setting_queues_nothing(tmp_path, good_csv):
    root = tmp_path / "um"
    limits = TrainLimits(max_bytes=4000, max_rows=100, max_epochs=5, max_minutes=2)
    for code, (path, _) in bad_files(tmp_path).items():
        with pytest.raises(UserDataError):
            asked = TrainRequest(path, "dcnn", "sentence" if code == "missing_column" else "", epochs=1)
            submit_job(asked, root=root, limits=limits)
    for kwargs, code in (
        ({"model": "nbow"}, "unknown_model"),
        ({"epochs": 6}, "bad_epochs"),
        ({"minutes": 3}, "bad_minutes"),
        ({"vectors": "glove"}, "bad_vectors"),
    ):
        with pytest.raises(JobError) as err:
            submit_job(TrainRequest(good_csv, **{"model": "dcnn", "epochs": 1, **kwargs}), root=root, limits=limits)
        assert err.value.code == code
    assert list_jobs(root) == [] and not (root / "jobs").exists()


# -- the CLI ----------------------------------------------------------------------------------------


def test_cli_trains_a_task_of_its_own_that_the_lab_loads(tmp_path, good_csv, monkeypatch):
    monkeypatch.setenv("LAB_USER_MODELS", str(tmp_path / "um"))
    assert (
        train_main(
            [
                "--model",
                "tensor_cnn",
                "--data",
                str(good_csv),
                "--text-column",
                "review",
                "--label-column",
                "stars",
                "--epochs",
                "1",
                "--vectors",
                "none",
                "--threads",
                "1",
                "--out",
                str(tmp_path / "run"),
                "--no-progress",
                "--set",
                "embed_dim=8",
                "--set",
                "hidden=6",
            ]
        )
        == 0
    )
    installed = list((tmp_path / "um" / "checkpoints").glob("user_reviews_*/tensor_cnn"))
    assert len(installed) == 1
    lab = ServedLab({})
    task, model = lab.add_checkpoint(installed[0])
    assert model == "tensor_cnn" and lab.predict("a great film", model, task=task).label in ("1", "5")
    # resumable: a second call with --resume and one more epoch continues from the saved state
    assert (
        train_main(
            [
                "--model",
                "tensor_cnn",
                "--data",
                str(good_csv),
                "--text-column",
                "review",
                "--label-column",
                "stars",
                "--epochs",
                "2",
                "--vectors",
                "none",
                "--threads",
                "1",
                "--out",
                str(tmp_path / "run"),
                "--no-progress",
                "--set",
                "embed_dim=8",
                "--set",
                "hidden=6",
                "--resume",
            ]
        )
        == 0
    )
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == [1, 2]


def finished(client, job: str, root: Path) -> dict:
    """The app's /train_status of `job` for `client` once the job has finished. Until then the job's file under
    `root` (the app's user-models folder) is read: a status call through gradio_client costs the test and the app
    CPU, a file read none. The one call after it is the app's word: finished once the Lab serves the model."""
    deadline = time.monotonic() + 240
    while read_job(jobs_dir(root) / job)["status"] in ACTIVE:
        assert time.monotonic() < deadline, read_job(jobs_dir(root) / job)
        time.sleep(0.2)
    return client.predict(job, api_name="/train_status")


def wait_done(client, job: str, root: Path) -> dict:
    status = finished(client, job, root)
    assert status["status"] == "done", status
    return status


# -- the queue --------------------------------------------------------------------------------------


def wait_for(
    queue: TrainingQueue, job_id: str, statuses=("done", "failed", "cancelled", "stopped"), seconds=180
) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = queue.status(job_id)
        if job["status"] in statuses:
            return job
        time.sleep(0.3)
    raise AssertionError(f"job {job_id} still {job['status']} after {seconds} s: {job}")


def test_one_job_at_a_time_with_queue_positions_and_cancel(tmp_path, good_csv):
    # three of one owner at once; the first runs while the others wait (its worker's start-up alone takes seconds)
    queue = TrainingQueue(ServedLab({}), Settings.load(), tmp_path / "um", TrainLimits(max_jobs_per_owner=3))
    first = queue.submit(TrainRequest(good_csv, "dcnn", epochs=1, minutes=1))
    second = queue.submit(TrainRequest(good_csv, "mrnn", epochs=1, minutes=1))
    third = queue.submit(TrainRequest(good_csv, "agt", epochs=1, minutes=1))
    wait_for(queue, first["id"], ("running",))
    assert queue.status(second["id"])["queue_position"] == 1 and queue.status(third["id"])["queue_position"] == 2
    assert queue.cancel(second["id"])["status"] == "cancelled"
    assert queue.status(third["id"])["queue_position"] == 1
    assert wait_for(queue, first["id"])["status"] == "done"
    running = wait_for(queue, third["id"], ("running",))
    assert running["queue_position"] is None
    queue.cancel(third["id"])
    assert wait_for(queue, third["id"])["status"] == "cancelled"
    assert [key for key in queue.lab.checkpoints] == [(first["task"], "dcnn")]


def test_a_job_left_running_resumes_after_a_restart(tmp_path, good_csv):
    root = tmp_path / "um"
    job = submit_job(TrainRequest(good_csv, "dcnn", epochs=1, minutes=1), root=root)
    folder = job_dir(job["id"], root)
    assert run_job(folder)["status"] == "done"  # epoch 1, trained here: the worker under test is the restart's
    # as if the app died in epoch 2 of 2: the state of epoch 1 is on disk, the job says running
    update_job(folder, status="running", epochs=2, metrics=None)
    restarted = TrainingQueue(ServedLab({}), Settings.load(), root)
    resumed = wait_for(restarted, job["id"])
    assert resumed["status"] == "done" and resumed["resumes"] == 1
    assert [r["epoch"] for r in resumed["history"]] == [1, 2]
    assert "resumed" in (folder / "worker.log").read_text()
    assert (job["task"], "dcnn") in restarted.lab.checkpoints
    restarted.stopped.set()
    # queued again too often: reported as stopped
    update_job(folder, status="running", restarts=2)
    assert recover_jobs(root)[0]["status"] == "stopped"


class SlowToGo:
    """A job's worker that has written its verdict and takes its time to exit, until `gone` is set."""

    returncode = None

    def __init__(self):
        self.waited, self.gone = threading.Event(), threading.Event()

    def wait(self, timeout: float | None = None) -> int:
        self.waited.set()
        self.gone.wait(timeout)
        self.returncode = 0
        return 0

    def poll(self) -> int | None:
        return self.returncode

    def terminate(self) -> None:
        pass


@pytest.mark.parametrize("queue_class", [TrainingQueue, RayTrainingQueue])
def test_a_worker_slow_to_exit_holds_up_no_other_visitors_job(tmp_path, good_csv, queue_class):
    """A job's status waits for its worker to exit (its model served first), without the queue's lock: another
    visitor's cancel answers meanwhile."""
    queue = queue_class(ServedLab({}), Settings.load(), tmp_path / "um", poll=3600)  # the scheduler stays asleep
    mine = queue.submit(TrainRequest(good_csv, "dcnn", epochs=1, minutes=1), owner="a")["id"]
    theirs = queue.submit(TrainRequest(good_csv, "dcnn", epochs=1, minutes=1), owner="b")["id"]
    update_job(job_dir(mine, queue.root), status="failed", finished=time.time())
    worker = SlowToGo()
    if isinstance(queue, RayTrainingQueue):
        queue.workers[mine] = worker
    else:
        queue.worker, queue.job_id = worker, mine
    status = threading.Thread(target=queue.status, args=(mine,))
    status.start()
    assert worker.waited.wait(10)
    cancel = threading.Thread(target=queue.cancel, args=(theirs, "b"))
    cancel.start()
    cancel.join(5)
    alive = cancel.is_alive()
    worker.gone.set()
    status.join(10)
    assert not alive, "another visitor's cancel waited for this job's worker"
    assert queue.status(theirs, "b")["status"] == "cancelled" and queue._worker(mine) is None
    queue.stopped.set()


def test_a_killed_worker_is_reported_stopped(tmp_path, good_csv):
    queue = TrainingQueue(ServedLab({}), Settings.load(), tmp_path / "um")
    job = queue.submit(TrainRequest(good_csv, "dcnn", epochs=1, minutes=1))
    wait_for(queue, job["id"], ("running",))
    deadline = time.monotonic() + 60  # the job is marked running just before its worker is forked
    while (worker := queue.worker) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker is not None
    os.kill(worker.pid, 9)
    stopped = wait_for(queue, job["id"])
    assert stopped["status"] == "stopped" and stopped["error"]["params"]["exit"] == -9
    queue.stopped.set()


def test_publishing_fails_fast_offline(tmp_path, good_csv, trained, user_models):
    waiting = submit_job(TrainRequest(good_csv, "dcnn", epochs=1, minutes=1), root=tmp_path / "um")
    with pytest.raises(JobError) as err:
        push_job(waiting["id"], "me/model", "hf_x", tmp_path / "um")
    assert err.value.code == "not_done"
    job, _ = trained
    start = time.perf_counter()
    for repo, token, code in (
        ("me/model", "", "no_token"),
        ("../x", "hf_x", "bad_repo"),
        ("me/model", "hf_x", "hub_offline"),
    ):
        with pytest.raises(JobError) as err:
            push_job(job["id"], repo, token, user_models)
        assert err.value.code == code
    assert time.perf_counter() - start < 1


# -- the API ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def user_models(tmp_path_factory, monkeypatch_module):
    """The app's queue (built by the `client` fixture) gets a folder of its own."""
    root = tmp_path_factory.mktemp("user_models")
    monkeypatch_module.setenv("LAB_USER_MODELS", str(root))
    monkeypatch_module.setenv("LAB_TRAIN_MAX_BYTES", "20000")
    return root


@pytest.fixture(scope="module")
def trained(client, lab, user_models, tmp_path_factory) -> tuple[dict, object]:
    """(job, the Lab's facts read before it trained): a file of 60 rows uploaded through the API and trained for 2
    epochs by the app's real worker process; one trained job for the tests that read a finished one."""
    known = facts(lab)  # as the app does: read before any job trains
    path = write_csv(tmp_path_factory.mktemp("upload") / "my reviews.csv", reviews(60))
    job_id = client.predict(handle_file(str(path)), "dcnn", "review", "stars", 2, api_name="/train")
    return finished(client, job_id, user_models), known


def test_upload_train_poll_and_predict_through_the_api(client, trained, user_models):
    status, _ = trained
    assert status["status"] == "done", status
    assert status["task"].startswith("user_my_reviews_") and len(status["history"]) == 2
    assert status["metrics"]["labels"] == ["1", "5"] and len(status["metrics"]["confusion"]) == 2
    one = client.predict("a great fun film", "dcnn", status["task"], "auto", api_name="/predict")
    assert one["task"] == status["task"] and one["label"] in ("1", "5") and len(one["probs"]) == 2
    every = client.predict("a dull film", status["task"], "auto", api_name="/compare")
    assert [p["model"] for p in every] == ["dcnn"]
    assert (user_models / "checkpoints" / status["task"] / "dcnn" / "model.safetensors").is_file()


def test_a_trained_model_reports_its_stop_and_is_captioned_with_its_sha256_and_commit(lab, trained, user_models):
    """The Train tab says why a run ended, in English and Chinese, and the Lab's captions name a trained model's
    checkpoint sha256 and commit."""
    job, known = trained
    assert job["status"] == "done", job
    assert job["stop"]["code"] == "stop_epochs" and "Trained every epoch asked for: 2." in status_text(job, "en")
    assert "已训练完要求的全部 2 轮。" in status_text(job, "zh")
    weights = sha256(user_models / "checkpoints" / job["task"] / "dcnn" / "model.safetensors")
    assert job["sha256"] == weights and job["commit"] == git_commit()
    html = result_html([lab.visible_to(job["owner"]).predict("a great film", "dcnn", task=job["task"])], known, "en")
    assert f"checkpoint sha256 {weights[:16]}" in html and "sha256 ?" not in html
    assert f"commit {git_commit()}" in html and job["title"] in html


def test_bad_files_get_their_message_through_the_api(client, tmp_path):
    for code, (path, _params) in bad_files(tmp_path).items():
        column = "sentence" if code == "missing_column" else ""
        with pytest.raises(Exception) as err:
            client.predict(handle_file(str(path)), "dcnn", column, "", 1, api_name="/train")
        expected = {
            "bad_encoding": "row 3 is not UTF-8",
            "missing_column": "no column 'sentence'",
            "one_label": "every row has the label '5'",
            "empty_text": "row 4 has an empty text",
            "too_large": "the limit is",
        }[code]
        assert expected in str(err.value), (code, str(err.value))


# -- the tab's words --------------------------------------------------------------------------------


def test_the_tab_words_every_status_and_draws_the_curves(tmp_path):
    from demo.tabs.train import confusion_table, curves, file_summary

    job = {
        "status": "queued",
        "queue_position": 2,
        "progress": 0.0,
        "epochs": 4,
        "eta_seconds": None,
        "task": "user_x_1",
        "model": "dcnn",
        "loss": [[0.5, 1.2], [1.0, 0.9]],
        "error": None,
        "metrics": None,
        "history": [{"epoch": 1, "train_loss": 0.9, "dev_accuracy": 0.6, "dev_evals": [0.5, 0.6]}],
    }
    done = {
        **job,
        "status": "done",
        "metrics": {
            "test_accuracy": 0.75,
            "test_examples": 8,
            "labels": ["neg", "positive"],
            "confusion": [[3, 1], [1, 3]],
        },
    }
    failed = {
        **job,
        "status": "failed",
        "error": {
            "code": "one_label",
            "params": {"label": "5"},
            "message": "UserDataError: every row has the label '5'",
        },
    }
    running = {**job, "status": "running", "progress": 1.5, "eta_seconds": 75.0}
    texts = {
        (j["status"], ui): status_text(j, ui)
        for j in (job, done, failed, running, {**job, "status": "cancelled"}, {**job, "status": "stopped"})
        for ui in ("en", "zh")
    }
    assert texts["queued", "en"] == "Waiting: position 2 in the training queue." and "第 2 位" in texts["queued", "zh"]
    assert (
        "epoch 1.5 of 4 (38%) · about 1 min 15 s left" in texts["running", "en"]
        and "1 分 15 秒" in texts["running", "zh"]
    )
    assert "0.750" in texts["done", "en"] and "user\\_x\\_1" in texts["done", "zh"]
    within = {**running, "progress": 1.0, "loss": [[0.5, 1.2], [1.0, 0.9], [1.75, 0.8]]}  # mid-epoch, per batch
    assert "epoch 1.8 of 4 (44%)" in status_text(within, "en")
    assert "'5'" in texts["failed", "en"] and "“5”" in texts["failed", "zh"]
    assert texts["cancelled", "zh"] == "已取消。" and texts["stopped", "en"].startswith("Stopped")
    loss, dev = curves(job)
    assert loss.values.tolist() == [[0.5, 1.2], [1.0, 0.9]] and dev.values.tolist() == [[0.5, 0.5], [1.0, 0.6]]
    table = confusion_table(done, "zh")
    assert table.columns.tolist() == ["真实 \\ 预测", "neg", "正面"] and table.values.tolist()[1] == ["正面", 1, 3]
    limits = TrainLimits()
    summary, text_column, label_column = file_summary(
        str(write_csv(tmp_path / "a.csv", reviews())), "", "", limits, "en"
    )
    assert summary.startswith("✅ 80 rows") and text_column["value"] == "review" and label_column["value"] == "stars"
    assert text_column["choices"] == ["id", "review", "stars"]
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"review,stars\n\xff\xfe,1\n")
    assert "第 2 行不是 UTF\\-8" in file_summary(str(bad), "", "", limits, "zh")[0]  # markdown-escaped
    # a file refused on the columns it detected says which, and the pickers show them to change
    comment = write_csv(tmp_path / "comment.csv", [(text, "x") for text, _ in reviews(30)], ("text", "comment"))
    summary, text_column, label_column = file_summary(str(comment), "", "", limits, "en")
    assert summary.startswith("❌ Text column **text**, label column **comment**") and "label 'x'" in summary
    assert (text_column["value"], label_column["value"]) == ("text", "comment")
    alone = tmp_path / "alone.csv"
    alone.write_text("text\na good film\na bad film\n", encoding="utf-8")
    summary, text_column, _ = file_summary(str(alone), "", "", limits, "en")
    assert summary == "❌ The file has one column (text): training needs a text column and a label column."
    assert text_column["choices"] == []


def test_uploads_may_be_larger_than_other_requests():
    """A labelled file over the 1 MiB request limit (up to twice the file cap) reaches the app, which then
    names the cap itself; any other request that large is still refused."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from web.limits import MAX_BODY_BYTES, MAX_UPLOAD_BYTES, RequestBodyLimit

    async def echo(request):
        return PlainTextResponse(str(len(await request.body())))

    app = RequestBodyLimit(
        Starlette(
            routes=[
                Route("/gradio_api/upload", echo, methods=["POST"]),
                Route("/gradio_api/call/compare", echo, methods=["POST"]),
            ]
        )
    )
    body = b"x" * (2 * MAX_BODY_BYTES)
    assert MAX_UPLOAD_BYTES == 2 * TrainLimits().max_bytes > len(body)  # the default cap (5 MB), read at import
    with TestClient(app) as http:
        assert http.post("/gradio_api/upload", content=body).text == str(len(body))
        assert http.post("/gradio_api/call/compare", content=body).status_code == 413
        assert http.post("/gradio_api/upload", content=b"x" * (MAX_UPLOAD_BYTES + 1)).status_code == 413
