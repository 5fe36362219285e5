"""core.checkpoints.hub and tools.release.push: explicit directory > pinned Hub repo (cache first) > bundled; offline
and unreachable Hubs fall back within 3 s; broken files are named; the dry-run push folder holds valid cards; names that
could escape a path are refused. The Hub is never contacted: a hand-made cache, a closed local port
(HF_ENDPOINT=http://127.0.0.1:9) and a local socket that never answers stand in for it."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import core.checkpoints.hub as hub
import tools.release.push as push
from core.checkpoints.checkpoint import CheckpointError
from core.checkpoints.files import sha256
from core.checkpoints.hub import HubConfig, Resolver, load_all, read_hub_config
from core.checkpoints.manifest import check_name, check_repo_id, read_manifest, write_manifest
from core.predict import Lab
from tools.release.bundle import bundle
from tools.release.cards import render_repo_card
from tools.release.config import read_bundle_config

ROOT = Path(__file__).resolve().parents[2]
REPO = "someone/sentence-lab"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TOKEN = "hf_TestTokenThatMustNeverBeLogged123"
TINY_ARGS = [
    "--set",
    "embed_dim=16",
    "--set",
    "hidden=12",
    "--vectors",
    "none",
    "--epochs",
    "1",
    "--batch-size",
    "8",
    "--no-progress",
]


@pytest.fixture(scope="module")
def bundled(tiny_data, tmp_path_factory):
    """Two tiny bundled checkpoints (sst5/nbow, sst2/nbow) with cards and manifest."""
    root = tmp_path_factory.mktemp("hub")
    lines = ["[bundle]", "max_total_mb = 1.0", "max_vocab = 30", "min_vocab = 5"]
    for task, phrases in (("sst5", "true"), ("sst2", "false")):
        lines += [
            "[[checkpoint]]",
            'model = "nbow"',
            f'task = "{task}"',
            f"phrases = {phrases}",
            f"args = {json.dumps(TINY_ARGS)}",
        ]
    (root / "bundled.toml").write_text("\n".join(lines) + "\n")
    bundle(
        read_bundle_config(root / "bundled.toml"),
        root / "checkpoints",
        data_dir=str(tiny_data),
        examples_cache=[],
        runs=root / "runs",
    )
    return root / "checkpoints"


def hub_folder(bundled: Path, tmp: Path) -> Path:
    """The exact folder `push` would upload (via the dry run)."""
    out = tmp / "upload"
    assert push.main(["--repo", REPO, "--dry-run", "--checkpoints", str(bundled), "--out", str(out)]) == 0
    return out


def fill_cache(cache: Path, folder: Path, commit: str = COMMIT, ref: str = "main") -> Path:
    """huggingface_hub's cache layout by hand: blobs/<sha256>, snapshots/<commit>/<path> -> blob, refs/<ref>."""
    storage = cache / f"models--{REPO.replace('/', '--')}"
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        blob = storage / "blobs" / sha256(path)
        blob.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, blob)
        link = storage / "snapshots" / commit / path.relative_to(folder)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (storage / "refs").mkdir(exist_ok=True)
    (storage / "refs" / ref).write_text(commit)
    return storage / "snapshots" / commit


def hub_toml(path: Path, cache: Path, revision: str = COMMIT, repo: str = REPO) -> Path:
    path.write_text(f'[hub]\nrepo_id = "{repo}"\nrevision = "{revision}"\ncache_dir = "{cache}"\n')
    return path


# -- resolution -------------------------------------------------------------------------------------


def test_without_a_repo_the_bundled_checkpoints_load(bundled, tmp_path):
    lab = Lab.load(config=tmp_path / "absent.toml", bundled=bundled)
    assert lab.errors == {}
    assert lab.sources == {
        ("sst5", "nbow"): f"bundled: {bundled / 'sst5' / 'nbow'}",
        ("sst2", "nbow"): f"bundled: {bundled / 'sst2' / 'nbow'}",
    }
    assert lab.predict("the movie is not good", "nbow", task="sst5").source.startswith("bundled: ")


