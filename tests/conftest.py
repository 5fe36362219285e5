"""The test run's settings and collection. Everything runs offline: no Hub, no analytics, tiny synthetic data.
The shared fixtures are in tests/shared_fixtures.py, loaded only where tests run."""

import functools
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
from xdist.scheduler import LoadGroupScheduling


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items):
    """`make test` (--dist loadgroup): a test file stays on one worker (its module's app is started once), and the
    files that start a Ray in the worker's process share one (RAY_GROUP). pytest-xdist hands out the groups with
    the most tests first, those of tests/ray/ before them (RayHeadsFirst), which are exactly the tests that start a
    Ray head (marker `ray`)."""
    for item in items:
        if not any(item.iter_markers("xdist_group")):
            item.add_marker(pytest.mark.xdist_group(item.path.name))
        # the scheduler knows a Ray head's tests by their folder
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


class RayHeadsFirst(LoadGroupScheduling):
    """--dist loadgroup with the groups of tests/ray handed out first. They are the longest (a Ray head's start, jobs
    on its cluster: ~150 s each); begun first, one per worker, they leave the short groups to even out both workers'
    ends, where run last one worker ran a Ray group alone (docs/performance.md, "The test loop")."""

    @functools.cached_property
    def _heads(self) -> set[str]:
        assert self.collection is not None  # set before the first unit is handed out
        return {self._split_scope(nodeid) for nodeid in self.collection if nodeid.startswith("tests/ray/")}

    def _assign_work_unit(self, node) -> None:
        for scope in [scope for scope in reversed(self.workqueue) if scope in self._heads]:
            self.workqueue.move_to_end(scope, last=False)
        super()._assign_work_unit(node)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: unknown where it is not loaded
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") == "loadgroup":
        return RayHeadsFirst(config, log)
    return None
