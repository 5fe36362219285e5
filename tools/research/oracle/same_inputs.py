"""Same inputs: the authors' trainer and ours on the files of tools.research.oracle.files, their README's settings.

    python -m tools.research.oracle.same_inputs authors [--model dcnn] --task T [--phrases] --seed S [--max-epochs N] \
        --out DIR
    python -m tools.research.oracle.same_inputs ours    [--model dcnn] --task T [--phrases] --seed S [--max-epochs N] \
        --out DIR
    python -m tools.research.oracle.same_inputs report  DIR... [--json reports/oracle.json]

README settings (theirs, the documented run): --depth 3 --order 3 --decay 0.5 --hidden_dim 200
--dropout_rate 0.3 --l2_reg 0.00001 --act relu --learning adagrad --learning_rate 0.01, batch 15 (their
default), floatX=float64, one dev evaluation per epoch. Ours gets the same: l2 2e-5 (their penalty
l2_reg·Σp² has the gradient 2·l2_reg·p; our weight decay adds l2·p), batch 15, one evaluation per epoch.
With --model dcnn the authors' side is Godin's trainDCNN.py (tools.research.oracle.dcnn: our examples in his file
format, his README's settings, float32 as on his GPU) and ours is our DCNN with its recipe; docs/oracle.md §6.3
compares the two protocols line by line.
Each run writes DIR/result.json: the best dev accuracy and the test accuracy of that model, in %.
"""

import argparse
import json
import os
import re
import shlex
import signal
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

from core.data import load_task
from tools.research.oracle.files import TASK_FILES, default_dir

README = {
    "depth": 3,
    "order": 3,
    "decay": 0.5,
    "hidden_dim": 200,
    "dropout_rate": 0.3,
    "l2_reg": 1e-5,
    "act": "relu",
    "learning": "adagrad",
    "learning_rate": 0.01,
    "batch": 15,
    "cutoff": 0,
    "loss": "nll",
    "eval_period": -1,
}


def input_files(inputs: Path, task: str, phrases: bool) -> dict[str, str]:
    name = TASK_FILES[task]
    train = inputs / f"stsa.{name}.{'phrases.train' if phrases else 'train'}"
    return {"train": str(train), "dev": str(inputs / f"stsa.{name}.dev"), "test": str(inputs / f"stsa.{name}.test")}


def parse_authors_log(text: str) -> dict:
    """Best dev and the test of the model saved there (their code saves on a strictly better dev; it also
    prints test on a tie, which is not the saved model), per-epoch dev, from their log."""
    devs: list[float] = []
    ends: list[float] = []
    best, test, pending, epoch_end = -1.0, None, False, False
    label, repeated = "", False
    for line in text.splitlines():
        if m := re.match(r"Epoch (\d+\.\d)", line):
            # "Epoch k.0" is printed at an epoch's last batch, and also by a mid-epoch evaluation in its last
            # 5% (%.1f rounds it up): the later of two equal labels is the epoch's end
            epoch_end, repeated, label = m.group(1).endswith(".0"), m.group(1) == label, m.group(1)
        elif m := re.search(r"dev accuracy=([\d.]+)", line):
            dev = float(m.group(1))
            devs.append(dev)
            if epoch_end and repeated and ends:
                ends[-1] = dev
            elif epoch_end:
                ends.append(dev)
            pending = dev > best
            best = max(best, dev)
        elif (m := re.search(r"test accuracy=([\d.]+)", line)) and pending:
            test, pending = float(m.group(1)), False
    return {
        "dev": round(100 * best, 2) if devs else None,
        "test": round(100 * test, 2) if test is not None else None,
        "dev_curve": [round(100 * d, 2) for d in devs],
        "epoch_end_dev": [round(100 * d, 2) for d in ends],
        "epochs": len(ends),
        "nan": re.search(r"loss=nan", text) is not None,  # their training loss went to NaN
    }


class TimeUp(Exception):
    pass


