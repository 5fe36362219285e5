"""Where checkpoints come from: an explicit directory, a pinned Hugging Face Hub model repo, or the
bundled `checkpoints/` folder, in that order.

    python -m core.hub sources                         # which source every checkpoint would load from
    python -m core.hub push --repo user/name --dry-run # write the exact folder that would be uploaded
    python -m core.hub push --repo user/name --pin     # upload, then pin the new commit in configs/hub.toml

Resolution, per (task, model):
1. an explicit directory (`Lab.load(root=...)`, `--checkpoints`): only that directory is used;
2. the Hub repo of `configs/hub.toml` (`repo_id` + pinned `revision`), when set: the local Hugging Face
   cache first (no network at all when the pinned snapshot is complete there), else a download. When
   HF_HUB_OFFLINE is set, or the Hub does not answer within `timeout` seconds (2.5 by default, counted
   from the start of the attempt, so a closed port, a dead DNS or a silent server all fall back within
   3 s), the attempt is abandoned and logged instead of huggingface_hub's ~23 s of retries;
3. the bundled `checkpoints/<task>/<model>/`.
The Hub repo has the layout of `checkpoints/`: `<task>/<model>/{model.safetensors, config.json,
vocab.json, metrics.json, README.md}` plus `manifest.json` (every file's sha256) and a README.md card.

Integrity: a Hub or bundled checkpoint must match `manifest.json` (a file missing, corrupt or not
listed is an error naming the file), then `core.checkpoint.load_checkpoint` checks the config, the
vocabulary and the weights (safetensors only, never pickle). Names are validated before they become
paths: task and model names must be registry keys, repo ids `owner/name`, manifest entries exactly
`<task>/<model>/<known file>`. The token (HF_TOKEN, or `hf auth login`) is left to huggingface_hub
and never logged.
"""

import argparse
import json
import logging
import os
import re
import shutil
import sys
import threading
import time
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from core.checkpoint import (CONFIG, METRICS, VOCAB, WEIGHTS, Checkpoint, CheckpointError, atomic_write_text,
                             load_checkpoint, sha256)
from core.data import PROJECT_ROOT, TASKS
from core.models import MODELS

log = logging.getLogger("core.hub")

HUB_CONFIG = PROJECT_ROOT / "configs" / "hub.toml"
BUNDLED = PROJECT_ROOT / "checkpoints"
MANIFEST = "manifest.json"
CARD = "README.md"
CHECKPOINT_FILES = (WEIGHTS, CONFIG, VOCAB, METRICS, CARD)  # the only files a checkpoint folder may list
REQUIRED_FILES = (WEIGHTS, CONFIG, VOCAB)

_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_REPO_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_REPO_ID = re.compile(f"{_REPO_PART}/{_REPO_PART}")
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,127}")
_SHA1 = re.compile(r"[0-9a-f]{40}")
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
        raise ValueError(f"invalid Hub repo id {repo_id!r}: expected owner/name (letters, digits, '-', '_', '.'; "
                         "no '..' or '--')")
    return repo_id


def check_revision(revision: str) -> str:
    if not _REVISION.fullmatch(revision) or ".." in revision or "//" in revision or revision.endswith("/"):
        raise ValueError(f"invalid Hub revision {revision!r}: expected a commit sha, a tag or a branch name")
    return revision


def _check_relpath(rel: str, where: Path) -> tuple[str, str, str]:
    """A manifest entry must be exactly <task>/<model>/<known file>: no traversal, no other files."""
    parts = rel.split("/") if isinstance(rel, str) else []
    if len(parts) != 3 or parts[2] not in CHECKPOINT_FILES:
        raise CheckpointError(f"{where}: refusing entry {rel!r}; entries are <task>/<model>/<one of {', '.join(CHECKPOINT_FILES)}>")
    try:
        return check_name("task", parts[0]), check_name("model", parts[1]), parts[2]
    except ValueError as err:
        raise CheckpointError(f"{where}: refusing entry {rel!r} ({err})") from None


