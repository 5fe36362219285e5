"""A public Space, tried as a hostile visitor would (issue: free identities, an owner table that forgets, an
unbounded upload cache, bad numbers; a model taken over: test_owners.py; MCP sharing one owner: test_mcp.py), each
against the real app with two or more clients. The app runs with the Space's defaults for budgets; sign-in is off
unless a test turns it on (off a Space that is the local default)."""

import json
import time
from pathlib import Path

import httpx
import pytest
from gradio_client import handle_file
from lab_fixture import Clients, start_app
from test_owners import page_load, refused
from test_user_training import reviews, wait_done, write_csv

from service.lab import ServedLab
from service.settings import Settings
from tools.bench.loadtest import app_client

SPACE_DEFAULTS = {"LAB_USER_MODELS_MAX_MB": 2048, "LAB_BINDS_PER_MINUTE": 30}


def launch(lab_root, tmp_path_factory, monkeypatch, **env):
    """A real app on the tiny checkpoints with its own user-models folder and upload cache; returns
    (url, user_models, close)."""
    from demo import t
    from web import app_kwargs

    root = tmp_path_factory.mktemp("user_models")
    monkeypatch.setenv("LAB_USER_MODELS", str(root))
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
    for name, value in {**SPACE_DEFAULTS, **env}.items():  # not what the module's `space` app was given
        monkeypatch.setenv(name, str(value))
    settings = Settings.load()
    demo, url = start_app(ServedLab.load(lab_root), settings, concurrency=4, app_kwargs=app_kwargs(settings, t))
    return url, root, demo.close


@pytest.fixture(scope="module")
def space(lab_root, tmp_path_factory, monkeypatch_module):
    """The app with a small disk quota (so that every submission meets a full disk once a model is in), and
    a factory of clients, each a visitor (with `session`: a REST client naming its own session id)."""
    url, root, close = launch(
        lab_root, tmp_path_factory, monkeypatch_module, LAB_USER_MODELS_MAX_MB=0.5, LAB_BINDS_PER_MINUTE=1000
    )
    visitors = Clients(url)
    visitors.root = root  # its user-models folder
    yield visitors
    visitors.close()
    close()


@pytest.fixture(scope="module")
def http():
    """One HTTP client for the module's calls: an httpx.post of its own loads the CA certificates (~40 ms of CPU
    each, a minute of CPU over the module's floods)."""
    with httpx.Client(timeout=60) as client:
        yield client


def rest_train(http: httpx.Client, url: str, session: str, path: str, epochs=1) -> dict:
    """One REST /train call naming its own session; the answer's last event as JSON."""
    body = {"data": [{"path": path, "meta": {"_type": "gradio.FileData"}}, "dcnn", "", "", epochs, 15, "none"]}
    posted = http.post(f"{url}gradio_api/call/train", json={**body, "session_hash": session}, timeout=30)
    answer = http.get(f"{url}gradio_api/call/train/{posted.json()['event_id']}").text
    return json.loads(answer.strip().splitlines()[-1].removeprefix("data: "))


def upload(http: httpx.Client, url: str, path: Path) -> httpx.Response:
    with open(path, "rb") as f:
        return http.post(f"{url}gradio_api/upload", files={"files": (path.name, f)}, timeout=60)


def megabyte_file(path: Path, seed: int = 3) -> Path:
    rows = reviews(80, seed)
    return write_csv(path, [(f"{text} {'x' * 12_000}", stars) for text, stars in rows])


def test_free_identities_get_at_most_the_space_s_queue_and_take_no_visitor_s_model(space, http, tmp_path):
    """16 fresh REST identities ask /train twice each with a 1 MB file: 32 calls, over three times the Space's cap
    of 10 jobs waiting or running (8 times a network's 4), so whichever budget refuses them (here the full disk
    first) more than 10 accepted would show; more identities meet the same refusals (the issue's attack sent 80)."""
    victim = space()
    small = write_csv(tmp_path / "victim.csv", reviews(40))
    job = victim.predict(handle_file(str(small)), "dcnn", "review", "stars", 1, api_name="/train")
    done = wait_done(victim, job, space.root)
    before = victim.predict("a fun film", "dcnn", done["task"], "auto", api_name="/predict")["probs"]

    big = megabyte_file(tmp_path / "flood.csv")
    assert 0.9e6 < big.stat().st_size < 1.2e6
    cached = upload(http, space.url, big).json()[0]  # one upload, named by every call
    answers = [rest_train(http, space.url, f"identity-{i:03d}-{'z' * 12}", cached) for i in range(16) for _ in range(2)]
    accepted = [a for a in answers if isinstance(a, list)]
    errors = {a["error"].split(" (")[0].split(";")[0] for a in answers if isinstance(a, dict)}
    assert len(accepted) <= 10, len(accepted)
    assert errors <= {
        "the space for trained models is full",
        "4 training jobs from your network are waiting or running already",
        "the training queue is full",
    }, errors
    # the victim's model is still there and answers as before
    assert victim.predict("a fun film", "dcnn", done["task"], "auto", api_name="/predict")["probs"] == before
    assert (space.root / "checkpoints" / done["task"] / "dcnn" / "model.safetensors").is_file()


