"""Owners: a visitor's jobs, tasks and models are its own (web/owners.py, service/owners.py). Two gradio_client
sessions are two visitors of one real app: B finds no trace of A's job or model; A uses it; the same file
trained by both gives two models; a job whose task name collides with A's installs nothing over A's model; an
owner's jobs waiting or running are capped."""

import json
import re
import time
from pathlib import Path

import httpx
import pytest
from gradio_client import Client, handle_file
from lab_fixture import Clients, start_app
from test_user_training import finished, reviews, wait_done, write_csv

from demo.i18n import notice_text, t
from service.jobs import JobError, TrainLimits, TrainRequest, submit_job, update_job
from service.owners import KEY, owner_id
from service.publish import push_job
from service.settings import Settings
from tools.bench.redteam_content import QueueError, event_index, load_event, queue_call


@pytest.fixture(scope="module")
def user_models(tmp_path_factory, monkeypatch_module):
    root = tmp_path_factory.mktemp("user_models")
    monkeypatch_module.setenv("LAB_USER_MODELS", str(root))
    monkeypatch_module.setenv("LAB_TRAIN_MAX_JOBS_PER_OWNER", "2")
    return root


@pytest.fixture(scope="module")
def app(lab, user_models, tmp_path_factory, monkeypatch_module):
    """The app on the tiny checkpoints, and a factory of clients: each Client is one visitor."""
    monkeypatch_module.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
    demo, url = start_app(lab)
    visitors = Clients(url)
    yield visitors
    visitors.close()
    demo.close()


def owner_of(client: Client) -> str:
    return owner_id(KEY, client.session_hash)


def refused(call, *args, api_name: str) -> str:
    with pytest.raises(Exception) as err:
        call(*args, api_name=api_name)
    return str(err.value)


@pytest.fixture(scope="module")
def trained(app, user_models, tmp_path_factory):
    """Visitors A and B, each with a finished one-epoch job on the same file (two real workers, once for the
    tests that need a visitor's model): (a, b, job_a, done_a, done_b, file)."""
    a, b = app(), app()
    path = write_csv(tmp_path_factory.mktemp("trained") / "class_reviews.csv", reviews(40))
    job_a = a.predict(handle_file(str(path)), "dcnn", "review", "stars", 1, api_name="/train")
    job_b = b.predict(handle_file(str(path)), "dcnn", "review", "stars", 1, api_name="/train")
    return a, b, job_a, wait_done(a, job_a, user_models), wait_done(b, job_b, user_models), path