# -- the manifest -----------------------------------------------------------------------------------

def build_manifest(root: Path) -> dict:
    """The manifest of every checkpoint file under `root` (written by core.bundle)."""
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
    return sorted({tuple(rel.split("/")[:2]) for rel in files})


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
            raise CheckpointError(f"checkpoint file {path} does not match its sha256 in {manifest} "
                                  "(corrupt, tampered with, or changed without `make train`)")


# -- configuration ----------------------------------------------------------------------------------

@dataclass
class HubConfig:
    repo_id: str = ""  # empty: the app uses the bundled checkpoints and never touches the network
    revision: str = ""  # pin a commit sha (printed by `make push`); a branch or tag also works but moves
    timeout: float = 2.5  # seconds for the whole Hub attempt before falling back (import and cache look-up included)
    download_timeout: float = 120.0  # a reachable Hub must deliver the snapshot within this
    cache_dir: str = ""  # default: huggingface_hub's cache (HF_HUB_CACHE / HF_HOME)

    def __post_init__(self):
        if self.repo_id:
            check_repo_id(self.repo_id)
            check_revision(self.revision or "main")
        if not 0 < self.timeout <= 60 or not 0 < self.download_timeout <= 3600:
            raise ValueError(f"timeouts out of range: timeout={self.timeout}, download_timeout={self.download_timeout}")

    @property
    def rev(self) -> str:
        return self.revision or "main"

    @property
    def label(self) -> str:
        return f"{self.repo_id}@{self.rev}"


def read_hub_config(path: str | Path = HUB_CONFIG) -> HubConfig:
    """configs/hub.toml's [hub] table; a missing file means no Hub repo."""
    path = Path(path)
    if not path.is_file():
        return HubConfig()
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("hub", {})
        known = {f.name for f in fields(HubConfig)}
        unknown = sorted(set(table) - known)
        if unknown:
            raise ValueError(f"unknown keys {unknown}; known: {sorted(known)}")
        return HubConfig(**table)
    except (tomllib.TOMLDecodeError, ValueError, TypeError) as err:
        raise ValueError(f"{path}: {err}") from None


# -- the Hub ----------------------------------------------------------------------------------------

class HubUnavailable(Exception):
    """The Hub snapshot cannot be had now; the message says why (never the token)."""


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def hub_offline() -> bool:
    """HF_HUB_OFFLINE as huggingface_hub read it at import, or as the environment says now."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or _truthy(os.environ.get("HF_HUB_OFFLINE"))


def _redact(message: str) -> str:
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        secret = os.environ.get(name)
        if secret and len(secret) >= 4:
            message = message.replace(secret, "***")
    return message


def _describe(err: BaseException) -> str:
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status in (401, 403):
        return f"access refused (HTTP {status}): the repo is private or gated, or HF_TOKEN is missing or wrong"
    if status == 404 or type(err).__name__ in ("RepositoryNotFoundError", "RevisionNotFoundError"):
        return f"not found on the Hub ({type(err).__name__})"
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return _redact(f"{type(err).__name__}: {text}"[:300])


def _missing(snapshot: Path, pairs: list[tuple[str, str]] | None) -> list[str]:
    """Files the snapshot's manifest lists (for `pairs`) that are not there; ['manifest.json'] without one."""
    try:
        files = read_manifest(snapshot)
    except CheckpointError:
        return [MANIFEST]
    wanted = set(pairs) if pairs is not None else None
    return [rel for rel in files if (wanted is None or tuple(rel.split("/")[:2]) in wanted)
            and not (snapshot / rel).is_file()]


def _patterns(pairs: list[tuple[str, str]] | None) -> list[str]:
    if pairs is None:
        return [MANIFEST, CARD] + [f"*/*/{name}" for name in CHECKPOINT_FILES]
    return [MANIFEST] + [f"{t}/{m}/{name}" for t, m in pairs for name in CHECKPOINT_FILES]