def test_three_hundred_owner_calls_leave_every_binding_in_place(lab_root, http, tmp_path_factory, tmp_path):
    with pytest.MonkeyPatch.context() as monkeypatch:
        url, _, close = launch(lab_root, tmp_path_factory, monkeypatch, LAB_BINDS_PER_MINUTE=1000)
        bound, page, flooded = app_client(url), app_client(url), app_client(url)
        try:
            key = "a-bound-client-key-0123456789"
            assert bound.predict(key, api_name="/owner") == key
            path = handle_file(str(write_csv(tmp_path / "mine.csv", reviews(30))))
            job = bound.predict(path, "dcnn", "review", "stars", 20, api_name="/train")
            bound.predict(job, api_name="/train_cancel")  # no worker trains meanwhile: a cancelled job is its owner's
            assert page_load(url, "page-session-0001", key) == key  # a page whose browser keeps the same key
            page.session_hash = "page-session-0001"
            for i in range(300):  # anonymous /owner calls, each a new session binding a new key
                answer = http.post(f"{url}gradio_api/call/owner", json={"data": [f"flood-key-{i:04d}-xxxxxxxx"]})
                answer.raise_for_status()
            http.get(f"{url}gradio_api/call/owner/{answer.json()['event_id']}", timeout=30)
            assert bound.predict(job, api_name="/train_status")["id"] == job
            assert page.predict(job, api_name="/train_status")["id"] == job
            assert "no training job" in refused(flooded.predict, job, api_name="/train_status")
        finally:
            for client in (bound, page, flooded):
                client.close()
            close()


def test_a_short_session_id_owns_nothing_and_bad_numbers_get_one_line(space, http, tmp_path):
    cached = upload(http, space.url, write_csv(tmp_path / "short.csv", reviews(30))).json()[0]
    assert "too short to be an owner key" in rest_train(http, space.url, "x", cached)["error"]
    for epochs in (float("nan"), "3"):
        body = {"data": [{"path": cached, "meta": {"_type": "gradio.FileData"}}, "dcnn", "", "", epochs, 15, "none"]}
        posted = http.post(
            f"{space.url}gradio_api/call/train",
            content=json.dumps({**body, "session_hash": "long-enough-session-id-0001"}, allow_nan=True),
            headers={"content-type": "application/json"},
        )
        answer = http.get(f"{space.url}gradio_api/call/train/{posted.json()['event_id']}", timeout=30).text
        assert "epochs: a number is needed" in answer, answer
    short = http.post(f"{space.url}gradio_api/call/owner", json={"data": [""], "session_hash": "x"})
    answer = http.get(f"{space.url}gradio_api/call/owner/{short.json()['event_id']}", timeout=30).text
    assert "too short" in answer


def assert_reading_open(url: str) -> None:
    """Reading stays open to everybody, whoever may write."""
    client = app_client(url)
    try:
        assert client.predict("a fun film", "dcnn", "auto", "auto", api_name="/predict")["label"]
    finally:
        client.close()


def test_training_needs_a_sign_in_when_the_policy_says_so(lab_root, http, tmp_path_factory, tmp_path):
    with pytest.MonkeyPatch.context() as monkeypatch:
        url, root, close = launch(lab_root, tmp_path_factory, monkeypatch, LAB_SIGN_IN="required")
        try:
            cached = upload(http, url, write_csv(tmp_path / "any.csv", reviews(30))).json()[0]
            answers = [rest_train(http, url, f"identity-{i:03d}-{'z' * 12}", cached) for i in range(10)]
            assert all("need a Hugging Face sign-in" in a["error"] for a in answers), answers
            assert not (root / "jobs").exists() or not list((root / "jobs").iterdir())
            assert_reading_open(url)
        finally:
            close()


def test_the_upload_cache_is_bounded_per_client_and_in_all(lab_root, http, tmp_path_factory, tmp_path):
    with pytest.MonkeyPatch.context() as monkeypatch:
        url, _, close = launch(lab_root, tmp_path_factory, monkeypatch, LAB_UPLOAD_CACHE_MB=5, LAB_UPLOADS_PER_MINUTE=8)
        try:
            files = [megabyte_file(tmp_path / f"u{i}.csv", seed=i) for i in range(9)]
            answers = [upload(http, url, f) for f in files]
            codes = [a.status_code for a in answers]
            fitted = codes.index(507)  # as many ~1 MB files as fit in 5 MB, then the cache is full
            assert codes == [200] * fitted + [507] * (8 - fitted) + [429], codes  # and 8 a minute per client
            assert 4 <= fitted <= 5 and sum(f.stat().st_size for f in files[:fitted]) <= 5 * 2**20
            assert "full" in answers[fitted].text and "a minute" in answers[8].text
        finally:
            close()