def test_two_visitors_see_only_their_own_jobs_and_models(app, lab, user_models, trained):
    from demo.lab_analysis import task_choices
    from demo.tabs.api import usage
    from demo.tabs.checkpoints import tables

    a, b, job_a, done_a, done_b, _ = trained
    task = done_a["task"]
    # the same file by two owners: two tasks, two installed models, neither replacing the other
    assert done_b["task"] != task
    for task_id in (task, done_b["task"]):
        assert (user_models / "checkpoints" / task_id / "dcnn" / "model.safetensors").is_file()
    assert re.fullmatch(r"class_reviews\.csv · \d{4}-\d{2}-\d{2} \d{2}:\d{2}", done_a["title"])  # no English month

    # B: A's job is unknown to status, cancel and publish; A's task to every endpoint, and named nowhere
    for message in (
        refused(b.predict, job_a, api_name="/train_status"),
        refused(b.predict, job_a, api_name="/train_cancel"),
    ):
        assert f"no training job '{job_a}'" in message

    def answers(t: str) -> list[str]:  # what B is told about task t, with t itself blanked out
        calls = [
            (("a fun film", "dcnn", t, "auto"), "/predict"),
            (("a fun film", t, "auto"), "/compare"),
            ((t, "dcnn"), "/dataset"),
            (("en", t), "/probes"),
        ]
        return [refused(b.predict, *args, api_name=name).replace(t, "<task>") for args, name in calls]

    never = "user_never_trained_0a1b2c"
    unknown = answers(never)
    assert answers(task) == unknown and not any(task in m for m in unknown)
    with pytest.raises(JobError, match="no training job"):
        push_job(job_a, "someone/model", "hf_token", user_models, owner=owner_of(b))
    seen_by_b = lab.visible_to(owner_of(b))
    assert task not in seen_by_b.tasks() and done_b["task"] in seen_by_b.tasks()
    page = str(task_choices(seen_by_b)) + str(tables(seen_by_b, "en")[0]) + usage(seen_by_b, None)
    assert task not in page and job_a not in page and done_b["task"] in page

    # A: its own job and model, named by its file and date
    assert a.predict(job_a, api_name="/train_status")["status"] == "done"
    assert a.predict("a fun film", "dcnn", task, "auto", api_name="/predict")["task"] == task
    assert [p["model"] for p in a.predict("a dull film", task, "auto", api_name="/compare")] == ["dcnn"]
    with pytest.raises(JobError, match="HF_HUB_OFFLINE"):  # past the owner check: only the Hub is missing
        push_job(job_a, "someone/model", "hf_token", user_models, owner=owner_of(a))
    assert (done_a["title"], task) in task_choices(lab.visible_to(owner_of(a)))

    # a later session that passes A's key acts for A
    key = a.predict("", api_name="/owner")
    later = app()
    assert refused(later.predict, job_a, api_name="/train_status")
    assert later.predict(key, api_name="/owner") == key
    assert later.predict(job_a, api_name="/train_status")["task"] == task
    assert "16 to 200 characters" in refused(later.predict, "short", api_name="/owner")


def test_a_visitors_analysis_drawn_for_the_page_is_its_own(app, trained):
    """The Lab keeps an analysis as drawn (demo.lab_analysis.answer_keys: each model's owner in its key). A, her page
    loaded, draws her model's analysis twice, the second from the kept drawing; B, in a page of his own, asking for
    A's task with the same sentence and room, is told what he is told for a task nobody trained, never shown A's
    drawing; his own model is drawn for him."""
    a, b, _, done_a, done_b, _ = trained
    never = "user_never_trained_0a1b2c"
    with httpx.Client(timeout=120) as http:
        run = event_index(http.get(app.url + "config").json(), "run", "click")
        for client in (a, b):  # the page's load: the visitor's tasks in its menu
            page_load(app.url, client.session_hash, client.predict("", api_name="/owner"))

        def analysed(client: Client, task: str) -> str:
            data = ["a fun film", "dcnn", task, "auto", "occlusion", "none", 1, 900]
            try:
                return str(queue_call(http, app.url.rstrip("/"), run, data, client.session_hash))
            except QueueError as err:
                return f"refused: {err}"

        hers = analysed(a, done_a["task"])
        assert 'class="model-panel"' in hers and analysed(a, done_a["task"]) == hers
        told = analysed(b, done_a["task"])
        assert 'class="model-panel"' not in told
        assert told.replace(done_a["task"], "<task>") == analysed(b, never).replace(never, "<task>")
        assert 'class="model-panel"' in analysed(b, done_b["task"])


