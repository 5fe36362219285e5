"""The test run's settings and collection. Everything runs offline: no Hub, no analytics, tiny synthetic data.
The shared fixtures are in tests/shared_fixtures.py, loaded only where tests run."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ.setdefault("OMP_NUM_THREADS", "1")
if "LAB_CACHE_DIR" not in os.environ:  # tests never write into the project's .cache
    import tempfile

    os.environ["LAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="lab-cache-")
if "LAB_USER_MODELS" not in os.environ:  # nor into user_models/ (the Train tab's jobs and models)
    import tempfile

    os.environ["LAB_USER_MODELS"] = tempfile.mkdtemp(prefix="lab-user-models-")

import pytest


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items):
    """`make test` (--dist loadgroup): a test file stays on one worker (its module's app is started once), and the
    files that start a Ray in the worker's process share one (RAY_GROUP). pytest-xdist hands out the groups with
    the most tests first. The tests that start a Ray head (marker `ray`) are exactly tests/ray/'s."""
    for item in items:
        if not any(item.iter_markers("xdist_group")):
            item.add_marker(pytest.mark.xdist_group(item.path.name))
        # `make test`'s second phase runs tests/ray alone: a Ray head's test elsewhere would run in neither phase
        if (item.get_closest_marker("ray") is not None) != (item.path.parent.name == "ray"):
            raise pytest.UsageError(f"{item.nodeid}: the tests marked `ray` (a Ray head) are those in tests/ray/")


def pytest_collection_finish(session):
    """Stop at once where pytest-xdist no longer sees the groups (with pytest 9.2 it named none: every test file
    spread over both workers, its module's app started on each, the Ray files apart; constraints.txt)."""
    config = session.config
    if hasattr(config, "workerinput") and config.getvalue("loadgroup"):
        ungrouped = [item.nodeid for item in session.items if "@" not in item.nodeid]
        if ungrouped:
            raise pytest.UsageError(f"--dist loadgroup left {len(ungrouped)} tests ungrouped, {ungrouped[0]} first")


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own, which registers "dsession" in the controller
def pytest_configure(config):
    """The fixtures (with torch, gradio and the trainer: ~8 CPU-s of imports) load where tests run, not in the
    pytest-xdist controller, which collects nothing and would make both workers wait for that import."""
    if not config.pluginmanager.has_plugin("dsession"):
        config.pluginmanager.import_plugin("shared_fixtures")
