"""Does the Space boot from a clean install? `make space-check` (= python -m tools.release.space_check):

1. copies what the README's `hf upload` sends (the working tree without .venv, runs, .cache, .gradio,
   caches and .git) into a temporary folder;
2. resolves requirements.txt with `pip install --dry-run --report` (no CUDA package may be listed), then
   creates a fresh venv and installs it, from the public index and the CPU torch index the file names: no
   pip configuration file, no local wheels, no cache. Where download.pytorch.org cannot be reached (this
   build machine reaches package registries only), the file's index line is replaced by a folder holding
   that index's own wheel, torch-2.13.0+cpu (`--torch-wheel`, found in PIP_FIND_LINKS by default); the
   result says which;
3. starts `python app.py` offline (HF_HUB_OFFLINE=1, a free port) and waits until /predict answers over
   HTTP (gradio_client, from that venv);
4. stops it and writes reports/space_check.json: the times, the installed packages, and that none of them is a
   CUDA package.
`--venv DIR` installs into DIR and keeps it; run again with the same DIR, only the copy and the boot are
checked (the install's record is kept in DIR/space-check.json and repeated in the result).
Exit status 0 only when every step worked and no CUDA package was installed.
"""

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from core.data import PROJECT_ROOT
from tools.processes import free_port, stop_process

OUT = PROJECT_ROOT / "reports" / "space_check.json"
# what `hf upload` leaves out in the README's publish steps, plus git's own folder
EXCLUDE = (
    ".venv",
    "runs",
    ".cache",
    ".gradio",
    "__pycache__",
    ".git",
    ".pytest_cache",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
)
CUDA_MARKERS = ("nvidia-", "cuda", "triton", "cudnn", "cublas", "nccl")
TORCH_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
PROBE = """
import sys
from gradio_client import Client
answer = Client(sys.argv[1], verbose=False).predict(
    "It is not a bad film.", "dcnn", "sst5", "auto", api_name="/predict"
)
print(answer["label"], answer["model"])
"""


def cuda_packages(names: list[str]) -> list[str]:
    return sorted(n for n in names if any(m in n.lower() for m in CUDA_MARKERS))


def reachable(host: str, port: int = 443, timeout: float = 5) -> bool:
    try:
        socket.create_connection((host, port), timeout=timeout).close()
        return True
    except OSError:
        return False


def find_torch_wheel() -> Path | None:
    for folder in os.environ.get("PIP_FIND_LINKS", "").split():
        for wheel in sorted(Path(folder).glob("torch-*+cpu-*.whl")):
            return wheel
    return None


def requirements_for_here(space: Path, wheels: Path, torch_wheel: Path | None) -> tuple[Path, str]:
    """(the requirements file to install, where torch comes from): requirements.txt itself when the CPU
    index answers, else a copy whose index line points at a folder holding that index's wheel."""
    original = space / "requirements.txt"
    text = original.read_text(encoding="utf-8")
    if TORCH_INDEX not in text:
        raise RuntimeError(f"requirements.txt does not name the CPU torch index ({TORCH_INDEX})")
    if reachable("download.pytorch.org"):
        return original, "https://download.pytorch.org/whl/cpu"
    if torch_wheel is None or not torch_wheel.is_file():
        raise RuntimeError("download.pytorch.org is unreachable and no torch CPU wheel was given (--torch-wheel)")
    wheels.mkdir()
    shutil.copy(torch_wheel, wheels / torch_wheel.name)
    replaced = space / "requirements.space-check.txt"
    replaced.write_text(text.replace(TORCH_INDEX, f"--find-links {wheels}"), encoding="utf-8")
    return replaced, f"{torch_wheel.name} copied from {torch_wheel.parent} (download.pytorch.org unreachable here)"


