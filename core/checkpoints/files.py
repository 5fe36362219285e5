"""File integrity: the sha256 that manifests, checkpoints and the shared vectors set record of each file; and
JSON files read once per version."""

import functools
import hashlib
import json
from pathlib import Path


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_json(path: Path) -> dict:
    """The JSON file at `path`, parsed again only once it changes (its mtime): for files read on every page load.
    The dict is shared, not to be changed. OSError or ValueError as reading and json.loads raise them."""
    return _parsed(Path(path), Path(path).stat().st_mtime_ns)


@functools.lru_cache(maxsize=512)
def _parsed(path: Path, mtime_ns: int) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
