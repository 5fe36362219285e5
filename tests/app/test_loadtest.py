"""`make loadtest PROFILE=mixed` and `make soak` in small: app.py on the tiny checkpoints in its own process,
a handful of requests, a few RSS samples, the figures merged into one loadtest.json and rendered."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.checkpoints.manifest import write_manifest
from core.data import PROJECT_ROOT
from core.text import MAX_CHARS
from tools.bench.loadtest import (
    LONG_TEXTS,
    LoadTestError,
    cpu_seconds,
    main,
    process_tree,
    request_plan,
    rss_mb,
    started_app,
    wait_until_up,
    write_figures,
)
from tools.bench.markdown import loadtest_markdown


def one_model_per_language(lab_root: Path, root: Path) -> Path:
    """A checkpoints folder of the tiny dcnn of sst5 and of zh_sentiment, with its manifest: both languages' short
    and long texts, /predict and /compare, at a sixth of the models app.py loads and warms up on `lab_root`."""
    for task in ("sst5", "zh_sentiment"):
        shutil.copytree(lab_root / task / "dcnn", root / task / "dcnn")
    write_manifest(root)
    return root


SMALL = ["--clients", "2", "--warmup", "1", "--burst", "0", "--request-timeout", "60", "--max-seconds", "120"]


def test_long_texts_are_the_longest_the_caps_allow():
    assert set(LONG_TEXTS) == {"en", "zh"}
    assert all(len(text) == MAX_CHARS for text in LONG_TEXTS.values())
    plan = request_plan({"sst5": ("en", ["dcnn"]), "zh_sentiment": ("zh", ["dcnn"])}, 400, 0.2, seed=1, long_share=0.1)
    long = [args[0] for args, _, is_long in plan if is_long]
    assert 20 <= len(long) <= 60 and set(long) == set(LONG_TEXTS.values())  # ~10%, both languages
    assert not any(is_long for *_, is_long in request_plan({"sst5": ("en", ["dcnn"])}, 100, 0.2, seed=1))


def test_the_app_s_memory_and_cpu_include_its_children():
    """The app's model worker is a child process: its memory and CPU time are the app's too."""
    import os

    alone_mb, alone_cpu = rss_mb(os.getpid()), cpu_seconds(os.getpid())
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; x = bytearray(50_000_000); sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        for _ in range(100):
            if child.pid in process_tree(os.getpid()) and rss_mb(os.getpid()) > alone_mb + 40:
                break
            time.sleep(0.05)
        assert child.pid in process_tree(os.getpid()) and rss_mb(os.getpid()) > alone_mb + 40
        assert cpu_seconds(os.getpid()) >= alone_cpu
    finally:
        child.communicate(b"")
    assert child.pid not in process_tree(os.getpid())


def test_each_run_replaces_only_its_part_of_the_file(tmp_path):
    out = tmp_path / "loadtest.json"
    write_figures(out, "soak", {"requests": 1})
    write_figures(out, None, {"requests": 2, "config": {}})
    write_figures(out, "mixed", {"requests": 3})
    write_figures(out, None, {"requests": 4, "config": {}})
    assert json.loads(out.read_text()) == {
        "requests": 4,
        "config": {},
        "mixed": {"requests": 3},
        "soak": {"requests": 1},
    }


def test_waiting_for_the_app_builds_one_ssl_context(tmp_path, monkeypatch):
    """Polls an address nothing listens on until the process (which never serves) ends: every poll goes through one
    httpx client, where a client per poll built an SSL context each time (~70 ms of CPU, thousands in a slow start)."""
    import ssl

    contexts, create = [], ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: contexts.append(1) or create(*a, **k))
    (log := tmp_path / "app.log").write_text("")
    never_serves = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"])
    with pytest.raises(LoadTestError, match="exited with status 0"):
        wait_until_up("http://127.0.0.1:9/", never_serves, 30, log)
    assert len(contexts) == 1


def test_malloc_bounds_are_taken():
    """In a process of its own: the bounds hold for the rest of a process. The test machines run glibc, where
    False would mean that app.py's bound silently does nothing. web/memory.py is loaded by its path: importing
    the package `web` would load Gradio and torch first (~10 CPU-s) for a module that needs only ctypes."""
    check = (
        "import importlib.util as u; s = u.spec_from_file_location('memory', 'web/memory.py'); m = "
        "u.module_from_spec(s); s.loader.exec_module(m); raise SystemExit(0 if m.bound_malloc() else 1)"
    )
    assert subprocess.run([sys.executable, "-c", check], cwd=PROJECT_ROOT, timeout=120).returncode == 0


def test_mixed_profile_and_soak_against_the_app(lab_root, tmp_path):
    """Both runs on one app.py, as main lets a caller share one (a start and its warm-up cost ~20 CPU-s)."""
    out, root = tmp_path / "loadtest.json", one_model_per_language(lab_root, tmp_path / "checkpoints")
    common = SMALL + ["--checkpoints", str(root), "--out", str(out), "--long-share", "0.5"]
    with started_app(root, start_timeout=180) as app:
        mixed_code = main(common + ["--profile", "mixed", "--requests", "4"], app)
        soak_code = main(common + ["--soak", "8", "--rss-every", "0.2"], app)
        assert app.process.poll() is None  # the runs leave the caller's app serving
    assert mixed_code in (0, 1) and soak_code in (0, 1)  # 1: a target missed on a busy machine
    figures = json.loads(out.read_text())
    mixed, soak = figures["mixed"], figures["soak"]
    assert "config" not in figures  # no plain run yet: its part stays empty

    assert mixed["requests"] == 8 and mixed["failed"] == 0, mixed["failures"]
    by_length = mixed["latency_by_length_s"]
    assert by_length["short"]["n"] + by_length["long"]["n"] == 8 and by_length["long"]["n"] > 0
    assert "short_p95_le_1s" in mixed["targets"] and "p95_le_1s" not in mixed["targets"]

    assert soak["requests"] == 8 and soak["failed"] == 0, soak["failures"]
    samples = soak["rss_samples"]
    assert samples[0]["at"] == "after warm-up" and samples[-1]["at"] == "end" and len(samples) >= 2
    assert all(x["rss_mb"] > 0 for x in samples) and samples[-1]["requests_started"] == 8
    assert soak["rss_end_over_warmup"] == pytest.approx(samples[-1]["rss_mb"] / samples[0]["rss_mb"], abs=1e-3)
    assert set(soak["targets"]) == {"no_failed_requests", "rss_end_le_1.1x_warmup"}

    text = "\n".join(loadtest_markdown(figures))
    assert (
        "### Mixed profile" in text and "long requests p50" in text and "### Soak" in text and "RSS over time" in text
    )
