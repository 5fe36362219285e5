"""The commit a result was produced from, read from the .git directory itself: nothing under core/ starts
a process. HEAD names a branch (`ref: refs/heads/x`) or holds a commit (detached); a branch is a loose
file under refs/ or a line of packed-refs. In a `git worktree` checkout `.git` is a file pointing at the
worktree's own git directory, which keeps HEAD, and whose `commondir` file points at the repository's
shared one, which keeps the branches.

There is no "+dirty" flag: telling whether tracked files changed means comparing them with the index and
the index with HEAD's tree, which lives in zlib-compressed, delta-packed objects; that is git's own work.
"""

from pathlib import Path

from core.data import PROJECT_ROOT

SHORT = 7  # hex digits, as `git rev-parse --short` prints for a repository of this size


def git_dir(root: Path) -> Path | None:
    """The git directory of the checkout at `root`: root/.git, or where a worktree's .git file points."""
    dot_git = root / ".git"
    if dot_git.is_file():
        pointer = dot_git.read_text(encoding="utf-8").strip()
        if not pointer.startswith("gitdir:"):
            return None
        target = Path(pointer.removeprefix("gitdir:").strip())
        return target if target.is_absolute() else root / target
    return dot_git if dot_git.is_dir() else None


def _resolve_ref(ref: str, gitdirs: list[Path]) -> str:
    """The commit a branch points at: its loose ref file, else its packed-refs line; '' when neither."""
    for directory in gitdirs:
        loose = directory / ref
        if loose.is_file():
            return loose.read_text(encoding="utf-8").strip()
    for directory in gitdirs:
        packed = directory / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                commit, _, name = line.partition(" ")
                if name == ref:  # comment ('#') and peeled-tag ('^') lines never match a ref name
                    return commit
    return ""


def git_commit(root: Path = PROJECT_ROOT) -> str:
    """The short commit checked out at `root`, or '' when `root` is not a git checkout."""
    directory = git_dir(root)
    if directory is None or not (directory / "HEAD").is_file():
        return ""
    head = (directory / "HEAD").read_text(encoding="utf-8").strip()
    if not head.startswith("ref:"):
        return head[:SHORT]  # detached HEAD: the commit itself
    gitdirs = [directory]
    if (directory / "commondir").is_file():  # a worktree: its branches live in the shared git directory
        gitdirs.append(directory / (directory / "commondir").read_text(encoding="utf-8").strip())
    return _resolve_ref(head.removeprefix("ref:").strip(), gitdirs)[:SHORT]