def parse_godin_log(text: str) -> dict:
    """Godin's log prints only a better dev accuracy, each followed by the test accuracy at it (a run stopped
    between the two keeps the one before)."""
    devs = [float(m) for m in re.findall(r"validation accuracy: ([\d.]+)%", text)]
    tests = [float(m) for m in re.findall(r"Test accuracy: ([\d.]+)%", text)]
    return {
        "dev": round(devs[len(tests) - 1], 2) if tests else None,
        "test": round(tests[-1], 2) if tests else None,
        "dev_curve": [round(d, 2) for d in devs],  # the improvements, not every evaluation
        "epochs": len(re.findall(r"Epoch \d+ finished", text)),
        "nan": re.search(r"Train loss, nan", text) is not None,  # his training loss went to NaN
    }


FLOATX = {"tensor_cnn": "float64", "dcnn": "float32"}  # their READMEs: float64 on a CPU; a GPU
EVAL_PERIOD = {"dcnn": 10}  # Godin's dev evaluation every 10 batches (his --valid_freq)
PARSE_AUTHORS_LOG = {"tensor_cnn": parse_authors_log, "dcnn": parse_godin_log}


def run_authors(args) -> dict:
    if args.model == "dcnn":
        from tools.research.oracle.dcnn import train_godin, write_godin_files

        inputs = Path(args.inputs) / f"godin-{args.task}{'-phrases' if args.phrases else ''}"
        write_godin_files(inputs, load_task(args.task, phrases=args.phrases))
        train = lambda: train_godin(inputs, args.seed, args.max_epochs, args.floatx)
    else:
        from tools.research.oracle.shim import load_authors

        authors = load_authors(args.oracle_dir, stable_loss=not args.naive_loss, floatx=args.floatx)
        settings = {
            **README,
            **input_files(Path(args.inputs), args.task, args.phrases),
            "embedding": str(Path(args.inputs) / "vectors.txt.gz"),
            "seed": args.seed,
            "max_epochs": args.max_epochs,
            "eval_period": args.eval_period,
            "model": "",
        }
        train = lambda: authors.main(argparse.Namespace(**settings))
    out = Path(args.out).resolve()  # his trainer changes the working folder
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    if args.max_minutes:  # their loop has no time budget: an alarm ends it, and the log so far is the result
        signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeUp()))
        signal.alarm(int(args.max_minutes * 60))
    with open(out / "log.txt", "w", encoding="utf-8", buffering=1) as log, redirect_stdout(log):
        try:
            train()
        except TimeUp:
            print(f"stopped after {args.max_minutes} minutes (--max-minutes)")
    log_text = (out / "log.txt").read_text(encoding="utf-8")
    evals = EVAL_PERIOD.get(args.model, args.eval_period)  # theirs: a dev evaluation every N batches
    return PARSE_AUTHORS_LOG[args.model](log_text) | {"evals": evals, "seconds": round(time.time() - start)}


def run_ours(args) -> dict:
    from core.training.train import main as train_main

    # our trainer reads the examples these files were written from (load_task): the same lines, in their order
    argv = [
        "--model", args.model, "--task", args.task, "--seed", str(args.seed),
        "--epochs", str(args.max_epochs), "--patience", "30",
        "--threads", "1", "--out", str(Path(args.out) / "run"), "--max-minutes", str(args.max_minutes),
        *(["--phrases"] if args.phrases else []),
    ]  # fmt: skip
    if args.model == "tensor_cnn":  # their README's settings; the DCNN trains with its recipe (docs/oracle.md §6.3)
        argv += [
            "--vectors", str(Path(args.inputs) / "vectors.safetensors"),
            "--batch-size", "15", "--optimizer", "adagrad", "--lr", "0.01", "--l2", "2e-5", "--clip", "0",
        ]  # fmt: skip
    if args.evals_per_epoch:
        argv += ["--evals-per-epoch", str(args.evals_per_epoch)]
    argv += shlex.split(args.ours_args)
    start = time.time()
    train_main(argv)
    metrics = json.loads((Path(args.out) / "run" / "metrics.json").read_text(encoding="utf-8"))
    history = [json.loads(line) for line in (Path(args.out) / "run" / "log.jsonl").read_text().splitlines()]
    return {
        "dev": round(100 * metrics["dev_accuracy"], 2),
        "test": round(100 * metrics["test"]["accuracy"], 2),
        "dev_curve": [round(100 * r["dev_accuracy"], 2) for r in history],
        "epoch_end_dev": [round(100 * r["dev_accuracy"], 2) for r in history],
        "epochs": metrics["epochs_run"],
        "evals": metrics["train_config"]["evals_per_epoch"],  # ours: per epoch, the recipe's unless given
        "seconds": round(time.time() - start),
    }