def fetch_snapshot(cfg: HubConfig, pairs: list[tuple[str, str]] | None = None,
                   started: float | None = None) -> tuple[Path, str]:
    """(local folder of the pinned snapshot, "cache" | "download"); HubUnavailable within cfg.timeout
    seconds of `started` (time.monotonic(), default now) when it is neither complete in the cache nor
    reachable. The import of huggingface_hub and the cache look-up count against the timeout."""
    started = time.monotonic() if started is None else started
    from huggingface_hub import HfApi, constants, snapshot_download

    cache_dir = cfg.cache_dir or None
    patterns = _patterns(pairs)
    try:  # 1. the cache: no network at all
        path = Path(snapshot_download(cfg.repo_id, revision=cfg.rev, cache_dir=cache_dir, local_files_only=True,
                                      allow_patterns=patterns))
        if not _missing(path, pairs):
            return path, "cache"
    except (OSError, ValueError):
        pass  # LocalEntryNotFoundError (an OSError) when it is not cached
    if hub_offline():
        raise HubUnavailable(f"HF_HUB_OFFLINE is set and {cfg.label} is not complete in the local cache")

    # 2. the network, in a worker thread: huggingface_hub retries a refused connection for about 23 s and
    # waits on a silent server longer, so the caller stops waiting after cfg.timeout and falls back.
    answered, finished, result = threading.Event(), threading.Event(), {}

    def work():
        try:
            api = HfApi()  # token: HF_TOKEN or the stored login, read by huggingface_hub itself
            info = api.repo_info(cfg.repo_id, revision=cfg.rev, timeout=cfg.timeout)
            answered.set()
            result["path"] = snapshot_download(cfg.repo_id, revision=info.sha, cache_dir=cache_dir,
                                               allow_patterns=patterns, etag_timeout=cfg.timeout)
        except BaseException as err:  # noqa: BLE001 - reported to the waiting caller
            result["error"] = err
        finally:
            answered.set()
            finished.set()

    threading.Thread(target=work, name="hub-fetch", daemon=True).start()
    if not answered.wait(max(0.0, cfg.timeout - (time.monotonic() - started))):
        raise HubUnavailable(f"no answer from {constants.ENDPOINT} within {cfg.timeout:g} s")
    if not finished.wait(cfg.download_timeout):
        raise HubUnavailable(f"{cfg.label} did not download within {cfg.download_timeout:g} s")
    if "error" in result:
        raise HubUnavailable(f"{constants.ENDPOINT}: {_describe(result['error'])}")
    path = Path(result["path"])
    if missing := _missing(path, pairs):
        raise HubUnavailable(f"{cfg.label} is incomplete: {', '.join(missing[:3])} missing")
    return path, "download"


# -- resolution -------------------------------------------------------------------------------------

@dataclass
class Resolved:
    task: str
    model: str
    path: Path  # the checkpoint folder
    kind: str  # "directory" | "hub" | "bundled"
    source: str  # "directory: <path>" | "hub: <repo>@<rev>" | "bundled: <path>"
    root: Path | None  # the folder whose manifest.json covers it (None: a lone checkpoint folder)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


