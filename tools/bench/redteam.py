"""`make redteam`: the attacks of a hostile visitor against a live app, each reported held or failed with its
figure. Cases are the `case_<name>(url) -> (held, figure)` functions of the tools/bench/redteam_*.py modules.

    python -m tools.bench.redteam             # starts app.py on the bundled checkpoints, runs every case
    python -m tools.bench.redteam --url http://127.0.0.1:7860/ --quick   # against a running app, the quick cases only

A started app gets its own user-models folder and upload cache, and the Space's defaults for every budget; with
--sign-in required it behaves as on a Space, where training needs a Hugging Face sign-in. It trusts one proxy, as a
Space's app does (LAB_FORWARDED_HOPS=1): a request without X-Forwarded-For is its peer's (127.0.0.1), and a case
speaks from another network address with the header (tools/bench/redteam_turns.py)."""

import argparse
import importlib
import os
import pkgutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import tools.bench
from core.data import PROJECT_ROOT
from tools.bench.loadtest import start_app, wait_until_up
from tools.processes import free_port, stop_process

Case = Callable[[str], tuple[bool, str]]


def cases(quick: bool = False) -> dict[str, Case]:
    """Every case of the tools/bench/redteam_*.py modules by name (with `quick`, those each module lists in QUICK)."""
    found = {}
    for info in pkgutil.iter_modules(tools.bench.__path__):
        if info.name.startswith("redteam_"):
            module = importlib.import_module(f"tools.bench.{info.name}")
            for name in dir(module):
                short = name.removeprefix("case_")
                if name.startswith("case_") and (not quick or short in getattr(module, "QUICK", ())):
                    found[short] = getattr(module, name)
    return found


def run(url: str, chosen: dict[str, Case]) -> list[tuple[str, bool, str, float]]:
    """(name, held, figure, seconds) per case; a case that raises has failed, with the error as its figure."""
    rows = []
    for name, case in chosen.items():
        start = time.monotonic()
        try:
            held, figure = case(url)
        except Exception as err:  # the attack broke something the case did not expect: reported, not hidden
            held, figure = False, f"{type(err).__name__}: {err}"[:200]
        rows.append((name, held, figure, time.monotonic() - start))
        print(f"{'held  ' if held else 'FAILED'} {name:<22} {figure}  ({rows[-1][3]:.0f} s)", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.redteam", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running app (default: start app.py on the bundled checkpoints)")
    parser.add_argument("--quick", action="store_true", help="only the quick cases (those the tests run too)")
    parser.add_argument("--only", nargs="*", default=None, help="case names to run")
    parser.add_argument(
        "--sign-in",
        choices=("required", "optional"),
        default="optional",
        help="the app's sign-in policy: required as on a Space, or optional",
    )
    parser.add_argument(
        "--checkpoints", default=str(PROJECT_ROOT / "checkpoints"), help="the checkpoints folder of the app it starts"
    )
    args = parser.parse_args(argv)
    chosen = {k: v for k, v in cases(args.quick).items() if args.only is None or k in args.only}
    if args.url:
        rows = run(args.url.rstrip("/") + "/", chosen)
    else:
        work = Path(tempfile.mkdtemp(prefix="redteam-app-"))
        os.environ.update(
            LAB_USER_MODELS=str(work / "user_models"),
            GRADIO_TEMP_DIR=str(work / "gradio"),
            LAB_SIGN_IN=args.sign_in,
            LAB_FORWARDED_HOPS="1",
            GRADIO_MCP_SERVER="true",
        )
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        with open(work / "app.log", "w") as log:
            proc = start_app(Path(args.checkpoints), port, log)
            try:
                wait_until_up(url, proc, 180, work / "app.log")
                rows = run(url, chosen)
            finally:
                stop_process(proc)
        print(f"app log: {work / 'app.log'}")
    failed = [name for name, held, _, _ in rows if not held]
    print(f"{len(rows) - len(failed)} of {len(rows)} held" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
