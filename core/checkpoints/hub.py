"""Where checkpoints come from: an explicit directory, a pinned Hugging Face Hub model repo, or the
bundled `checkpoints/` folder, in that order.

    python -m core.checkpoints.hub sources                         # which source every checkpoint would load from

Resolution, per (task, model):
1. an explicit directory (`Lab.load(root=...)`, `--checkpoints`): only that directory is used;
2. the Hub repo of `configs/hub.toml` (`repo_id` + pinned `revision`), when set: the local Hugging Face
   cache first (no network at all when the pinned snapshot is complete there), else a download. When
   HF_HUB_OFFLINE is set, or the Hub does not answer within `timeout` seconds (2.5 by default, counted
   from the start of the attempt, so a closed port, a dead DNS or a silent server all fall back within
   3 s), the attempt is abandoned and logged instead of huggingface_hub's ~23 s of retries;
3. the bundled `checkpoints/<task>/<model>/`.
The Hub repo has the layout of `checkpoints/` (see core.checkpoints.manifest); tools.release.push publishes it.

Integrity: a Hub or bundled checkpoint must match `manifest.json` (core.checkpoints.manifest: a file missing,
corrupt or not listed is an error naming the file), then `core.checkpoints.checkpoint.load_checkpoint` checks the
config, the vocabulary and the weights (safetensors only, never pickle). The token (HF_TOKEN, or
`hf auth login`) is left to huggingface_hub and never logged.
"""

import argparse
import logging
import os
import sys
import threading
import time
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from core.checkpoints.checkpoint import CONFIG, SHARED_VECTORS_DIR, Checkpoint, CheckpointError, load_checkpoint
from core.checkpoints.manifest import (
    CARD,
    CHECKPOINT_FILES,
    MANIFEST,
    check_name,
    check_repo_id,
    check_revision,
    is_vectors_entry,
    manifest_pairs,
    read_manifest,
    verify_against_manifest,
)
from core.data import PROJECT_ROOT

log = logging.getLogger("core.checkpoints.hub")

HUB_CONFIG = PROJECT_ROOT / "configs" / "hub.toml"
BUNDLED = PROJECT_ROOT / "checkpoints"


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


def redact_token(message: str) -> str:
    """`message` with the Hub token (if the environment holds one) replaced by ***."""
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        secret = os.environ.get(name)
        if secret and len(secret) >= 4:
            message = message.replace(secret, "***")
    return message


def describe_hub_error(err: BaseException) -> str:
    """One line for a Hub or HTTP error, saying what to do about it; never the token."""
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status in (401, 403):
        return f"access refused (HTTP {status}): the repo is private or gated, or HF_TOKEN is missing or wrong"
    if status == 404 or type(err).__name__ in ("RepositoryNotFoundError", "RevisionNotFoundError"):
        return f"not found on the Hub ({type(err).__name__})"
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return redact_token(f"{type(err).__name__}: {text}"[:300])


def error_line(err: Exception) -> str:
    """A failure as one line for a CLI, the token redacted: our own errors as they are, others (HTTP,
    auth) described by `describe_hub_error`."""
    if isinstance(err, (CheckpointError, ValueError, OSError)):
        return redact_token(str(err))
    return describe_hub_error(err)


def _missing(snapshot: Path, pairs: list[tuple[str, str]] | None) -> list[str]:
    """Files the snapshot's manifest lists (for `pairs`) that are not there; ['manifest.json'] without one."""
    try:
        files = read_manifest(snapshot)
    except CheckpointError:
        return [MANIFEST]
    wanted = set(pairs) if pairs is not None else None
    return [
        rel
        for rel in files
        if (wanted is None or tuple(rel.split("/")[:2]) in wanted or is_vectors_entry(rel))
        and not (snapshot / rel).is_file()
    ]


def _patterns(pairs: list[tuple[str, str]] | None) -> list[str]:
    shared = f"{SHARED_VECTORS_DIR}/*/*"  # the shared vectors set that linked checkpoints read
    if pairs is None:
        return [MANIFEST, CARD, shared] + [f"*/*/{name}" for name in CHECKPOINT_FILES]
    return [MANIFEST, shared] + [f"{t}/{m}/{name}" for t, m in pairs for name in CHECKPOINT_FILES]