@dataclass
class Resolver:
    """Resolves (task, model) pairs; the Hub is tried at most once per resolver."""

    directory: Path | None = None
    prefer: str = "auto"  # "auto": directory > hub > bundled; "hub": hub only; "bundled": bundled only
    hub: HubConfig = field(default_factory=HubConfig)
    bundled: Path = BUNDLED
    hub_status: dict = field(default_factory=dict)  # state, reason, seconds: for the log and the UI
    _snapshot: Path | None = None

    def __post_init__(self):
        if self.prefer not in ("auto", "hub", "bundled"):
            raise ValueError(f"prefer must be 'auto', 'hub' or 'bundled', got {self.prefer!r}")
        self.directory = Path(self.directory) if self.directory is not None else None
        self.bundled = Path(self.bundled)

    # the Hub snapshot, fetched on first use
    def snapshot(self) -> Path | None:
        if self.hub_status:
            return self._snapshot
        if self.directory is not None or self.prefer == "bundled" or not self.hub.repo_id:
            reason = ("an explicit directory was given" if self.directory is not None else
                      "prefer='bundled'" if self.prefer == "bundled" else f"no repo_id in {_display(HUB_CONFIG)}")
            self.hub_status = {"state": "skipped", "reason": reason, "seconds": 0.0}
            return None
        started = time.monotonic()
        try:
            self._snapshot, how = fetch_snapshot(self.hub, started=started)
            self.hub_status = {"state": how, "reason": "", "seconds": time.monotonic() - started}
            log.info("checkpoints: Hub %s from the %s (%.2f s)", self.hub.label, how, self.hub_status["seconds"])
        except HubUnavailable as err:
            seconds = time.monotonic() - started
            self.hub_status = {"state": "unavailable", "reason": str(err), "seconds": seconds}
            log.warning("checkpoints: Hub %s unavailable after %.2f s (%s); %s", self.hub.label, seconds, err,
                        "no fallback (prefer='hub')" if self.prefer == "hub" else "using the bundled checkpoints")
        return self._snapshot

    def pairs(self) -> list[tuple[str, str]]:
        """Every (task, model) the chosen sources hold (folders and manifest entries)."""
        snapshot = self.snapshot()  # None when skipped or unavailable; hub_status says which
        roots = [self.directory] if self.directory is not None else [
            r for r in [snapshot, self.bundled if self.prefer != "hub" else None] if r is not None]
        found = set()
        for root in roots:
            found |= {(p.parent.name, p.name) for p in root.glob("*/*")
                      if p.is_dir() and not p.name.startswith(".") and not p.parent.name.startswith(".")}
            if (root / MANIFEST).is_file():
                try:
                    found |= set(manifest_pairs(read_manifest(root)))
                except CheckpointError:
                    pass  # reported when a checkpoint of this root is loaded
        return sorted(found)

    def resolve(self, task: str, model: str) -> Resolved:
        check_name("task", task)
        check_name("model", model)
        if self.directory is not None:
            if (self.directory / CONFIG).is_file():
                return Resolved(task, model, self.directory, "directory", f"directory: {_display(self.directory)}", None)
            path = self.directory / task / model
            if not path.is_dir():
                raise CheckpointError(f"checkpoint directory {path} does not exist")
            root = self.directory if (self.directory / MANIFEST).is_file() else None
            return Resolved(task, model, path, "directory", f"directory: {_display(path)}", root)
        tried = []
        if self.prefer != "bundled":
            snapshot = self.snapshot()
            if snapshot is not None and (snapshot / task / model).is_dir():
                return Resolved(task, model, snapshot / task / model, "hub", f"hub: {self.hub.label}", snapshot)
            if self.hub.repo_id:
                tried.append(f"Hub {self.hub.label} ({self.hub_status.get('reason') or 'not in the repo'})")
        if self.prefer != "hub":
            path = self.bundled / task / model
            if path.is_dir():
                return Resolved(task, model, path, "bundled", f"bundled: {_display(path)}", self.bundled)
            tried.append(f"bundled {path} (missing)")
        raise CheckpointError(f"no checkpoint for {task}/{model}: tried {'; '.join(tried)}")

    def load(self, task: str, model: str) -> tuple[Checkpoint, Resolved]:
        resolved = self.resolve(task, model)
        if resolved.root is not None:
            verify_against_manifest(resolved.root, task, model)
        ckpt = load_checkpoint(resolved.path)
        if (ckpt.meta.get("task"), ckpt.meta.get("model")) != (task, model):
            raise CheckpointError(f"{resolved.path / CONFIG} is a {ckpt.meta.get('model')}/{ckpt.meta.get('task')} "
                                  f"checkpoint, but it sits in {task}/{model}/")
        log.info("checkpoint %s/%s <- %s", task, model, resolved.source)
        return ckpt, resolved