@pytest.mark.parametrize("revision", [COMMIT, "main"])
def test_hub_cache_loads_offline(bundled, tmp_path, revision):
    """HF_HUB_OFFLINE=1 (conftest) and a pre-filled cache: the Hub copy wins over the bundled one."""
    fill_cache(tmp_path / "cache", hub_folder(bundled, tmp_path))
    started = time.monotonic()
    lab = Lab.load(config=hub_toml(tmp_path / "hub.toml", tmp_path / "cache", revision), bundled=bundled)
    assert time.monotonic() - started < 3
    assert lab.errors == {}
    assert lab.sources == {key: f"hub: {REPO}@{revision}" for key in (("sst5", "nbow"), ("sst2", "nbow"))}
    assert str(lab.checkpoints[("sst5", "nbow")].path).startswith(str(tmp_path / "cache"))
    assert lab.predict("a great film", "nbow", task="sst5").source == f"hub: {REPO}@{revision}"


def test_offline_with_an_empty_cache_falls_back_at_once(bundled, tmp_path, caplog):
    started = time.monotonic()
    _, sources, errors, status = load_all(config=hub_toml(tmp_path / "hub.toml", tmp_path / "empty"), bundled=bundled)
    assert time.monotonic() - started < 1.0
    assert errors == {} and all(s.startswith("bundled: ") for s in sources.values()) and len(sources) == 2
    assert status["state"] == "unavailable" and "HF_HUB_OFFLINE" in status["reason"]
    assert "unavailable" in caplog.text and "using the bundled checkpoints" in caplog.text


def test_prefer_hub_does_not_fall_back_and_prefer_bundled_skips_the_hub(bundled, tmp_path):
    config = hub_toml(tmp_path / "hub.toml", tmp_path / "empty")
    lab = Lab.load(prefer="hub", config=config, bundled=bundled)
    assert lab.checkpoints == {} and "HF_HUB_OFFLINE" in lab.errors[f"hub: {REPO}@{COMMIT}"]
    _, sources, _, status = load_all(prefer="bundled", config=config, bundled=bundled)
    assert status["state"] == "skipped" and len(sources) == 2


def test_an_explicit_directory_wins_and_is_the_only_source(bundled, tmp_path):
    fill_cache(tmp_path / "cache", hub_folder(bundled, tmp_path))
    mine = tmp_path / "mine"
    shutil.copytree(bundled / "sst2", mine / "sst2")  # no manifest: a plain directory of checkpoints
    lab = Lab.load(root=mine, config=hub_toml(tmp_path / "hub.toml", tmp_path / "cache"), bundled=bundled)
    assert lab.sources == {("sst2", "nbow"): f"directory: {mine / 'sst2' / 'nbow'}"} and lab.errors == {}
    lone = Lab.load(root=bundled / "sst5" / "nbow")  # one checkpoint folder, e.g. runs/<task>/<model>-s1/best
    assert lone.sources == {("sst5", "nbow"): f"directory: {bundled / 'sst5' / 'nbow'}"}


# -- the Hub cannot be reached: a fresh process without HF_HUB_OFFLINE ---------------------------------

# "seconds": the Hub attempt (what the 3 s promise is about); "total": the whole load, checkpoints included,
# which a busy machine stretches
SCRIPT = """
import json, sys, time
from core.checkpoints.hub import load_all
out = {}
for name, config in (("empty_cache", sys.argv[1]), ("cached", sys.argv[2])):
    started = time.monotonic()
    checkpoints, sources, errors, status = load_all(config=config, bundled=sys.argv[3])
    out[name] = {"seconds": status["seconds"], "total": time.monotonic() - started, "errors": errors,
                 "sources": sorted(set(sources.values()))}
print(json.dumps(out))
"""


