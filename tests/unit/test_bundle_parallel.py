"""`make train` as parallel Ray tasks (tools.release.parallel) on a Ray of this machine with two CPUs: the
runs come back into runs/ equal, weight for weight, to the same runs trained one after another with one
torch thread (what each task uses), and a re-run with --resume continues them."""

import json

from lab_fixture import RAY_GROUP
from test_bundle import ENTRIES, TINY_ARGS, write_config

from core.checkpoints.files import sha256
from tools.release.bundle import bundle
from tools.release.config import read_bundle_config

pytestmark = RAY_GROUP  # local_ray


def weights(runs) -> dict[str, str]:
    return {str(p.relative_to(runs)): sha256(p) for p in sorted(runs.glob("*/*/best/model.safetensors"))}


def test_parallel_runs_equal_sequential_ones_and_resume(local_ray, tiny_data, tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    one_thread = read_bundle_config(write_config(tmp_path / "bundled.toml"))
    for entry in one_thread.entries:
        entry.args = TINY_ARGS + ["--threads", "1"]
    bundle(one_thread, tmp_path / "seq", data_dir=str(tiny_data), runs=tmp_path / "seq_runs", examples_cache=[])
    results = bundle(
        one_thread, tmp_path / "par", data_dir=str(tiny_data), runs=tmp_path / "par_runs", examples_cache=[], parallel=2
    )
    assert set(results) == {f"{task}/{model}" for model, task, _ in ENTRIES}
    assert len(weights(tmp_path / "par_runs")) == 2 and weights(tmp_path / "par_runs") == weights(tmp_path / "seq_runs")

    # a re-run with --resume continues each run after its saved epoch: epoch 1 is the first run's, as it was logged
    logs = sorted((tmp_path / "par_runs").glob("*/*/log.jsonl"))
    first = [log.read_text() for log in logs]
    for entry in one_thread.entries:
        entry.args = entry.args + ["--epochs", "2"]
    bundle(
        one_thread,
        tmp_path / "par",
        data_dir=str(tiny_data),
        runs=tmp_path / "par_runs",
        examples_cache=[],
        resume=True,
        parallel=2,
    )
    for log, before in zip(logs, first):
        lines = log.read_text().splitlines()
        assert [json.loads(line)["epoch"] for line in lines] == [1, 2] and lines[0] + "\n" == before
