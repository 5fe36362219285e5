"""The commit the working tree is at, recorded next to measurements and bundled checkpoints."""

import subprocess

from core.data import PROJECT_ROOT


def git(*args: str) -> str:
    """`git ARGS` in the project, its stdout stripped; '' when git is missing or fails."""
    try:
        return subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def git_commit() -> str:
    """The short commit, with "+dirty" when tracked files have uncommitted changes."""
    commit = git("rev-parse", "--short", "HEAD")
    return commit + ("+dirty" if commit and git("status", "--porcelain", "--untracked-files=no") else "")