def test_the_redteam_tool_s_quick_cases_hold_against_the_app(lab_root, tmp_path_factory, capsys):
    from tools.bench.redteam import cases, run

    chosen = cases(quick=True)
    assert set(chosen) >= {"short_session", "bad_numbers", "task_key_bits", "owner_flood", "one_session_four_calls"}
    with pytest.MonkeyPatch.context() as monkeypatch:
        url, _, close = launch(lab_root, tmp_path_factory, monkeypatch)
        try:
            rows = run(url, chosen)
        finally:
            close()
    printed = capsys.readouterr().out
    assert all(held for _, held, _, _ in rows), printed
    assert "bound client still sees its job" in printed and "task digest 64 bits, job id 64 bits" in printed


def login_buttons(config: dict) -> list:
    """The page's gr.LoginButtons: with one, Gradio adds its OAuth routes and session middleware."""
    return [c for c in config["components"] if c.get("props", {}).get("logout_value")]


def test_on_a_space_the_train_tab_asks_for_a_sign_in_first(lab_root, monkeypatch):
    import gradio.oauth

    from demo import build_demo

    monkeypatch.setenv("SPACE_ID", "someone/sentence-lab")
    monkeypatch.setenv("SYSTEM", "spaces")  # what a Space sets beside SPACE_ID: Gradio then uses the real OAuth
    for name in ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL"):
        monkeypatch.setenv(name, "set-by-the-space")  # what the app reads (Settings.real_oauth)
        monkeypatch.setattr(gradio.oauth, name, "set-by-the-space")  # what Gradio read at import
    monkeypatch.delenv("LAB_SIGN_IN", raising=False)
    settings = Settings.load()
    assert settings.real_oauth
    demo = build_demo(ServedLab.load(lab_root), str(lab_root), settings)
    config = json.dumps(demo.get_config_file(), default=str)
    assert "train_sign_in" in config and login_buttons(demo.get_config_file())  # the sign-in line and its button
    assert demo.expects_oauth
    for name in ("SYSTEM", "OAUTH_CLIENT_SECRET"):  # any one missing: no real OAuth
        with monkeypatch.context() as without:
            without.delenv(name)
            assert not Settings.load().real_oauth


def test_a_copy_of_the_space_without_hugging_face_s_oauth_signs_nobody_in(lab_root, http, tmp_path_factory, tmp_path):
    """SPACE_ID set, no OAuth (a Docker run of the Space): Gradio would mock the sign-in as HF_TOKEN's owner. The
    app starts without a sign-in button or login routes, and refuses writing work to everybody in one line."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("HF_TOKEN", "hf_dummy_token_of_the_operator")
        for name in ("SYSTEM", "LAB_SIGN_IN", "OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OPENID_PROVIDER_URL"):
            monkeypatch.delenv(name, raising=False)
        url, root, close = launch(lab_root, tmp_path_factory, monkeypatch, SPACE_ID="someone/sentence-lab")
        try:
            config = http.get(url + "config").json()
            assert not login_buttons(config) and "train_sign_in_off" in json.dumps(config)
            assert http.get(url + "login/huggingface", follow_redirects=False).status_code == 404
            cached = upload(http, url, write_csv(tmp_path / "any.csv", reviews(30))).json()[0]
            answer = rest_train(http, url, f"identity-{'z' * 16}", cached)
            assert "which this copy of the lab does not offer" in answer["error"], answer
            assert not (root / "jobs").exists() or not list((root / "jobs").iterdir())
            assert_reading_open(url)
        finally:
            close()


def test_a_locked_owner_store_refuses_owner_in_one_line_and_predictions_go_on(space, http):
    """Another process holds the store's lock: `/owner` answers the store's line at once (not a bare error after
    waiting), and a prediction does not wait for the store."""
    import sqlite3

    holder = sqlite3.connect(space.root / "owners.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        start = time.monotonic()
        posted = http.post(f"{space.url}gradio_api/call/owner", json={"data": ["k" * 24], "session_hash": "s" * 20})
        answer = http.get(f"{space.url}gradio_api/call/owner/{posted.json()['event_id']}", timeout=30).text
        assert "the owner store is busy or full; try again in a minute" in answer, answer
        assert time.monotonic() - start < 5
        client = space()
        start = time.monotonic()
        assert client.predict("a fun film", "dcnn", "auto", "auto", api_name="/predict")["label"]
        assert time.monotonic() - start < 5
    finally:
        holder.execute("ROLLBACK")
        holder.close()