def run_unreachable(bundled: Path, tmp_path: Path, endpoint: str) -> tuple[dict, str]:
    fill_cache(tmp_path / "cache", hub_folder(bundled, tmp_path))
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(PYTHONPATH=str(ROOT), HF_ENDPOINT=endpoint, HF_TOKEN=TOKEN, HF_HOME=str(tmp_path / "hf-home"))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            str(hub_toml(tmp_path / "empty.toml", tmp_path / "empty")),
            str(hub_toml(tmp_path / "cached.toml", tmp_path / "cache")),
            str(bundled),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stdout + proc.stderr


def test_closed_port_falls_back_within_3s_and_uses_the_cache_first(bundled, tmp_path):
    result, output = run_unreachable(bundled, tmp_path, "http://127.0.0.1:9")
    empty, cached = result["empty_cache"], result["cached"]
    assert empty["sources"] == [f"bundled: {bundled / t / 'nbow'}" for t in ("sst2", "sst5")] and empty["errors"] == {}
    assert empty["seconds"] < 3.0 and empty["total"] < 30, empty  # the attempt gives up in time; nothing hangs
    assert cached["sources"] == [f"hub: {REPO}@{COMMIT}"] and cached["seconds"] < 3.0  # no network needed
    assert "Hub someone/sentence-lab@" in output and "unavailable" in output
    assert TOKEN not in output