def variant_name(args) -> str:
    """'' for the README run; else what differs from it (authors: floatX, the naive loss)."""
    if args.side != "authors":
        return args.ours_args
    return " ".join(
        ([f"floatX={args.floatx}"] if args.floatx != FLOATX[args.model] else [])
        + (["naive loss"] if args.naive_loss else [])
    )


def salvage(folder: Path) -> dict | None:
    """The row of a run killed before it wrote result.json (a hard time limit): the authors' from their log,
    ours from its per-epoch log and best checkpoint (test evaluated here). None when nothing was trained."""
    parts = folder.name.split("-")  # [dcnn-]<side>-<task>[-phrases]-s<seed>[-<variant>]
    model = parts.pop(0) if parts[0] in PARSE_AUTHORS_LOG else "tensor_cnn"
    side, task, *rest = parts
    at = next(i for i, part in enumerate(rest) if re.fullmatch(r"s\d+", part))
    phrases, seed, variant = "phrases" in rest[:at], int(rest[at][1:]), " ".join(rest[at + 1 :])
    base = {"model": model, "task": task, "phrases": phrases, "implementation": side, "seed": seed}
    if side == "authors" and (folder / "log.txt").is_file():
        result = PARSE_AUTHORS_LOG[model]((folder / "log.txt").read_text(encoding="utf-8"))
        if result["dev"] is None:  # no evaluation yet
            return None
    elif side == "ours" and (folder / "run" / "best").is_dir():
        from core.analysis.metrics import evaluate
        from core.checkpoints.checkpoint import load_checkpoint

        log = folder / "run" / "log.jsonl"  # written at each epoch's end: absent when killed in the first
        history = [json.loads(line) for line in log.read_text().splitlines()] if log.is_file() else []
        best = load_checkpoint(folder / "run" / "best")  # saved at each better dev evaluation
        data = load_task(task)
        dev, test = (evaluate(best.model, part, best.vocab, data.labels)["accuracy"] for part in (data.dev, data.test))
        result = {
            "dev": round(100 * dev, 2),
            "test": round(100 * test, 2),
            "dev_curve": [round(100 * r["dev_accuracy"], 2) for r in history],
            "epochs": len(history),
        }
    else:
        return None
    return base | {"variant": variant, **result, "killed": True}


def report(folders: list[Path]) -> list[dict]:
    rows = []
    for folder in folders:
        for run in sorted(p for p in folder.iterdir() if p.is_dir()):
            if (run / "result.json").is_file():
                row = json.loads((run / "result.json").read_text(encoding="utf-8"))
                if row["implementation"] == "authors":  # read again: the parser may be newer than the run
                    row |= PARSE_AUTHORS_LOG[row["model"]]((run / "log.txt").read_text(encoding="utf-8"))
                elif row.get("evals", 1) == 1:  # ours, one evaluation per epoch: every one is an epoch's end
                    row.setdefault("epoch_end_dev", row["dev_curve"])
                rows.append(row)
            elif (row := salvage(run)) is not None:
                rows.append(row)
    key = lambda r: (r["model"], r["task"], r["phrases"], r.get("variant", ""), r["implementation"], r["seed"])
    return sorted(rows, key=key)


def evaluations(row: dict) -> str:
    """How many dev evaluations chose the row's model: ours logs one line per epoch, Godin prints only the better."""
    if row["implementation"] == "ours":
        return str(row.get("epochs", 0) * max(row.get("evals", 1), 1))
    if row["model"] == "dcnn":
        return f"every {row.get('evals', EVAL_PERIOD['dcnn'])} batches"
    return str(len(row.get("dev_curve", [])))


