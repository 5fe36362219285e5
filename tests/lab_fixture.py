"""Tiny trained checkpoints for the front-end tests (test_app, test_e2e): every paper model, trained for
one epoch on synthetic data, laid out as <root>/<task>/<model>/ with a manifest.json, the way `make train`
writes checkpoints/, so that Lab.load(root) makes the app's checks (sha256, task/model location).

Tasks: sst5 (all models), sst2 (two models, so the task choice and per-task model lists are exercised)
and zh_sentiment (all models) on a synthetic online_shopping_10_cats archive written here.
"""

import csv
import io
import os
import random
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from core.checkpoints.manifest import write_manifest
from core.models import PAPER_MODELS
from core.training.train import TrainConfig, Trainer
from tools.processes import free_port

# tiny, pairwise-different sizes; widths/maps keep the task presets (--set cannot parse lists yet)
# the test files that start a Ray of this process (a sweep, parallel training) share one pytest-xdist worker, one
# after another (conftest.py); those that start a Ray head (their drivers are processes of their own) are marked
# `ray`: `make test` hands them out first, in two groups, one per worker: the jobs on a live cluster (~160 s),
# Ray Serve's and the refused jobs' (~130 s)
RAY_GROUP = pytest.mark.xdist_group("ray")
RAY_HEAD = [pytest.mark.slow, pytest.mark.ray]
RAY_BESIDE_JOBS = pytest.mark.xdist_group("ray-serve-and-refused")
RAY_TOKEN = "lab-test-token-" + "0123456789abcdef" * 2  # the token of shared_fixtures' `token_head`
SMALL = {
    "tensor_cnn": ["embed_dim=8", "hidden=6", "ngram_order=2"],
    "mrnn": ["embed_dim=8", "hidden=6"],
    "dcnn": ["embed_dim=8", "k_top=3"],
    "adasent": ["embed_dim=8", "hidden_dim=7", "classifier_hidden=5"],
    "agt": ["embed_dim=8", "hidden=6", "num_layers=3", "attention_dim=5", "fc_hidden=7"],
}
POSITIVE = ["good", "great", "fun", "moving"]
NEGATIVE = ["bad", "dull", "awful", "flat"]
NEUTRAL = ["the", "movie", "film", "plot", "is", "a"]
POSITIVE_ZH = ["很好", "喜欢", "满意", "漂亮", "好用", "很棒"]
NEGATIVE_ZH = ["很差", "失望", "难看", "糟糕", "不好用", "退货"]
NEUTRAL_ZH = ["这个", "手机", "衣服", "质量", "物流", "东西", "电影", "演员"]


def write_zh_data(root: Path, n: int = 240) -> Path:
    """A synthetic chinese_sentiment folder: the shopping archive plus a ChnSentiCorp dev file."""
    rng = random.Random(11)
    rows = []
    while len(rows) < n:
        words = rng.sample(NEUTRAL_ZH, 2)
        polar = rng.choice(POSITIVE_ZH + NEGATIVE_ZH)
        words.insert(rng.randint(0, 2), polar)
        rows.append((int(polar in POSITIVE_ZH), "，".join(["".join(words[:2]), words[2]])))
    folder = root / "chinese_sentiment"
    (folder / "ChnSentiCorp").mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["cat", "label", "review"])
    writer.writerows([["书籍", label, review] for label, review in rows])
    with zipfile.ZipFile(folder / "online_shopping_10_cats.zip", "w") as archive:
        archive.writestr("online_shopping_10_cats.csv", buffer.getvalue())
    dev = [f"{review}\t{['negative', 'positive'][label]}" for label, review in rows[:30]]
    (folder / "ChnSentiCorp" / "dev.tsv").write_text("\n".join(dev) + "\n", encoding="utf-8")
    return root


def build_checkpoints(root: Path, sst_data: Path) -> Path:
    """Train once per test session (reused when `root` is already complete)."""
    if (root / ".complete").is_file():
        return root
    zh_data = write_zh_data(root.parent / "zh_data")
    plan = [
        ("sst5", sst_data, PAPER_MODELS),
        ("sst2", sst_data, ["tensor_cnn", "dcnn"]),
        ("zh_sentiment", zh_data, PAPER_MODELS),
    ]
    for task, data, keys in plan:
        for key in keys:
            run = root.parent / "runs" / task / key
            cfg = TrainConfig(
                model=key,
                task=task,
                data_dir=str(data),
                epochs=1,
                vectors="none",
                set=SMALL.get(key, []),
                out=str(run),
                progress=False,
                seed=1,
            )
            Trainer.from_config(cfg).fit()
            shutil.copytree(run / "best", root / task / key, dirs_exist_ok=True)
    write_manifest(root)
    (root / ".complete").write_text("ok")
    return root