def load_all(root: str | Path | None = None, prefer: str = "auto", config: str | Path | None = None,
             bundled: str | Path | None = None) -> tuple[dict, dict, dict, dict]:
    """Load every checkpoint the sources hold: (checkpoints, sources, errors, hub_status), keyed by
    (task, model) except `errors`, which maps a checkpoint path (or task/model) to its message."""
    hub = read_hub_config(config or HUB_CONFIG) if root is None and prefer != "bundled" else HubConfig()
    resolver = Resolver(Path(root) if root is not None else None, prefer, hub, Path(bundled) if bundled else BUNDLED)
    checkpoints, sources, errors = {}, {}, {}
    if resolver.directory is not None and (resolver.directory / CONFIG).is_file():  # a lone checkpoint folder
        try:
            ckpt = load_checkpoint(resolver.directory)
        except CheckpointError as err:
            log.error("skipping checkpoint %s: %s", resolver.directory, err)
            return {}, {}, {str(resolver.directory): str(err)}, resolver.hub_status
        key = (ckpt.meta.get("task", ""), ckpt.meta.get("model", ""))
        log.info("checkpoint %s/%s <- directory: %s", *key, _display(resolver.directory))
        return {key: ckpt}, {key: f"directory: {_display(resolver.directory)}"}, {}, resolver.hub_status
    for task, model in resolver.pairs():
        try:
            ckpt, resolved = resolver.load(task, model)
        except (CheckpointError, ValueError) as err:
            log.error("skipping checkpoint %s/%s: %s", task, model, err)
            errors[f"{task}/{model}"] = str(err)
            continue
        key = (ckpt.meta.get("task", task), ckpt.meta.get("model", model))
        checkpoints[key], sources[key] = ckpt, resolved.source
    if prefer == "hub" and resolver.hub_status.get("state") in ("unavailable", "skipped") and not checkpoints:
        errors[f"hub: {hub.label}" if hub.repo_id else "hub"] = resolver.hub_status["reason"]
    return checkpoints, sources, errors, resolver.hub_status


# -- publishing -------------------------------------------------------------------------------------

def stage(checkpoints: Path, out: Path, repo_id: str) -> list[str]:
    """Write into `out` exactly what `push` uploads: every checkpoint file the manifest lists (each one
    verified and loaded first), manifest.json, and a README.md card for the whole repo."""
    from core.bundle import render_repo_card  # the cards live with the code that measures them

    check_repo_id(repo_id)
    files = read_manifest(checkpoints)
    pairs = manifest_pairs(files)
    if not pairs:
        raise CheckpointError(f"{checkpoints / MANIFEST} lists no checkpoints")
    for task, model in pairs:
        verify_against_manifest(checkpoints, task, model, files)
        load_checkpoint(checkpoints / task / model)
    if out.exists() and any(out.iterdir()):
        if not (out / MANIFEST).is_file():
            raise ValueError(f"refusing to overwrite {out}: not empty and not a previous push folder")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    for rel in files:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(checkpoints / rel, out / rel)
    shutil.copyfile(checkpoints / MANIFEST, out / MANIFEST)
    (out / CARD).write_text(render_repo_card(checkpoints, repo_id), encoding="utf-8")
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())


def pin_revision(config_path: Path, repo_id: str, revision: str) -> None:
    """Set repo_id and revision in configs/hub.toml, keeping its comments."""
    text = config_path.read_text(encoding="utf-8")
    for key, value in (("repo_id", check_repo_id(repo_id)), ("revision", check_revision(revision))):
        text, count = re.subn(rf'(?m)^{key}\s*=\s*"[^"\n]*"', f'{key} = "{value}"', text, count=1)
        if not count:
            raise ValueError(f"{config_path}: no `{key} = \"...\"` line to update")
    HubConfig(**tomllib.loads(text).get("hub", {}))  # still valid TOML and a valid config
    atomic_write_text(config_path, text)