def test_a_silent_server_falls_back_within_3s(bundled, tmp_path):
    """A port that accepts connections and never answers: huggingface_hub alone would wait minutes."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        result, output = run_unreachable(bundled, tmp_path, f"http://127.0.0.1:{server.getsockname()[1]}")
    assert result["empty_cache"]["sources"][0].startswith("bundled: ")
    assert result["empty_cache"]["seconds"] < 3.0, result
    assert "no answer from" in output and TOKEN not in output


# -- integrity ------------------------------------------------------------------------------------


def broken_copy(bundled: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "checkpoints"
    shutil.copytree(bundled, copy)
    return copy


def flip_byte(path: Path, at: int = 10) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda c: (c / "sst5/nbow/model.safetensors").unlink(), r"sst5/nbow/model.safetensors is missing"),
        (
            lambda c: flip_byte(c / "sst5/nbow/model.safetensors", 200),
            r"sst5/nbow/model.safetensors does not match its sha256 in .*manifest.json",
        ),
        (lambda c: flip_byte(c / "sst5/nbow/vocab.json", 3), r"sst5/nbow/vocab.json does not match its sha256"),
        (lambda c: (c / "sst5/nbow/config.json").write_text("{not json"), r"sst5/nbow/config.json does not match"),
    ],
)
def test_missing_or_corrupt_files_are_named_and_the_others_keep_serving(bundled, tmp_path, damage, message):
    copy = broken_copy(bundled, tmp_path)
    damage(copy)
    lab = Lab.load(prefer="bundled", bundled=copy)
    assert list(lab.checkpoints) == [("sst2", "nbow")]
    assert list(lab.errors) == ["sst5/nbow"]
    assert __import__("re").search(message, lab.errors["sst5/nbow"]), lab.errors


def test_files_that_match_the_manifest_but_not_each_other_are_named(bundled, tmp_path):
    copy = broken_copy(bundled, tmp_path)
    config = json.loads((copy / "sst5/nbow/config.json").read_text())
    config["config"]["hidden"] = 13  # the weights were trained with 12
    (copy / "sst5/nbow/config.json").write_text(json.dumps(config))
    shutil.copytree(copy / "sst2/nbow", copy / "sst2/mrnn")  # an nbow checkpoint in the mrnn folder
    write_manifest(copy)  # the manifest agrees with the files: only the files disagree with each other
    lab = Lab.load(prefer="bundled", bundled=copy)
    assert list(lab.checkpoints) == [("sst2", "nbow")]
    assert "sst5/nbow/model.safetensors: hidden.bias has shape (12,), config implies (13,)" in lab.errors["sst5/nbow"]
    assert "sst2/mrnn/config.json is a nbow/sst2 checkpoint" in lab.errors["sst2/mrnn"]


def test_manifest_problems_are_named(bundled, tmp_path):
    copy = broken_copy(bundled, tmp_path)
    (copy / "manifest.json").unlink()
    lab = Lab.load(prefer="bundled", bundled=copy)
    assert lab.checkpoints == {} and all("manifest.json is missing" in e for e in lab.errors.values())

    copy = broken_copy(bundled, tmp_path / "b")
    manifest = json.loads((copy / "manifest.json").read_text())
    del manifest["files"]["sst2/nbow/vocab.json"]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    errors = Lab.load(prefer="bundled", bundled=copy).errors
    assert list(errors) == ["sst2/nbow"] and "sst2/nbow/vocab.json is not recorded in" in errors["sst2/nbow"]

    for evil in ("../../etc/passwd", "sst5/nbow/../../../x/config.json", "sst5/nbow/pytorch_model.bin"):
        manifest = json.loads((bundled / "manifest.json").read_text())
        manifest["files"][evil] = {"sha256": "0" * 64}
        (copy / "manifest.json").write_text(json.dumps(manifest))
        with pytest.raises(CheckpointError, match="refusing entry"):
            read_manifest(copy)


def test_a_corrupt_hub_file_is_named(bundled, tmp_path):
    snapshot = fill_cache(tmp_path / "cache", hub_folder(bundled, tmp_path))
    flip_byte((snapshot / "sst2/nbow/model.safetensors").resolve(), 150)
    lab = Lab.load(config=hub_toml(tmp_path / "hub.toml", tmp_path / "cache"), bundled=bundled)
    assert lab.sources == {("sst5", "nbow"): f"hub: {REPO}@{COMMIT}"}
    assert "sst2/nbow/model.safetensors does not match its sha256" in lab.errors["sst2/nbow"]


# -- names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "repo_id",
    [
        "../etc",
        "user/../etc",
        "user/..",
        "/abs/path",
        "a/b/c",
        "user",
        "user/na me",
        "user/name/",
        "us--er/x",
        "user\\name",
        "",
        "user/.hidden",
    ],
)
def test_bad_repo_ids_are_refused(repo_id):
    with pytest.raises(ValueError, match="invalid Hub repo id"):
        check_repo_id(repo_id)


def test_good_repo_ids_pass():
    for repo_id in ("user/name", "Org-1/sentence.lab_v2", "a/b"):
        assert check_repo_id(repo_id) == repo_id


@pytest.mark.parametrize(
    "kind, name",
    [
        ("task", "../sst5"),
        ("task", "sst5/.."),
        ("model", "nbow/../../x"),
        ("model", "NBOW"),
        ("task", ""),
        ("model", "unknown_model"),
        ("task", "imdb"),
    ],
)
def test_bad_task_and_model_names_are_refused(kind, name):
    with pytest.raises(ValueError):
        check_name(kind, name)
    with pytest.raises(ValueError):
        Resolver(prefer="bundled").resolve(*((name, "nbow") if kind == "task" else ("sst5", name)))


def test_hub_config_is_validated(tmp_path):
    for text, message in (
        ('[hub]\nrepo_id = "a/../b"\n', "invalid Hub repo id"),
        ('[hub]\nrepo_id = "a/b"\nrevision = "../main"\n', "invalid Hub revision"),
        ('[hub]\nrepo = "a/b"\n', "unknown keys"),
        ('[hub]\nrepo_id = "a/b"\ntimeout = 0\n', "timeouts out of range"),
    ):
        (tmp_path / "hub.toml").write_text(text)
        with pytest.raises(ValueError, match=message) as info:
            read_hub_config(tmp_path / "hub.toml")
        assert str(tmp_path / "hub.toml") in str(info.value)
    project = read_hub_config()  # the shipped config: no repo yet, so the app uses the bundled copies
    assert project.repo_id == "" and project.timeout < 3


# -- publishing -----------------------------------------------------------------------------------


def front_matter(path: Path) -> dict:
    text = path.read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def test_dry_run_push_writes_the_exact_folder_with_valid_cards(bundled, tmp_path, capsys):
    out = hub_folder(bundled, tmp_path)
    files = read_manifest(bundled)
    assert {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} == set(files) | {
        "manifest.json",
        "README.md",
    }
    assert all(sha256(out / rel) == info["sha256"] for rel, info in files.items())
    assert "dry run: 12 files" in capsys.readouterr().out

    repo_card = front_matter(out / "README.md")
    assert repo_card["pipeline_tag"] == "text-classification" and "library_name" not in repo_card
    assert "model-index" not in repo_card  # one model name per model-index: each checkpoint's card holds its own
    for task in ("sst5", "sst2"):
        metrics = json.loads((out / task / "nbow" / "metrics.json").read_text())
        card = front_matter(out / task / "nbow" / "README.md")
        assert card["model-index"][0]["results"][0]["metrics"][0]["value"] == round(metrics["test"]["accuracy"], 4)
        assert {"pipeline_tag", "language", "datasets", "metrics", "model-index"} <= set(card)

    # a second dry run replaces its own folder, but never a folder it did not write
    assert push.main(["--repo", REPO, "--dry-run", "--checkpoints", str(bundled), "--out", str(out)]) == 0
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "thesis.tex").write_text("...")
    assert (
        push.main(["--repo", REPO, "--dry-run", "--checkpoints", str(bundled), "--out", str(tmp_path / "precious")])
        == 2
    )
    assert (tmp_path / "precious" / "thesis.tex").is_file()


def test_cards_keep_every_checkpoints_name_and_number_through_huggingface_hub():
    """The shipped checkpoints' cards read back by huggingface_hub's ModelCard, and written again: each
    keeps its name and accuracy; the repo card lists all ten by name with their numbers and holds no
    model-index (which huggingface_hub reads back as one model name)."""
    from huggingface_hub import ModelCard

    out = hub.BUNDLED
    repo_card = ModelCard(render_repo_card(out, REPO))
    assert repo_card.data.eval_results is None and "model-index" not in repo_card.data.to_dict()
    pairs = hub.manifest_pairs(read_manifest(out))
    assert len(pairs) == 10
    for task, model in pairs:
        metrics = json.loads((out / task / model / "metrics.json").read_text())
        name, value = f"{model}-{task}", round(metrics["test"]["accuracy"], 4)
        card = ModelCard.load(out / task / model / "README.md")
        again = ModelCard(str(card))  # written and read a second time
        for data in (card.data, again.data):
            assert data.model_name == name
            (result,) = data.eval_results
            assert (result.metric_type, result.metric_value, result.dataset_split) == ("accuracy", value, "test")
        row = next(line for line in repo_card.text.splitlines() if f"({name})" in line)
        assert f"{100 * metrics['test']['accuracy']:.1f}%" in row


def test_push_refuses_broken_checkpoints_and_bad_repo_ids(bundled, tmp_path, capsys):
    copy = broken_copy(bundled, tmp_path)
    flip_byte(copy / "sst2/nbow/vocab.json", 2)
    assert push.main(["--repo", REPO, "--dry-run", "--checkpoints", str(copy), "--out", str(tmp_path / "o")]) == 2
    assert "sst2/nbow/vocab.json does not match its sha256" in capsys.readouterr().err
    for repo in ("../../etc", "user/../../x", "user/name/extra"):
        assert push.main(["--repo", repo, "--dry-run", "--checkpoints", str(bundled)]) == 2
        assert "invalid Hub repo id" in capsys.readouterr().err


def test_push_uploads_the_staged_folder_and_pins_the_commit(bundled, tmp_path, monkeypatch, capsys):
    import huggingface_hub

    calls = {}

    class FakeApi:
        def create_repo(self, repo_id, **kw):
            calls["create"] = (repo_id, kw)

        def upload_folder(self, repo_id, folder_path, **kw):
            calls["files"] = sorted(
                p.relative_to(folder_path).as_posix() for p in Path(folder_path).rglob("*") if p.is_file()
            )
            calls["upload"] = (repo_id, kw)
            return type(
                "Commit", (), {"oid": "f" * 40, "commit_url": f"https://huggingface.co/{repo_id}/commit/{'f' * 40}"}
            )

        def create_tag(self, repo_id, tag, revision, **kw):
            calls["tag"] = (tag, revision)

    config = tmp_path / "hub.toml"
    shutil.copyfile(hub.HUB_CONFIG, config)
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: TOKEN)
    monkeypatch.setattr(push, "hub_offline", lambda: False)
    monkeypatch.setattr(push, "HUB_CONFIG", config)
    assert push.main(["--repo", REPO, "--checkpoints", str(bundled), "--tag", "v1", "--pin"]) == 0
    assert calls["create"] == (REPO, {"repo_type": "model", "private": False, "exist_ok": True})
    assert calls["files"] == sorted(set(read_manifest(bundled)) | {"manifest.json", "README.md"})
    assert calls["upload"][1]["delete_patterns"] == ["*/*/*", "manifest.json"] and calls["tag"] == ("v1", "f" * 40)
    pinned = read_hub_config(config)
    assert (pinned.repo_id, pinned.revision) == (REPO, "f" * 40)
    assert "# Where the lab pulls" in config.read_text()  # comments kept
    output = capsys.readouterr()
    assert TOKEN not in output.out + output.err and f"preload_from_hub:\n  - {REPO} manifest.json," in output.out


def test_push_without_a_token_says_so(bundled, monkeypatch, capsys):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    assert push.main(["--repo", REPO, "--checkpoints", str(bundled)]) == 2
    assert "set HF_TOKEN or run `hf auth login`" in capsys.readouterr().err


def test_sources_command(bundled, tmp_path, capsys):
    config = hub_toml(tmp_path / "hub.toml", tmp_path / "empty")
    assert hub.main(["sources", "--config", str(config), "--bundled", str(bundled)]) == 0
    assert "sst5/nbow: bundled: " in capsys.readouterr().out
    fill_cache(tmp_path / "cache", hub_folder(bundled, tmp_path))
    assert (
        hub.main(
            [
                "sources",
                "--config",
                str(hub_toml(tmp_path / "h2.toml", tmp_path / "cache")),
                "--bundled",
                str(tmp_path / "none"),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "Hub: cache" in printed and f"sst5/nbow: hub: {REPO}@{COMMIT}" in printed


def test_hub_config_default_is_disabled():
    assert not HubConfig().repo_id and Resolver().snapshot() is None


def test_the_log_names_each_checkpoints_source_once(bundled, tmp_path, caplog):
    caplog.set_level("INFO", logger="core.checkpoints.hub")
    checkpoints, sources, _, _ = load_all(prefer="bundled", bundled=bundled)
    lines = [r.getMessage() for r in caplog.records if " <- " in r.getMessage()]
    assert sorted(lines) == sorted(
        f"checkpoint {task}/{model} <- {source}" for (task, model), source in sources.items()
    )
    assert len(lines) == len(checkpoints) == 2


def test_app_configures_the_log_before_it_loads_the_checkpoints():
    """app.py's module level (what a Space runs): logging at INFO before ServedLab.load, or the per-checkpoint
    source lines above are dropped."""
    import ast

    tree = ast.parse((hub.PROJECT_ROOT / "app.py").read_text(encoding="utf-8"))
    calls = [
        ast.unparse(node.value.func)
        for node in tree.body
        if isinstance(node, (ast.Expr, ast.Assign)) and isinstance(node.value, ast.Call)
    ]
    assert calls.index("logging.basicConfig") < calls.index("ServedLab.load")