class Head:
    """A one-node Ray cluster with two CPUs, its files in a short temporary folder (Ray's socket paths), in a process
    group of its own, ended by signalling that group: `ray stop --force` would end every Ray process of this user on
    the machine, other people's included."""

    def __init__(self, token: str = ""):
        self.folder = tempfile.mkdtemp(prefix="ray", dir="/tmp")
        # no token: a test cluster on this machine (Ray 2.60 turns token auth on when ~/.ray/auth_token exists),
        # unless `token`; no PYTHONPATH either: the project reaches the cluster through the job's runtime_env
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update(RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token" if token else "disabled")
        if token:
            env["RAY_AUTH_TOKEN"] = token
        self.process = subprocess.Popen(
            [
                os.path.join(os.path.dirname(sys.executable), "ray"),
                "start",
                "--head",
                "--port=0",
                "--num-cpus=2",
                f"--temp-dir={self.folder}",
                "--include-dashboard=false",
                "--block",
            ],
            cwd=tempfile.gettempdir(),  # not the project: its code must come through runtime_env
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        lines = []
        for line in self.process.stdout:
            lines.append(line)
            if found := re.search(r"--address='([^']+)'", line):
                self.address = found.group(1)
                return
        raise AssertionError("ray start ended without an address:\n" + "".join(lines))

    def stop(self) -> None:
        """The whole cluster at once, as a machine that goes away."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def serve_app(log_path: Path, env: dict[str, str], timeout: float = 90.0):
    """`python app.py` as a user starts it, offline, with `env` over this process's environment (and no
    LAB_CHECKPOINTS unless `env` names one: the bundled checkpoints); yields its address once it answers,
    and prints how long that took."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k != "LAB_CHECKPOINTS"},
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "HF_HUB_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        **env,
    }
    address = f"http://127.0.0.1:{port}/"
    with open(log_path, "w") as log:
        start = time.perf_counter()
        server = subprocess.Popen(
            [sys.executable, "app.py"],
            cwd=Path(__file__).resolve().parents[1],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            while True:
                assert server.poll() is None, f"app.py exited with {server.returncode}; see {log_path}"
                assert time.perf_counter() - start < timeout, f"app.py did not answer within {timeout:.0f} s"
                try:
                    urllib.request.urlopen(address, timeout=1)
                    break
                except OSError:
                    time.sleep(0.2)
            print(f"\napp.py ready in {time.perf_counter() - start:.1f} s")
            yield address
        finally:
            server.terminate()
            server.wait(timeout=10)


def launched(demo, tries: int = 3, **launch) -> str:
    """demo.launch on a free port of 127.0.0.1; its URL. On a loaded machine Gradio's start-up checks can give up on a
    server that is merely slow: it gives a server 5 s to start and then calls the port taken ("Cannot find empty
    port"), and it asks for the page once with 3 s to answer, then calls localhost unreachable (a ValueError). Either
    way the app is closed and launched again on another free port."""
    for attempt in range(tries):
        try:
            return demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), **launch)[1]
        except (OSError, ValueError):
            demo.close()
            if attempt == tries - 1:
                raise
    raise AssertionError("unreachable")


def start_app(
    lab, settings=None, root: str = "checkpoints", concurrency: int = 2, max_size: int | None = None, **launch
):
    """The app on `lab` by `settings` (None: the environment's, read now), `concurrency` model events at a time and at
    most `max_size` waiting, launched in this process on a free port of 127.0.0.1 with its theme, CSS and
    translations; (demo, url), for the caller to close. `launch` adds launch() settings (app_kwargs, mcp_server)."""
    from demo import CSS, I18N, THEME, build_demo
    from service.settings import Settings

    demo = build_demo(lab, root, settings or Settings.load())
    demo.queue(default_concurrency_limit=concurrency, max_size=max_size)
    return demo, launched(demo, quiet=True, theme=THEME, css=CSS, i18n=I18N, **launch)


class Clients:
    """gradio_client Clients of one running app, each a visitor: `clients()` a new one, `clients(session)` a REST
    client naming its own session id (the API side of a page session); close() closes every one. One SSL context
    serves them all (building one costs ~70 ms of CPU, and gradio_client builds one per call otherwise)."""

    def __init__(self, url: str):
        self.url, self.made = url, []
        self.ssl_context = ssl.create_default_context()

    def __call__(self, session: str | None = None):
        from tools.bench.loadtest import app_client

        self.made.append(app_client(self.url, self.ssl_context))
        if session:
            self.made[-1].session_hash = session
        return self.made[-1]

    def close(self) -> None:
        for client in self.made:
            client.close()


def launch_demo(lab_root: Path, temp_dir: Path, **launch):
    """The app built as app.py builds it (start_app with its app_kwargs; Gradio's uploads in `temp_dir`); yields
    (demo, url) and closes it after. `launch` adds launch() settings."""
    from demo import t
    from service.lab import ServedLab
    from service.settings import Settings
    from web import app_kwargs, handler_threads
    from web.runner import queue_options

    saved = os.environ.get("GRADIO_TEMP_DIR")
    os.environ["GRADIO_TEMP_DIR"] = str(temp_dir)
    try:
        settings = Settings.load()
        queue = queue_options(settings)  # every admitted model event in its handler, as app.py
        launch = {
            "concurrency": queue["default_concurrency_limit"],
            "max_size": queue["max_size"],
            "max_threads": handler_threads(settings),
            **launch,
        }
        demo, url = start_app(
            ServedLab.load(lab_root), settings, str(lab_root), app_kwargs=app_kwargs(settings, t), **launch
        )
        yield demo, url
        demo.close()
    finally:
        if saved is None:
            os.environ.pop("GRADIO_TEMP_DIR", None)
        else:
            os.environ["GRADIO_TEMP_DIR"] = saved