def push(repo_id: str, checkpoints: Path, out: Path | None, dry_run: bool, private: bool = False,
         tag: str = "", pin: bool = False, message: str = "") -> int:
    if dry_run:
        out = out or PROJECT_ROOT / ".cache" / "hub-push" / repo_id.replace("/", "--")
        listed = stage(checkpoints, out, repo_id)
        size = sum((out / rel).stat().st_size for rel in listed)
        print(f"dry run: {len(listed)} files ({size / 1e6:.1f} MB) would be uploaded to https://huggingface.co/{repo_id}")
        print(f"the exact folder: {out}")
        for rel in listed:
            print(f"  {rel}")
        return 0

    import tempfile

    from huggingface_hub import HfApi, get_token

    if not get_token():
        print("error: no Hugging Face token: set HF_TOKEN or run `hf auth login`", file=sys.stderr)
        return 2
    if hub_offline():
        print("error: HF_HUB_OFFLINE is set; unset it to push", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="hub-push-") as tmp:
        folder = Path(out) if out else Path(tmp) / "upload"
        listed = stage(checkpoints, folder, repo_id)
        api = HfApi()
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        commit = api.upload_folder(repo_id=repo_id, folder_path=folder, repo_type="model",
                                   commit_message=message or f"Checkpoints: {len(listed)} files from core.hub push",
                                   delete_patterns=["*/*/*", MANIFEST])  # stale checkpoints go; other files stay
    print(f"uploaded {len(listed)} files: {commit.commit_url}")
    print(f"commit: {commit.oid}")
    if tag:
        api.create_tag(repo_id, tag=tag, revision=commit.oid, exist_ok=True)
        print(f"tagged {tag}")
    if pin:
        pin_revision(HUB_CONFIG, repo_id, commit.oid)
        print(f"pinned {repo_id}@{commit.oid} in {_display(HUB_CONFIG)}")
    else:
        print(f'to use it, set in {_display(HUB_CONFIG)}:\n  repo_id = "{repo_id}"\n  revision = "{commit.oid}"')
    files = ",".join(rel for rel in listed if rel != CARD)
    print(f"Space front matter (optional, downloads at build time):\npreload_from_hub:\n  - {repo_id} {files} {commit.oid}")
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    parser = argparse.ArgumentParser(prog="python -m core.hub", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("sources", help="where every checkpoint would be loaded from")
    show.add_argument("--checkpoints", default=None, help="an explicit directory (overrides Hub and bundled)")
    show.add_argument("--prefer", default="auto", choices=["auto", "hub", "bundled"])
    show.add_argument("--config", default=str(HUB_CONFIG))
    show.add_argument("--bundled", default=str(BUNDLED))
    up = sub.add_parser("push", help="upload the bundled checkpoints with their cards")
    up.add_argument("--repo", required=True, help="the Hub model repo, owner/name")
    up.add_argument("--dry-run", action="store_true", help="only write the exact folder that would be uploaded")
    up.add_argument("--out", default=None, help="where the dry run writes (default .cache/hub-push/<owner>--<name>)")
    up.add_argument("--checkpoints", default=str(BUNDLED))
    up.add_argument("--private", action="store_true", help="create the repo private (when it does not exist)")
    up.add_argument("--tag", default="", help="also tag the new commit, e.g. v1")
    up.add_argument("--pin", action="store_true", help="write repo_id and the new commit into configs/hub.toml")
    up.add_argument("--message", default="", help="commit message")
    args = parser.parse_args(argv)
    try:
        if args.command == "push":
            return push(check_repo_id(args.repo), Path(args.checkpoints), Path(args.out) if args.out else None,
                        args.dry_run, args.private, args.tag and check_revision(args.tag), args.pin, args.message)
        checkpoints, sources, errors, status = load_all(args.checkpoints, args.prefer, args.config, args.bundled)
        print(f"Hub: {status.get('state')} ({status.get('seconds', 0):.2f} s) {status.get('reason', '')}".rstrip())
        for (task, model), source in sorted(sources.items()):
            print(f"  {task}/{model}: {source}")
        for where, message in errors.items():
            print(f"  error {where}: {message}")
        return 0 if not errors else 1
    except (CheckpointError, ValueError, OSError) as err:
        print(f"error: {_redact(str(err))}", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - Hub errors (HTTP, auth) as one line, token redacted
        print(f"error: {_describe(err)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
