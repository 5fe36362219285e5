"""`make loadtest PROFILE=class` in small: app.py on a tiny checkpoint per language, three visitors (one training a file
of its own) for twenty seconds, each visit a new session; the figures merged into loadtest.json."""

import contextlib
import json
import os
import random
from unittest import mock

import pytest
from test_loadtest import one_model_per_language

from tools.bench.loadtest import (
    CLASS_MIX,
    HALL_MIX,
    PROFILES,
    SENTENCES,
    class_environment,
    class_key,
    main,
    own_text,
    queue_waiting,
    saturation_point,
    started_app,
    training_file,
)


@pytest.fixture(scope="module")
def class_app(lab_root, tmp_path_factory):
    """(checkpoints, App): app.py on one tiny model per language, served as a class of one trainer is
    (class_environment), shared by the class and the hall: a start and its warm-up cost ~20 CPU-s."""
    root = one_model_per_language(lab_root, tmp_path_factory.mktemp("class") / "checkpoints")
    with contextlib.ExitStack() as stack:
        with mock.patch.dict(os.environ, class_environment(tmp_path_factory.mktemp("class-folders"), trainers=1)):
            app = stack.enter_context(started_app(root, start_timeout=180))
        yield root, app


def test_training_files_are_small_labelled_and_each_its_own(tmp_path):
    first, second = training_file(tmp_path, 0), training_file(tmp_path, 1)
    rows = first.read_text().splitlines()
    assert rows[0] == "text,label" and len(rows) == 201 and {r.rsplit(",", 1)[1] for r in rows[1:]} == {"pos", "neg"}
    assert first.read_text() != second.read_text()


def test_a_halls_own_sentences_are_in_its_languages_and_hardly_ever_alike():
    rng = random.Random(0)
    for lang in ("en", "zh"):
        texts = [own_text(rng, lang) for _ in range(500)]
        assert len(set(texts)) == 500 and all(any(t.startswith(s) for s in SENTENCES[lang]) for t in texts)
    assert PROFILES["hall"]["visitors"] == 300 and PROFILES["hall"]["mix"] is HALL_MIX
    assert abs(sum(HALL_MIX.values()) - 1) < 1e-9 and abs(sum(CLASS_MIX.values()) - 1) < 1e-9


def test_the_saturation_point_is_where_short_p95_crosses_the_limit():
    points = [{"visitors": v, "short_p95_s": p} for v, p in ((100, 0.3), (200, 0.6), (300, 1.4), (400, 3.0))]
    assert saturation_point(points, 1.0) == 250
    assert saturation_point(points[:2], 1.0) is None and saturation_point(points[2:], 1.0) is None


@pytest.mark.slow
def test_class_profile_against_the_app(class_app, tmp_path):
    out, (root, app) = tmp_path / "loadtest.json", class_app
    out.write_text(json.dumps({"soak": {"requests": 1}}))
    code = main(
        [
            "--profile",
            "class",
            "--class-minutes",
            "0.35",
            "--class-visitors",
            "3",
            "--trainers",
            "1",
            "--visit-requests",
            "4",
            "--think",
            "0.2",
            "--warmup",
            "1",
            "--checkpoints",
            str(root),
            "--request-timeout",
            "60",
            "--out",
            str(out),
        ],
        app,
    )
    assert code in (0, 1)  # 1: a target missed on a busy machine
    figures = json.loads(out.read_text())
    run = figures["class"]
    assert figures["soak"] == {"requests": 1}  # the file's other parts stay
    assert run["failed"] == 0, run["failures"]
    assert run["visits"] > 3  # the visitors came back, each time in a new session
    assert "/train" in run["latency_by_endpoint_s"] and "/train_status" in run["latency_by_endpoint_s"]
    assert set(run["latency_by_endpoint_s"]) <= set(CLASS_MIX) | {"/train", "/train_status"}
    assert run["latency_by_length_s"]["short"]["n"] > 0 and run["latency_by_length_s"]["long"]["n"] > 0
    assert run["rss_samples"][0]["at"] == "after warm-up" and run["rss_samples"][-1]["at"] == "end"
    assert set(run["disk_mb"]) == {"user_models", "gradio_cache"} and run["disk_mb"]["user_models"] > 0
    assert set(run["targets"]) == {"no_failed_requests", "short_p95_le_1s", "rss_end_le_1.15x_warmup", "disk_le_1024mb"}


@pytest.mark.slow
def test_hall_profile_visitors_are_browsers(class_app, tmp_path):
    """The hall's visitors open the page, keep its heartbeat and send their requests through Gradio's queue as a
    browser does (tools.bench.hall): every kind of request answered, each visit a new session, nothing failed. No
    visitor trains: the class's test does (the same training visit; a job worker costs ~6-8 CPU-s to start)."""
    out, (root, app) = tmp_path / "loadtest.json", class_app
    args = ["--profile", "hall", "--class-minutes", "0.3", "--class-visitors", "8", "--trainers", "0"]
    code = main([*args, "--checkpoints", str(root), "--request-timeout", "60", "--out", str(out)], app)
    assert code in (0, 1)  # 1: a target missed on a busy machine
    run = json.loads(out.read_text())["hall"]
    assert run["failed"] == 0, run["failures"]
    assert {"page", "/predict"} <= set(run["latency_by_endpoint_s"]) <= set(HALL_MIX) | {"/train", "/train_status"}
    assert run["visits"] >= 8 and run["latency_by_endpoint_s"]["page"]["n"] >= 8  # a page per browser's visit
    assert run["load_generator_cpu_s"] >= 0 and run["server_cpu_ms_per_request"] >= run["app_cpu_ms_per_request"]
    waiting = run["queue_waiting"]  # read from Gradio's /queue/status through the run
    assert waiting["samples"] >= 20 and 0 <= waiting["p50"] <= waiting["max"] <= waiting["queue_size"]


def test_queue_waiting_reads_its_samples_against_the_bound():
    figures = queue_waiting([3, 0, 1, 0, 70] + [0] * 195, 256)
    assert figures == {"samples": 200, "p50": 0, "p99": 1, "max": 70, "queue_size": 256}
    assert queue_waiting([], 64) == {"samples": 0, "p50": None, "p99": None, "max": None, "queue_size": 64}


def test_a_run_on_ray_serve_is_kept_apart_from_the_local_workers():
    assert class_key({"profile": "hall", "model_worker": "local"}) == "hall"
    assert class_key({"profile": "hall", "model_worker": "ray"}) == "hall_ray_serve"
