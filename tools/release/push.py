"""Publish the bundled checkpoints as a Hugging Face Hub model repo, with their cards.

    python -m tools.release.push --repo user/name --dry-run # write the exact folder that would be uploaded
    python -m tools.release.push --repo user/name --pin     # upload, then pin the new commit in configs/hub.toml

The repo gets the layout of `checkpoints/` (`<task>/<model>/...`, `manifest.json`) and one README.md
card for the whole repo; every checkpoint is verified against the manifest and loaded before upload.
The lab reads it back through core.checkpoints.hub once `configs/hub.toml` pins the commit. The token (HF_TOKEN,
or `hf auth login`) is left to huggingface_hub and never printed.
"""

import argparse
import logging
import re
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

from core.checkpoints.checkpoint import CheckpointError, atomic_write_text, load_checkpoint
from core.checkpoints.hub import BUNDLED, HUB_CONFIG, HubConfig, display_path, error_line, hub_offline
from core.checkpoints.manifest import (
    CARD,
    MANIFEST,
    check_repo_id,
    check_revision,
    manifest_pairs,
    read_manifest,
    verify_against_manifest,
)
from core.data import PROJECT_ROOT
from tools.release.cards import render_repo_card


def stage(checkpoints: Path, out: Path, repo_id: str) -> list[str]:
    """Write into `out` exactly what `push` uploads: every checkpoint file the manifest lists (each one
    verified and loaded first), manifest.json, and a README.md card for the whole repo."""
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
            raise ValueError(f'{config_path}: no `{key} = "..."` line to update')
    HubConfig(**tomllib.loads(text).get("hub", {}))  # still valid TOML and a valid config
    atomic_write_text(config_path, text)


def push(
    repo_id: str,
    checkpoints: Path,
    out: Path | None,
    dry_run: bool,
    private: bool = False,
    tag: str = "",
    pin: bool = False,
    message: str = "",
) -> int:
    if dry_run:
        out = out or PROJECT_ROOT / ".cache" / "hub-push" / repo_id.replace("/", "--")
        listed = stage(checkpoints, out, repo_id)
        size = sum((out / rel).stat().st_size for rel in listed)
        print(
            f"dry run: {len(listed)} files ({size / 1e6:.1f} MB) would be uploaded to https://huggingface.co/{repo_id}"
        )
        print(f"the exact folder: {out}")
        for rel in listed:
            print(f"  {rel}")
        return 0

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
        commit = api.upload_folder(
            repo_id=repo_id,
            folder_path=folder,
            repo_type="model",
            commit_message=message or f"Checkpoints: {len(listed)} files from tools.release.push",
            delete_patterns=["*/*/*", MANIFEST],
        )  # stale checkpoints go; other files stay
    print(f"uploaded {len(listed)} files: {commit.commit_url}")
    print(f"commit: {commit.oid}")
    if tag:
        api.create_tag(repo_id, tag=tag, revision=commit.oid, exist_ok=True)
        print(f"tagged {tag}")
    if pin:
        pin_revision(HUB_CONFIG, repo_id, commit.oid)
        print(f"pinned {repo_id}@{commit.oid} in {display_path(HUB_CONFIG)}")
    else:
        print(f'to use it, set in {display_path(HUB_CONFIG)}:\n  repo_id = "{repo_id}"\n  revision = "{commit.oid}"')
    files = ",".join(rel for rel in listed if rel != CARD)
    print(
        "Space front matter (optional, downloads at build time):\n"
        f"preload_from_hub:\n  - {repo_id} {files} {commit.oid}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    parser = argparse.ArgumentParser(prog="python -m tools.release.push", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="the Hub model repo, owner/name")
    parser.add_argument("--dry-run", action="store_true", help="only write the exact folder that would be uploaded")
    parser.add_argument(
        "--out", default=None, help="where the dry run writes (default .cache/hub-push/<owner>--<name>)"
    )
    parser.add_argument("--checkpoints", default=str(BUNDLED), help="the checkpoints folder to upload")
    parser.add_argument("--private", action="store_true", help="create the repo private (when it does not exist)")
    parser.add_argument("--tag", default="", help="also tag the new commit, e.g. v1")
    parser.add_argument("--pin", action="store_true", help="write repo_id and the new commit into configs/hub.toml")
    parser.add_argument("--message", default="", help="commit message")
    args = parser.parse_args(argv)
    try:
        return push(
            check_repo_id(args.repo),
            Path(args.checkpoints),
            Path(args.out) if args.out else None,
            args.dry_run,
            args.private,
            args.tag and check_revision(args.tag),
            args.pin,
            args.message,
        )
    except Exception as err:  # every failure, Hub errors (HTTP, auth) included, as one line
        print(f"error: {error_line(err)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
