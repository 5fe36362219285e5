"""The commit the working tree is at, recorded next to measurements and bundled checkpoints: core's
commit (read from .git, no subprocess) plus "+dirty" when tracked files have uncommitted changes, which
only git itself can tell."""

import subprocess

from core.data import PROJECT_ROOT
from core.gitinfo import git_commit as head_commit


def git_commit() -> str:
    """The short commit, with "+dirty" when tracked files have uncommitted changes."""
    commit = head_commit()
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        status = ""
    return commit + ("+dirty" if commit and status else "")
