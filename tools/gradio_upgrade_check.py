"""Would another Gradio 6.x break the internals web/ uses? Installs that Gradio (the newest 6.x on the index by
default) into a folder of its own, runs the tests that guard each internal with it in front of the pinned one, and
says which internals broke. Not in CI: it needs the index. `make gradio-upgrade-check [GRADIO=6.x.y]`."""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from core.data import PROJECT_ROOT

# each internal web/ uses (docs/performance.md, "Gradio's internals") -> the tests that fail when it breaks
INTERNALS = {
    "gradio.routes login_check, matched by name; gradio.queueing run_sync": "tests/app/test_thread_hops.py",
    "gradio.state_holder StateHolder (its class swapped), SessionState": "tests/app/test_sessions.py",
    "the queue of Blocks (_queue): event_ids_to_events, active_jobs, EventQueue.queue": "tests/app/test_fair_share.py",
    "gradio.helpers special_args, gradio.utils error_payload, the functions of Blocks (fns)": "tests/app/test_rest.py",
    "gradio.blocks Block, gradio.context Context, postprocess outside Gradio": "tests/app/test_page_load.py",
    "Api components, Blocks.validate_inputs, gradio.utils function params": "tests/app/test_api_input.py",
    "the queue's sleep_when_free, gradio.utils get_upload_folder, gradio.component_meta create_or_modify_pyi": (
        "tests/app/test_gradio_internals.py"
    ),
}


def newest_6x(python: str) -> str:
    """The newest Gradio 6.x release the index offers."""
    listed = subprocess.run(
        [python, "-m", "pip", "index", "versions", "gradio"], capture_output=True, text=True, check=True
    ).stdout
    versions = re.search(r"Available versions: (.+)", listed)
    sixes = [v for v in (versions.group(1).split(", ") if versions else []) if v.startswith("6.")]
    if not sixes:
        raise SystemExit("the index lists no Gradio 6.x")
    return sixes[0]


def install(python: str, version: str, folder: Path) -> None:
    """That Gradio and the packages it needs, into `folder` (put in front of the project's on PYTHONPATH)."""
    subprocess.run([python, "-m", "pip", "install", "-q", "--target", str(folder), f"gradio=={version}"], check=True)


def run_guards(python: str, folder: Path) -> dict[str, list[str]]:
    """{test file: the names of its failed tests} with `folder`'s Gradio first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]).rstrip(":")}
    env["HF_HUB_OFFLINE"] = "1"
    files = sorted(set(INTERNALS.values()))
    result = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", "-rfE", *files],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    failed: dict[str, list[str]] = {f: [] for f in files}
    for line in result.stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):  # "ERROR tests/app/x.py - ...": the file did not even import
            test = line.split()[1]
            failed.setdefault(test.split("::")[0], []).append(test.split("::", 1)[-1] if "::" in test else line)
    print(result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr[-2000:])
    reasons = dict.fromkeys(line[4:].strip() for line in result.stdout.splitlines() if re.match(r"E +\w+Error", line))
    for reason in list(reasons)[:10]:  # each distinct error once: the internal a module could not import, say
        print("  why:", reason)
    return failed


def report(version: str, pinned: str, failed: dict[str, list[str]]) -> str:
    lines = [f"Gradio {version} (pinned: {pinned}); the internals web/ uses and their guards:"]
    for internal, tests in INTERNALS.items():
        broken = failed.get(tests, [])
        state = "ok" if not broken else f"BROKEN ({len(broken)} failed: {', '.join(broken[:3])})"
        lines.append(f"- {internal} [{tests}]: {state}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--version", default="", help="the Gradio release to try (default: the newest 6.x)")
    parser.add_argument("--folder", type=Path, default=None, help="where to install it (default: a temp folder)")
    args = parser.parse_args(argv)
    import gradio

    version = args.version or newest_6x(sys.executable)
    if version == gradio.__version__:
        print(f"the newest Gradio 6.x is {version}, the pinned one: its guards are the test suite's")
    folder = args.folder or Path(tempfile.mkdtemp(prefix=f"gradio-{version}-"))
    install(sys.executable, version, folder)
    failed = run_guards(sys.executable, folder)
    print(report(version, gradio.__version__, failed))
    return 1 if any(failed.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
