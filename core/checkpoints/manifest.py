"""The integrity of a checkpoint folder: safe names, and `manifest.json` (every file's sha256).

A checkpoint folder (`checkpoints/`, a Hub snapshot, a `--checkpoints` directory) holds
`<task>/<model>/{model.safetensors, config.json, vocab.json, metrics.json, README.md, evaluation.json,
attribution.json}` and a
`manifest.json` listing every one of those files with its sha256, and, when a checkpoint reads shared
word vectors (core.checkpoints.checkpoint), the vectors set `vectors/<lang>/{vectors.json, words.txt,
vectors-NNN.safetensors}` (listed in the manifest too, but not a checkpoint: `manifest_pairs` leaves it out).
Names are validated before they become paths: task and model names must be registry keys, Hub repo ids
`owner/name`, manifest entries exactly `<task>/<model>/<known file>`. core.checkpoints.hub verifies a checkpoint
against the manifest before loading it; tools.release.bundle writes the manifest.
"""

import json
import re
from pathlib import Path

from core.checkpoints.checkpoint import (
    CONFIG,
    METRICS,
    SHARED_VECTORS_DIR,
    VOCAB,
    WEIGHTS,
    CheckpointError,
    atomic_write_text,
)
from core.checkpoints.files import sha256
from core.data import TASKS
from core.data.vectors import SHARED_FILES
from core.models import MODELS

MANIFEST = "manifest.json"
CARD = "README.md"
EVALUATION = (
    "evaluation.json"  # the test-set evaluation behind the Treebank tab (core.analysis.dataset_view, make evaluate-all)
)
# the deletion test of the attribution methods behind the Lab's "most faithful" hint (core.analysis.attribution,
# make attribution)
FAITHFULNESS = "attribution.json"
# the only files a checkpoint folder may list
CHECKPOINT_FILES = (WEIGHTS, CONFIG, VOCAB, METRICS, CARD, EVALUATION, FAITHFULNESS)
REQUIRED_FILES = (WEIGHTS, CONFIG, VOCAB)
VECTORS_LANGS = ("en", "zh")

_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_REPO_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_REPO_ID = re.compile(f"{_REPO_PART}/{_REPO_PART}")
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,127}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


# -- names ------------------------------------------------------------------------------------------


def check_name(kind: str, name: str) -> str:
    """A task or model name that is safe as a path component and known to the registries."""
    registry = TASKS if kind == "task" else MODELS
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"invalid {kind} name {name!r}: expected lower-case letters, digits and '_'")
    if name not in registry:
        raise ValueError(f"unknown {kind} {name!r}; choose one of {', '.join(registry)}")
    return name


def check_repo_id(repo_id: str) -> str:
    """`owner/name` as the Hub allows it; anything that could escape a path ('..', '/', '\\') is refused."""
    if not isinstance(repo_id, str) or not _REPO_ID.fullmatch(repo_id) or ".." in repo_id or "--" in repo_id:
        raise ValueError(
            f"invalid Hub repo id {repo_id!r}: expected owner/name (letters, digits, '-', '_', '.'; no '..' or '--')"
        )
    return repo_id


def check_revision(revision: str) -> str:
    if not _REVISION.fullmatch(revision) or ".." in revision or "//" in revision or revision.endswith("/"):
        raise ValueError(f"invalid Hub revision {revision!r}: expected a commit sha, a tag or a branch name")
    return revision


def is_vectors_entry(rel: str) -> bool:
    """vectors/<lang>/<a shared vectors file>: a manifest entry that belongs to no checkpoint."""
    parts = rel.split("/")
    return (
        len(parts) == 3
        and parts[0] == SHARED_VECTORS_DIR
        and parts[1] in VECTORS_LANGS
        and SHARED_FILES.fullmatch(parts[2]) is not None
    )


def _check_relpath(rel: str, where: Path) -> tuple[str, str, str] | None:
    """A manifest entry must be exactly <task>/<model>/<known file> or a shared vectors file: no traversal,
    no other files. None for a vectors file."""
    if isinstance(rel, str) and is_vectors_entry(rel):
        return None
    parts = rel.split("/") if isinstance(rel, str) else []
    if len(parts) != 3 or parts[2] not in CHECKPOINT_FILES:
        raise CheckpointError(
            f"{where}: refusing entry {rel!r}; entries are <task>/<model>/<one of {', '.join(CHECKPOINT_FILES)}>"
        )
    try:
        return check_name("task", parts[0]), check_name("model", parts[1]), parts[2]
    except ValueError as err:
        raise CheckpointError(f"{where}: refusing entry {rel!r} ({err})") from None


# -- the manifest -----------------------------------------------------------------------------------


def build_manifest(root: Path) -> dict:
    """The manifest of every checkpoint file under `root` (written by tools.release.bundle)."""
    files = {}
    for path in sorted(root.glob("*/*/*")):
        if path.is_file() and not path.name.startswith("."):
            rel = path.relative_to(root).as_posix()
            _check_relpath(rel, root / MANIFEST)
            files[rel] = {"sha256": sha256(path), "bytes": path.stat().st_size}
    return {"format": 1, "files": files}


def write_manifest(root: str | Path) -> dict:
    root = Path(root)
    manifest = build_manifest(root)
    atomic_write_text(root / MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return manifest


def read_manifest(root: str | Path) -> dict[str, dict]:
    """{relative path: {"sha256", "bytes"}}, validated; CheckpointError naming manifest.json otherwise."""
    path = Path(root) / MANIFEST
    if not path.is_file():
        raise CheckpointError(f"{path} is missing (run `make train`, which writes it)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"{path} is not valid JSON ({err})") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        raise CheckpointError(f"{path}: expected an object with a 'files' object")
    for rel, info in files.items():
        _check_relpath(rel, path)
        if not isinstance(info, dict) or not _SHA256.fullmatch(str(info.get("sha256", ""))):
            raise CheckpointError(f"{path}: entry {rel!r} has no valid sha256")
    return files


def manifest_pairs(files: dict) -> list[tuple[str, str]]:
    return sorted({tuple(rel.split("/")[:2]) for rel in files if not is_vectors_entry(rel)})


def verify_vectors_against_manifest(root: Path, files: dict | None = None) -> None:
    """Every shared vectors file the manifest lists exists and has its recorded sha256."""
    files = read_manifest(root) if files is None else files
    for rel, info in sorted(files.items()):
        if is_vectors_entry(rel) and (not (root / rel).is_file() or sha256(root / rel) != info["sha256"]):
            raise CheckpointError(
                f"shared vectors file {root / rel} is missing or does not match its sha256 in {root / MANIFEST}"
            )


def verify_against_manifest(root: Path, task: str, model: str, files: dict | None = None) -> None:
    """Every file the manifest lists for task/model exists and has its recorded sha256."""
    files = read_manifest(root) if files is None else files
    manifest = root / MANIFEST
    prefix = f"{task}/{model}/"
    listed = {rel: info for rel, info in files.items() if rel.startswith(prefix)}
    if not listed:
        raise CheckpointError(f"{manifest} lists no files for {task}/{model}")
    for name in REQUIRED_FILES:
        if prefix + name not in listed:
            raise CheckpointError(f"{root / prefix / name} is not recorded in {manifest}")
    for rel, info in sorted(listed.items()):
        path = root / rel
        if not path.is_file():
            raise CheckpointError(f"checkpoint file {path} is missing (listed in {manifest})")
        if sha256(path) != info["sha256"]:
            raise CheckpointError(
                f"checkpoint file {path} does not match its sha256 in {manifest} "
                "(corrupt, tampered with, or changed without `make train`)"
            )