def tab_opened(config: dict, elem_ids: set[str]) -> int:
    """The fn_index of the tab's opening (its select) that fills the components `elem_ids`."""
    ids = {c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") in elem_ids}
    return next(
        d["id"]
        for d in config["dependencies"]
        if set(d["outputs"]) == ids and any(e == "select" for _, e in d["targets"])
    )


def test_the_train_and_models_tabs_open_on_their_visitors_own_work_only(app, user_models, trained):
    """The Train tab's job box and the Models tab's tables, filled as the tab opens (demo/tabs/train.py,
    demo/tabs/checkpoints.py): A's page lists her job and her model, B's page his own, neither the other's; 100
    fresh sessions (a visitor costs nothing to make) each open both tabs on nothing of theirs and write no owner
    row (an opening only reads)."""
    import sqlite3

    a, b, job_a, _, done_b, _ = trained
    job_b = done_b["id"]
    with httpx.Client(timeout=120) as http:
        config = http.get(app.url + "config").json()
        jobs, models = tab_opened(config, {"train-job"}), tab_opened(config, {"checkpoints", "load-errors"})

        def opened(session: str) -> str:
            return json.dumps(
                [queue_call(http, app.url.rstrip("/"), fn, [], session) for fn in (jobs, models)], ensure_ascii=False
            )

        hers, his = opened(a.session_hash), opened(b.session_hash)
        # a job names itself in the job box, and its model's row in the Models tab ("trained here: job <id>")
        assert hers.count(job_a) == 2 and job_b not in hers and his.count(job_b) == 2 and job_a not in his
        rows = lambda: (
            sqlite3.connect(user_models / "owners.sqlite").execute("SELECT COUNT(*) FROM bindings").fetchone()
        )
        before = rows()
        for n in range(100):
            fresh = opened(f"fresh-session-{n:03d}-xxxxxxxxxxxx")
            assert job_a not in fresh and job_b not in fresh and '"choices": []' in fresh
        assert rows() == before


def test_a_model_cannot_be_taken_over_even_by_a_task_name_that_collides(app, user_models, trained, tmp_path):
    """Task names carry 64 bits, so nobody grinds a file into another owner's task; should one collide anyway
    (here: forced, B's job named as A's finished task), the job claims (task, model) in the owner store first and
    installs nothing over the other owner's model."""
    import service.jobs
    from core.data.user import user_task_name
    from service.store import open_store

    a, b, _, done_a, _, path = trained
    task = done_a["task"]
    assert len(task.rsplit("_", 1)[1]) == 16  # 64 bits of digest
    before = a.predict("a fun film", "dcnn", task, "auto", api_name="/predict")["probs"]
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(service.jobs, "user_task_name", lambda *args, **kwargs: task)  # a perfect grind
        other = write_csv(tmp_path / "other.csv", reviews(40, seed=9))
        job_b = b.predict(handle_file(str(other)), "dcnn", "review", "stars", 1, api_name="/train")
    status = finished(b, job_b, user_models)
    assert status["status"] == "failed" and status["error"]["code"] == "model_taken", status
    assert a.predict("a fun film", "dcnn", task, "auto", api_name="/predict")["probs"] == before
    assert f"no model is loaded for task '{task}'" in refused(
        b.predict, "a fun film", "dcnn", task, "auto", api_name="/predict"
    )
    store = open_store(user_models)
    owner_file = user_models / "checkpoints" / task / "dcnn" / "owner.json"
    assert store.model_owner(task, "dcnn") == json.loads(owner_file.read_text())["owner"]
    store.close()
    assert user_task_name(path, "review", "stars", "a") != user_task_name(path, "review", "stars", "b")


def page_load(url: str, session: str, key: str) -> str:
    """What a browser does on opening the page: the load event with the key its localStorage holds (demo/ui.py's
    READ_KEY); returns the key the page gives back to keep."""
    with httpx.Client(timeout=60) as http:
        load, data = load_event(http.get(url + "config").json(), key)
        return queue_call(http, url.rstrip("/"), load, data, session)[0]


def test_a_browser_keeps_its_jobs_across_reloads_and_another_browser_sees_none(app, tmp_path):
    key = page_load(app.url, "page-one", "")  # a first visit: the page makes the key the browser keeps
    assert len(key) >= 16 and page_load(app.url, "page-two", key) == key  # a reload sends it back
    first, reloaded = app("page-one"), app("page-two")
    job = first.predict(
        handle_file(str(write_csv(tmp_path / "b.csv", reviews(40)))), "dcnn", "review", "stars", 1, api_name="/train"
    )
    assert reloaded.predict(job, api_name="/train_status")["title"].startswith("b.csv · ")
    assert page_load(app.url, "other-browser", "") != key
    assert "no training job" in refused(app("other-browser").predict, job, api_name="/train_cancel")
    assert reloaded.predict(job, api_name="/train_cancel")


def test_an_owner_has_at_most_its_quota_of_jobs_waiting_or_running(app, tmp_path):
    visitor, other = app(), app()
    path = str(write_csv(tmp_path / "quota.csv", reviews(40)))
    jobs = [visitor.predict(handle_file(path), "dcnn", "review", "stars", 20, 15, api_name="/train") for _ in range(2)]
    message = refused(visitor.predict, handle_file(path), "dcnn", "review", "stars", 1, api_name="/train")
    assert "you already have 2 training jobs waiting or running" in message
    other_job = other.predict(
        handle_file(path), "dcnn", "review", "stars", 1, api_name="/train"
    )  # another owner's quota
    for job in jobs:
        visitor.predict(job, api_name="/train_cancel")
    deadline = time.monotonic() + 30
    while {visitor.predict(j, api_name="/train_status")["status"] for j in jobs} != {"cancelled"}:
        assert time.monotonic() < deadline
        time.sleep(0.3)
    freed = visitor.predict(handle_file(path), "dcnn", "review", "stars", 1, api_name="/train")
    for client, job in ((visitor, freed), (other, other_job)):
        client.predict(job, api_name="/train_cancel")


def test_the_quota_counts_one_owners_active_jobs_and_is_worded_in_both_languages(tmp_path):
    path = write_csv(tmp_path / "r.csv", reviews(20))
    limits = TrainLimits(max_jobs_per_owner=2)
    first = [submit_job(TrainRequest(path, "dcnn"), root=tmp_path, limits=limits, owner="a") for _ in range(2)]
    with pytest.raises(JobError) as err:
        submit_job(TrainRequest(path, "dcnn"), root=tmp_path, limits=limits, owner="a")
    assert err.value.code == "too_many_jobs" and not (Path(tmp_path) / "jobs" / ".x").exists()
    assert "2 个训练作业" in notice_text(err.value, "zh")
    assert submit_job(TrainRequest(path, "dcnn"), root=tmp_path, limits=limits, owner="b")["owner"] == "b"
    update_job(tmp_path / "jobs" / first[0]["id"], status="failed")
    assert submit_job(TrainRequest(path, "dcnn"), root=tmp_path, limits=limits, owner="a")["task"] == first[0]["task"]
    assert TrainLimits.from_settings(Settings.load()).max_jobs_per_owner == 2


def test_a_page_load_binds_its_session_to_the_browser_key_or_the_signed_in_user(tmp_path):
    from dataclasses import replace
    from types import SimpleNamespace as Request

    from service.owners import HF_USER, NOBODY
    from service.store import Store
    from web.owners import Visitors

    settings = Settings(store_rows_per_client=100)
    visitors = Visitors(settings, Store(tmp_path / "owners.sqlite"), words=t)
    key = visitors.on_page("", Request(session_hash="first-visit-page"))  # a new browser: a new key for it to keep
    assert len(key) >= 16 and visitors.owner(Request(session_hash="first-visit-page")) == owner_id(KEY, key)
    assert visitors.on_page(key, Request(session_hash="reload")) == key  # a reload keeps the owner
    assert visitors.owner(Request(session_hash="reload")) == owner_id(KEY, key)
    # off a Space (no Hugging Face OAuth) a profile signs nobody in; with it, the page acts for the user
    visitors.on_page(key, Request(session_hash="signed-in"), Request(username="alice"))
    assert visitors.owner(Request(session_hash="signed-in")) == owner_id(KEY, key)
    visitors.policy = replace(visitors.policy, login=True)
    visitors.on_page(key, Request(session_hash="signed-in"), Request(username="alice"))
    assert visitors.owner(Request(session_hash="signed-in")) == owner_id(HF_USER, "alice") != owner_id(KEY, key)
    assert visitors.on_page("short", Request(session_hash="forged")) != "short"  # not a key: a new one
    assert visitors.store.bindings() == 0  # page loads write nothing
    visitors.on_page("", Request(session_hash="elsewhere", client=Request(host="10.0.0.9")))
    for i in range(300):  # one address's flood of page loads pushes out only its own
        visitors.on_page("", Request(session_hash=f"flood-{i}"))
    assert (
        visitors.owner(Request(session_hash="flood-199")) == NOBODY != visitors.owner(Request(session_hash="flood-299"))
    )
    assert visitors.owner(Request(session_hash="elsewhere")) != NOBODY
    visitors.pages.put("reload", owner_id(KEY, key), visitors.client(Request(session_hash="reload")))
    assert visitors.writer(Request(session_hash="reload")) == (owner_id(KEY, key), visitors.client(None))
    assert visitors.store.bindings() == 1  # owner-bound work kept the page's binding: it outlives a restart
    reloaded = Visitors(settings, Store(tmp_path / "owners.sqlite"), words=t)
    assert reloaded.owner(Request(session_hash="reload")) == owner_id(KEY, key)
    assert reloaded.owner(Request(session_hash="first-visit-page")) != owner_id(KEY, key)  # its reload binds again
    unbound = "api-client-0123456789"
    assert visitors.owner(Request(session_hash=unbound)) == owner_id(KEY, unbound)  # unbound: the session itself
    assert visitors.owner(Request(session_hash="x")) == NOBODY  # too short to be anybody's key


def test_the_page_everybody_is_sent_names_no_visitors_task(lab, user_models, trained):
    """An app started with visitors' models installed (`trained`'s, all jobs finished by now) serves them, but its
    page (the config every browser gets) names none of them."""
    from demo import build_demo
    from service.user_models import checkpoint_owner, installed_checkpoints

    private = [path for path in installed_checkpoints(user_models) if checkpoint_owner(path)[0]]
    assert private, "the first test installs two visitors' models"
    demo = build_demo(lab, "checkpoints", Settings.load())
    page = json.dumps(demo.get_config_file(), ensure_ascii=False, default=str)
    assert all(path.parent.name in lab.tasks() for path in private)  # served
    assert not any(trace in page for path in private for trace in (path.parent.name, "class_reviews"))


def test_signed_in_work_from_one_address_has_a_cap_of_its_own(tmp_path):
    from dataclasses import replace
    from types import SimpleNamespace as Request

    from service.budgets import signed_in_client
    from service.owners import HF_USER
    from service.store import Store
    from web.owners import Visitors

    visitors = Visitors(Settings(sign_in="required"), Store(tmp_path / "owners.sqlite"), words=t)
    visitors.policy = replace(visitors.policy, login=True)  # Hugging Face's own sign-in
    hall = Request(session_hash="page-of-alice", client=Request(host="10.0.0.1"))
    owner, client = visitors.writer(hall, Request(username="alice"))
    assert owner == owner_id(HF_USER, "alice") and client == signed_in_client(visitors.client(hall))
    path = write_csv(tmp_path / "r.csv", reviews(20))
    limits = TrainLimits(max_jobs_per_owner=5, max_jobs_per_client=1, max_signed_in_jobs_per_client=2)
    for user in ("alice", "bob"):
        submit_job(TrainRequest(path, "dcnn"), root=tmp_path, limits=limits, owner=user, client=client)
    with pytest.raises(JobError) as err:  # a third signed-in user behind the same address
        submit_job(TrainRequest(path, "dcnn"), root=tmp_path, limits=limits, owner="carol", client=client)
    assert err.value.code == "too_many_jobs_client" and err.value.params["max_jobs"] == 2
    anonymous = visitors.client(hall)  # the same address's anonymous work counts apart, against its own cap
    submit_job(TrainRequest(path, "dcnn"), root=tmp_path, limits=limits, owner="key-owner", client=anonymous)
    with pytest.raises(JobError):
        submit_job(TrainRequest(path, "dcnn"), root=tmp_path, limits=limits, owner="key-owner-2", client=anonymous)