def fetch_snapshot(
    cfg: HubConfig, pairs: list[tuple[str, str]] | None = None, started: float | None = None
) -> tuple[Path, str]:
    """(local folder of the pinned snapshot, "cache" | "download"); HubUnavailable within cfg.timeout
    seconds of `started` (time.monotonic(), default now) when it is neither complete in the cache nor
    reachable. The import of huggingface_hub and the cache look-up count against the timeout."""
    started = time.monotonic() if started is None else started
    from huggingface_hub import HfApi, constants, snapshot_download

    cache_dir = cfg.cache_dir or None
    patterns = _patterns(pairs)
    try:  # 1. the cache: no network at all
        path = Path(
            snapshot_download(
                cfg.repo_id, revision=cfg.rev, cache_dir=cache_dir, local_files_only=True, allow_patterns=patterns
            )
        )
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
            result["path"] = snapshot_download(
                cfg.repo_id, revision=info.sha, cache_dir=cache_dir, allow_patterns=patterns, etag_timeout=cfg.timeout
            )
        except BaseException as err:  # reported to the waiting caller
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
        raise HubUnavailable(f"{constants.ENDPOINT}: {describe_hub_error(result['error'])}")
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


def display_path(path: str | Path) -> str:
    """`path` relative to the project when it is inside it (what logs and committed files should show)."""
    try:
        return str(Path(path).resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def within(path: Path, root: Path) -> Path:
    """`path`, or CheckpointError when it leads out of `root` (a symlinked folder): the checkpoints a root
    serves are the ones its owner put there, and its manifest only vouches for those."""
    if not path.resolve().is_relative_to(root.resolve()):
        raise CheckpointError(f"checkpoint directory {path} is a link out of {root} (to {path.resolve()}); refused")
    return path


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
            reason = (
                "an explicit directory was given"
                if self.directory is not None
                else "prefer='bundled'"
                if self.prefer == "bundled"
                else f"no repo_id in {display_path(HUB_CONFIG)}"
            )
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
            log.warning(
                "checkpoints: Hub %s unavailable after %.2f s (%s); %s",
                self.hub.label,
                seconds,
                err,
                "no fallback (prefer='hub')" if self.prefer == "hub" else "using the bundled checkpoints",
            )
        return self._snapshot

    def pairs(self) -> list[tuple[str, str]]:
        """Every (task, model) the chosen sources hold (folders and manifest entries)."""
        snapshot = self.snapshot()  # None when skipped or unavailable; hub_status says which
        roots = (
            [self.directory]
            if self.directory is not None
            else [r for r in [snapshot, self.bundled if self.prefer != "hub" else None] if r is not None]
        )
        found = set()
        for root in roots:
            found |= {
                (p.parent.name, p.name)
                for p in root.glob("*/*")
                if p.is_dir()
                and not p.name.startswith(".")
                and not p.parent.name.startswith(".")
                and p.parent.name != SHARED_VECTORS_DIR
            }
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
                return Resolved(
                    task, model, self.directory, "directory", f"directory: {display_path(self.directory)}", None
                )
            path = self.directory / task / model
            if not path.is_dir():
                raise CheckpointError(f"checkpoint directory {path} does not exist")
            within(path, self.directory)
            root = self.directory if (self.directory / MANIFEST).is_file() else None
            return Resolved(task, model, path, "directory", f"directory: {display_path(path)}", root)
        tried = []
        if self.prefer != "bundled":
            snapshot = self.snapshot()
            if snapshot is not None and (snapshot / task / model).is_dir():
                return Resolved(
                    task, model, within(snapshot / task / model, snapshot), "hub", f"hub: {self.hub.label}", snapshot
                )
            if self.hub.repo_id:
                tried.append(f"Hub {self.hub.label} ({self.hub_status.get('reason') or 'not in the repo'})")
        if self.prefer != "hub":
            path = self.bundled / task / model
            if path.is_dir():
                return Resolved(
                    task, model, within(path, self.bundled), "bundled", f"bundled: {display_path(path)}", self.bundled
                )
            tried.append(f"bundled {path} (missing)")
        raise CheckpointError(f"no checkpoint for {task}/{model}: tried {'; '.join(tried)}")

    def load(self, task: str, model: str) -> tuple[Checkpoint, Resolved]:
        resolved = self.resolve(task, model)
        if resolved.root is not None:
            verify_against_manifest(resolved.root, task, model)
        ckpt = load_checkpoint(resolved.path)
        if (ckpt.meta.get("task"), ckpt.meta.get("model")) != (task, model):
            raise CheckpointError(
                f"{resolved.path / CONFIG} is a {ckpt.meta.get('model')}/{ckpt.meta.get('task')} "
                f"checkpoint, but it sits in {task}/{model}/"
            )
        log.info("checkpoint %s/%s <- %s", task, model, resolved.source)
        return ckpt, resolved


def _load_failure(where, err: Exception) -> str:
    """The message for a checkpoint that did not load; a failure other than CheckpointError or ValueError (a
    torch error while building, MemoryError) is a surprise, so its trace goes to the log."""
    if isinstance(err, (CheckpointError, ValueError)):
        log.error("skipping checkpoint %s: %s", where, err)
        return str(err)
    log.error("skipping checkpoint %s", where, exc_info=err)
    return f"{type(err).__name__}: {err}"[:300]


def load_all(
    root: str | Path | None = None,
    prefer: str = "auto",
    config: str | Path | None = None,
    bundled: str | Path | None = None,
) -> tuple[dict, dict, dict, dict]:
    """Load every checkpoint the sources hold: (checkpoints, sources, errors, hub_status), keyed by
    (task, model) except `errors`, which maps a checkpoint path (or task/model) to its message."""
    hub = read_hub_config(config or HUB_CONFIG) if root is None and prefer != "bundled" else HubConfig()
    resolver = Resolver(Path(root) if root is not None else None, prefer, hub, Path(bundled) if bundled else BUNDLED)
    checkpoints, sources, errors = {}, {}, {}
    if resolver.directory is not None and (resolver.directory / CONFIG).is_file():  # a lone checkpoint folder
        try:
            ckpt = load_checkpoint(resolver.directory)
        except Exception as err:  # reported by name, like any broken checkpoint
            return {}, {}, {str(resolver.directory): _load_failure(resolver.directory, err)}, resolver.hub_status
        key = (ckpt.meta.get("task", ""), ckpt.meta.get("model", ""))
        log.info("checkpoint %s/%s <- directory: %s", *key, display_path(resolver.directory))
        return {key: ckpt}, {key: f"directory: {display_path(resolver.directory)}"}, {}, resolver.hub_status
    if resolver.directory is not None and not resolver.directory.is_dir():
        message = f"checkpoint directory {resolver.directory} does not exist"
        log.error("%s", message)
        return {}, {}, {str(resolver.directory): message}, resolver.hub_status
    for task, model in resolver.pairs():
        try:
            ckpt, resolved = resolver.load(task, model)
        except Exception as err:  # one broken checkpoint is named; the others still serve
            errors[f"{task}/{model}"] = _load_failure(f"{task}/{model}", err)
            continue
        key = (ckpt.meta.get("task", task), ckpt.meta.get("model", model))
        checkpoints[key], sources[key] = ckpt, resolved.source
    if prefer == "hub" and resolver.hub_status.get("state") in ("unavailable", "skipped") and not checkpoints:
        errors[f"hub: {hub.label}" if hub.repo_id else "hub"] = resolver.hub_status["reason"]
    return checkpoints, sources, errors, resolver.hub_status


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    parser = argparse.ArgumentParser(prog="python -m core.checkpoints.hub", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("sources", help="where every checkpoint would be loaded from")
    show.add_argument("--checkpoints", default=None, help="an explicit directory (overrides Hub and bundled)")
    show.add_argument(
        "--prefer",
        default="auto",
        choices=["auto", "hub", "bundled"],
        help="where a checkpoint comes from: auto, the Hub or the bundled folder",
    )
    show.add_argument(
        "--config", default=str(HUB_CONFIG), help="the pinned Hub repository's settings (configs/hub.toml)"
    )
    show.add_argument("--bundled", default=str(BUNDLED), help="the bundled checkpoints folder")
    args = parser.parse_args(argv)
    try:
        checkpoints, sources, errors, status = load_all(args.checkpoints, args.prefer, args.config, args.bundled)
        print(f"Hub: {status.get('state')} ({status.get('seconds', 0):.2f} s) {status.get('reason', '')}".rstrip())
        for (task, model), source in sorted(sources.items()):
            print(f"  {task}/{model}: {source}")
        for where, message in errors.items():
            print(f"  error {where}: {message}")
        return 0 if not errors else 1
    except Exception as err:  # every failure, Hub errors (HTTP, auth) included, as one line
        print(f"error: {error_line(err)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