def pip_env() -> dict:
    """pip's defaults: no configuration file, no find-links or extra index from the environment; only the
    certificate settings of this machine are kept."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k in ("PIP_CERT", "PIP_DEFAULT_TIMEOUT")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def copy_space(dest: Path) -> None:
    shutil.copytree(PROJECT_ROOT, dest, ignore=shutil.ignore_patterns(*EXCLUDE, "*.pyc"), symlinks=False)


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kwargs)


def wait_for_app(python: Path, url: str, proc: subprocess.Popen, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"app.py exited with status {proc.returncode} before answering")
        probe = subprocess.run([str(python), "-c", PROBE, url], text=True, capture_output=True, timeout=120)
        if probe.returncode == 0:
            return probe.stdout.strip()
        last = (probe.stderr.strip().splitlines() or [""])[-1]
        time.sleep(2)
    raise TimeoutError(f"/predict did not answer within {timeout:.0f} s (last error: {last})")


def space_check(workdir: Path, torch_wheel: Path | None, venv: Path | None = None, boot_timeout: float = 300) -> dict:
    result: dict = {
        "command": "make space-check",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
    }
    space = workdir / "space"
    copy_space(space)
    venv = venv or workdir / "venv"
    python = venv / "bin" / "python"
    env = pip_env()
    if (venv / "space-check.json").is_file():  # a venv this command installed before: boot only
        result["install"] = json.loads((venv / "space-check.json").read_text(encoding="utf-8"))
    else:
        requirements, torch_from = requirements_for_here(space, workdir / "wheels", torch_wheel)
        run([sys.executable, "-m", "venv", str(venv)])
        pip = [str(python), "-m", "pip", "install", "--no-cache-dir", "-q", "-r", str(requirements)]
        started = time.monotonic()
        run([*pip, "--dry-run", "--ignore-installed", "--report", str(workdir / "dry-run.json")], cwd=space, env=env)
        planned = [item["metadata"]["name"] for item in json.loads((workdir / "dry-run.json").read_text())["install"]]
        dry_run = {
            "seconds": round(time.monotonic() - started, 1),
            "packages": len(planned),
            "cuda_packages": cuda_packages(planned),
        }
        started = time.monotonic()
        run(pip, cwd=space, env=env)
        result["install"] = {
            "date": result["date"],
            "torch_from": torch_from,
            "dry_run": dry_run,
            "install_seconds": round(time.monotonic() - started, 1),
        }
        (venv / "space-check.json").write_text(json.dumps(result["install"], indent=2) + "\n", encoding="utf-8")
    frozen = run([str(python), "-m", "pip", "list", "--format=json"], env=env).stdout
    packages = {p["name"]: p["version"] for p in json.loads(frozen)}
    result["packages"] = len(packages)
    result["torch"] = packages.get("torch")
    result["cuda_packages"] = cuda_packages(list(packages))
    result["site_packages_mb"] = round(sum(f.stat().st_size for f in venv.rglob("*") if f.is_file()) / 1e6)
    port = free_port()
    app_env = {**env, "HF_HUB_OFFLINE": "1", "GRADIO_SERVER_PORT": str(port), "GRADIO_SERVER_NAME": "127.0.0.1"}
    log_path = workdir / "app.log"
    with open(log_path, "w") as log:
        booted = time.monotonic()
        proc = subprocess.Popen([str(python), "app.py"], cwd=space, env=app_env, stdout=log, stderr=subprocess.STDOUT)
        try:
            result["answer"] = wait_for_app(python, f"http://127.0.0.1:{port}/", proc, boot_timeout)
            result["boot_to_answer_seconds"] = round(time.monotonic() - booted, 1)
        finally:
            stop_process(proc, timeout=20)
    result["app_log_tail"] = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-12:]
    result["ok"] = not result["cuda_packages"] and not result["install"]["dry_run"]["cuda_packages"]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.release.space_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(OUT), help="the JSON file to write")
    parser.add_argument("--keep", action="store_true", help="keep the temporary venv and copy (for a look)")
    parser.add_argument(
        "--venv",
        type=Path,
        default=None,
        help="install into this venv and keep it; given again, only the boot is re-checked in it",
    )
    parser.add_argument(
        "--torch-wheel",
        type=Path,
        default=find_torch_wheel(),
        help="the CPU index's torch wheel, used only when download.pytorch.org is unreachable",
    )
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="space-check-"))
    try:
        result = space_check(workdir, args.torch_wheel, args.venv)
    except (subprocess.CalledProcessError, RuntimeError, TimeoutError) as err:
        detail = getattr(err, "stderr", "") or ""
        print(f"error: {err}\n{detail[-3000:]}", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "app_log_tail"}, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
