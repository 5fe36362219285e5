"""Where the models users train live: Settings.user_models ($LAB_USER_MODELS, default `user_models/`, not in git).

    user_models/
      checkpoints/<task>/<model>/   each trained model, laid out as checkpoints/ (core.checkpoints.checkpoint format)
      jobs/<job id>/                one training job (service.jobs): job.json, the uploaded file, run/, worker.log

    python -m service.user_models --model dcnn --data reviews.csv [core.training.train's flags]

trains on your own file from the command line (core.training.train) and installs the best checkpoint here, where
the app serves it to everybody. A checkpoint is installed whole or not at all: copied beside its place, then
renamed into it.
"""

import json
import shutil
import sys
from pathlib import Path

from core.checkpoints.checkpoint import CONFIG, CheckpointError, _read_json
from core.training.train import main as train_main
from core.training.train import parse_args
from service.owners import PUBLIC
from service.settings import Settings

OWNER_FILE = "owner.json"  # beside a visitor's model: its owner (service.owners) and the name people see


def user_models_dir() -> Path:
    """The folder of the settings, for a caller that names none (the command line, a tool); the app passes its own."""
    return Settings.load().user_models


def install_checkpoint(best: str | Path, root: str | Path | None = None, owner: str = PUBLIC, title: str = "") -> Path:
    """Copy a trained run's best checkpoint to <root>/checkpoints/<task>/<model>/, replacing the one there when it
    is the same owner's (CheckpointError when another owner's model is there); a visitor's model carries its owner
    and title (OWNER_FILE), installed with it in one rename."""
    best = Path(best)
    config = _read_json(best / CONFIG)
    task, model = config.get("task"), config.get("model")
    if not isinstance(task, str) or not isinstance(model, str):
        raise CheckpointError(f"{best / CONFIG} names no task and model")
    target = Path(root or user_models_dir()) / "checkpoints" / task / model
    if (target / CONFIG).is_file() and checkpoint_owner(target)[0] != owner:
        raise CheckpointError(f"{task}/{model} belongs to another owner: nothing was installed")
    staging, old = target.with_name(f".{model}.new"), target.with_name(f".{model}.old")
    for leftover in (staging, old):
        shutil.rmtree(leftover, ignore_errors=True)
    shutil.copytree(best, staging)
    if owner:
        found = json.dumps({"owner": owner, "title": title}, ensure_ascii=False)
        (staging / OWNER_FILE).write_text(found, encoding="utf-8")
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    return target


def installed_checkpoints(root: str | Path | None = None) -> list[Path]:
    """Every installed user checkpoint folder (one holding a config.json), sorted."""
    folder = Path(root or user_models_dir()) / "checkpoints"
    return sorted(p.parent for p in folder.glob(f"*/*/{CONFIG}") if not p.parent.name.startswith("."))


def checkpoint_owner(folder: str | Path) -> tuple[str, str]:
    """(owner, title) of an installed checkpoint; (PUBLIC, "") for one without OWNER_FILE."""
    path = Path(folder) / OWNER_FILE
    if not path.is_file():
        return PUBLIC, ""
    found = json.loads(path.read_text(encoding="utf-8"))
    return str(found["owner"]), str(found.get("title", ""))


def main(argv: list[str] | None = None) -> int:
    """Train on a file (`--data`, with core.training.train's flags), then install the best checkpoint."""
    argv = sys.argv[1:] if argv is None else argv
    if not any(a == "--data" or a.startswith("--data=") for a in argv):
        print("error: --data names no file: only a model trained on your own file is installed", file=sys.stderr)
        return 2
    code = train_main(argv)
    if code != 0:
        return code
    cfg = parse_args(argv)
    installed = install_checkpoint(cfg.output_dir() / "best")
    print(json.dumps({"task": cfg.task, "installed": str(installed)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
