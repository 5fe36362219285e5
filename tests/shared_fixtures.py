"""The fixtures every test folder shares: tiny data and checkpoints, a served lab, a Ray (tests/conftest.py loads
this plugin in the processes that run tests)."""

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import torch
from lab_fixture import NEGATIVE, NEUTRAL, POSITIVE, RAY_TOKEN, Head, build_checkpoints, start_app

import web.gradio_import  # noqa: F401  (before a test module imports gradio: its import without the stub writer)

torch.set_num_threads(1)
T = TypeVar("T")


def _score(words: list[str]) -> int:
    """A compositional toy sentiment: polar words add, 'not' flips what follows."""
    score, sign = 0, 1
    for w in words:
        if w == "not":
            sign = -sign
        score += sign * ((w in POSITIVE) - (w in NEGATIVE))
    return max(-2, min(2, score)) + 2


def _tree(words: list[str]) -> str:
    """A right-branching PTB tree with a label on every node."""
    if len(words) == 1:
        return f"({_score(words)} {words[0]})"
    return f"({_score(words)} ({_score(words[:1])} {words[0]}) {_tree(words[1:])})"


def _sentence(rng: random.Random) -> list[str]:
    words = [rng.choice(NEUTRAL) for _ in range(rng.randint(1, 4))]
    for _ in range(rng.randint(1, 2)):
        if rng.random() < 0.3:
            words.insert(rng.randint(0, len(words)), "not")
        words.insert(rng.randint(0, len(words)), rng.choice(POSITIVE + NEGATIVE))
    return words


@pytest.fixture(autouse=True)
def _seed():
    random.seed(0)
    torch.manual_seed(0)


@pytest.fixture(autouse=True)
def _figures_room():
    """Figures drawn with no room unless the test gives one: a handler called in this thread (drawn_for) would
    leave its room to whichever test the worker runs next."""
    from demo.svg import ROOM

    token = ROOM.set(None)
    yield
    ROOM.reset(token)


@pytest.fixture(scope="session")
def tiny_data(tmp_path_factory):
    """A data directory with synthetic SST-format trees (and a TREC-format file)."""
    root = tmp_path_factory.mktemp("data")
    rng = random.Random(7)
    (root / "sst" / "trees").mkdir(parents=True)
    for split, n in (("train", 160), ("dev", 40), ("test", 40)):
        lines = [_tree(_sentence(rng)) for _ in range(n)]
        (root / "sst" / "trees" / f"{split}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def lab_root(tiny_data, tmp_path_factory):
    """Tiny checkpoints of every paper model (sst5, sst2, zh_sentiment), trained once per session."""
    return build_checkpoints(tmp_path_factory.getbasetemp() / "lab" / "checkpoints", tiny_data)


@pytest.fixture(scope="module")
def lab(lab_root):
    from service.lab import ServedLab

    return ServedLab.load(lab_root)


@pytest.fixture
def measured(lab):
    """`measured(task, model, entry)` stores a deletion test in that checkpoint of `lab` as `make attribution` does
    (write_faithfulness), for this test only: the files are removed after it."""
    from core.analysis.attribution import write_faithfulness

    written = []

    def write(task: str, model: str, entry: dict) -> Path:
        written.append(write_faithfulness(lab.checkpoints[(task, model)], entry))
        return written[-1]

    yield write
    for path in written:
        path.unlink(missing_ok=True)


_GROUP_SHARED: dict[str, tuple[Any, Callable[[Any], None]]] = {}


def group_shared(name: str, start: Callable[[], T], stop: Callable[[T], None]) -> T:
    """`start()`'s value, shared by the tests of one xdist group on this worker (they run one after another), and
    `stop`ped when the worker's next test is another group's: kept to the session's end, a Ray's processes took CPU
    from every later test."""
    if name not in _GROUP_SHARED:
        _GROUP_SHARED[name] = (start(), stop)
    return _GROUP_SHARED[name][0]


def _group(item: pytest.Item) -> str:
    marker = item.get_closest_marker("xdist_group")  # every test's (tests/conftest.py)
    return marker.args[0] if marker else item.nodeid


def pytest_runtest_teardown(item, nextitem):
    if nextitem is None or _group(nextitem) != _group(item):
        while _GROUP_SHARED:
            value, stop = _GROUP_SHARED.popitem()[1]
            stop(value)


def _start_local_ray() -> None:
    import ray

    os.environ.pop("RAY_ADDRESS", None)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)


@pytest.fixture
def local_ray():
    """A Ray of this machine's two CPUs in this process for the test files marked RAY_GROUP: the library code under
    test (a sweep, parallel training) joins it, as a second ray.init in one process is refused."""
    import ray

    group_shared("local_ray", _start_local_ray, lambda _: ray.shutdown())


@pytest.fixture
def token_head() -> Head:
    """A Ray head with token authentication (RAY_TOKEN), for the tests of an app that lacks the token."""
    return group_shared("token_head", lambda: Head(token=RAY_TOKEN), Head.stop)


@pytest.fixture
def refused_fast(monkeypatch):
    """A driver that a head refuses gives up after 3 tries of ~1 s, not Ray's 20: the same refusal, sooner."""
    monkeypatch.setenv("RAY_NUM_REDIS_GET_RETRIES", "3")


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def client(lab, tmp_path_factory, monkeypatch_module):
    """A gradio_client Client of the app built on the tiny checkpoints, served on 127.0.0.1 (one SSL context for all
    its calls: app_client)."""
    from tools.bench.loadtest import app_client

    monkeypatch_module.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
    demo, url = start_app(lab)
    client = app_client(url)
    yield client
    client.close()
    demo.close()