def markdown(rows: list[dict]) -> str:
    """One line per run, both sides of a setting next to each other."""
    lines = [
        "| model | task | training set | variant | implementation | seed | dev % | test % | epochs | dev evaluations "
        "| time |",
        "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        ended = "killed (salvaged)" if r.get("killed") else f"{r.get('seconds', 0) / 60:.0f} min"
        fmt = lambda v: "—" if v is None else f"{v:.2f}"
        settings = "our recipe" if (r["model"], r["implementation"]) == ("dcnn", "ours") else "README"
        lines.append(
            f"| {r['model']} | {r['task']} | {'phrases' if r['phrases'] else 'sentences'} | "
            f"{r.get('variant') or settings} | "
            f"{r['implementation']} | {r['seed']} | {fmt(r['dev'])} | {fmt(r['test'])} | {r.get('epochs', '')} | "
            f"{evaluations(r)} | {ended} |"
        )
    return "\n".join(lines) + "\n"


def epoch_table(rows: list[dict]) -> str:
    """End-of-epoch dev accuracy of every run, epochs as columns."""
    epochs = max((len(r.get("epoch_end_dev", [])) for r in rows), default=0)
    lines = [
        "| run | " + " | ".join(str(e + 1) for e in range(epochs)) + " |",
        "| --- |" + " ---: |" * epochs,
    ]
    for r in rows:
        ends = r.get("epoch_end_dev", [])
        name = f"{r['task']}{' phrases' if r['phrases'] else ''} {r['implementation']} s{r['seed']}"
        name += f" ({r['variant']})" if r.get("variant") else ""
        cells = [f"{d:.1f}" for d in ends] + [""] * (epochs - len(ends))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "side",
        choices=["authors", "ours", "report"],
        help="authors or ours: run that trainer; report: the rows of FOLDERS",
    )
    parser.add_argument("folders", nargs="*", help="report: the run folders to read")
    parser.add_argument(
        "--model", default="tensor_cnn", choices=list(PARSE_AUTHORS_LOG), help="the model both trainers train"
    )
    parser.add_argument("--task", default="sst5", choices=list(TASK_FILES), help="the task")
    parser.add_argument("--phrases", action="store_true", help="SST: train on every labelled phrase too")
    parser.add_argument("--seed", type=int, default=1, help="the random seed")
    parser.add_argument("--max-epochs", type=int, default=10, help="epochs at most")
    parser.add_argument("--max-minutes", type=float, default=0.0, help="a time budget (ours: ends after that epoch)")
    parser.add_argument("--eval-period", type=int, default=-1, help="tensor CNN, theirs: dev every N batches")
    parser.add_argument("--evals-per-epoch", type=int, default=0, help="ours: dev evaluations per epoch")
    parser.add_argument(
        "--inputs",
        default=str(default_dir()),
        help="the folder of the files both sides read (tools.research.oracle.files)",
    )
    parser.add_argument("--oracle-dir", default=None, help="the authors' checkout (default: LAB_ORACLE_DIR)")
    parser.add_argument("--floatx", default="", choices=["", "float32", "float64"], help="default: as they ran")
    parser.add_argument("--naive-loss", action="store_true", help="their -log(softmax[y]) as pytensor leaves it")
    parser.add_argument("--variant", default="", help="a name for a bisection step (ours: with --ours-args)")
    parser.add_argument("--ours-args", default="", help="extra core.training.train arguments, one string")
    parser.add_argument("--out", default="", help="the run's folder")
    parser.add_argument("--json", default="", help="report: the JSON file to write")
    args = parser.parse_args(argv)
    if args.side == "report":
        rows = report([Path(f) for f in args.folders])
        text = json.dumps(rows, indent=1)
        Path(args.json).write_text(text + "\n") if args.json else print(text)
        for model in sorted({r["model"] for r in rows}):  # docs/oracle.md: §3 the tensor CNN, §6 the DCNN
            print(f"{model}:\n\n" + markdown([r for r in rows if r["model"] == model]))
            print(epoch_table([r for r in rows if r["model"] == model]))
        return 0
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    args.floatx = args.floatx or FLOATX[args.model]
    if args.model == "tensor_cnn":
        args.evals_per_epoch = args.evals_per_epoch or 1  # their README: one dev evaluation per epoch
    result = (run_authors if args.side == "authors" else run_ours)(args)
    row = {
        "model": args.model,
        "task": args.task,
        "phrases": args.phrases,
        "implementation": args.side,
        "seed": args.seed,
        "variant": args.variant or variant_name(args),
        "max_epochs": args.max_epochs,
        "max_minutes": args.max_minutes,
        **result,
        "host": os.uname().nodename,
        "cores": os.cpu_count(),
    }
    (Path(args.out) / "result.json").write_text(json.dumps(row, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(row), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
