"""Peak resident memory per model, each measured in a fresh process (`python -m tools.bench
--memory-probe DIR`) so that no other model's memory is counted."""

import json
import logging
import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.data import PROJECT_ROOT
from core.data.batching import pad_batch
from core.predict import MAX_WORDS, Lab
from core.text import words as tokenize_words
from tools.bench.inference import plain_words, random_ids

log = logging.getLogger("tools.bench")


def peak_rss_mib() -> float:
    """This process's peak resident set so far, in MiB."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024  # kB
    except (OSError, StopIteration, ValueError):  # not Linux: getrusage (bytes on macOS)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return rss / 2**20 if sys.platform == "darwin" else rss / 1024


def memory_probe(checkpoint: str, threads: int, predict_words: int = MAX_WORDS) -> dict:
    """Runs inside the child process: peak RSS after each stage, one model only."""
    torch.set_num_threads(threads)
    config = json.loads((Path(checkpoint) / "config.json").read_text(encoding="utf-8"))
    lang = config.get("lang", "en")
    tokenize_words("warm up the tokenizer", lang)
    stages = {"imports_and_tokenizer": peak_rss_mib()}
    ckpt = load_checkpoint(checkpoint)
    task, model = ckpt.meta["task"], ckpt.meta.get("model", ckpt.model.key)
    stages["load"] = peak_rss_mib()
    with torch.inference_mode():
        batch = pad_batch([random_ids(len(ckpt.vocab), 400)])
        ckpt.model(batch.ids, batch.lengths)
        stages["forward_400_words"] = peak_rss_mib()
        batch = pad_batch([random_ids(len(ckpt.vocab), 20, seed=i) for i in range(64)])
        ckpt.model(batch.ids, batch.lengths)
        stages["batch_64x20_words"] = peak_rss_mib()
    lab = Lab({(task, model): ckpt})
    rng = random.Random(0)
    vocab_words = plain_words(ckpt.vocab)
    lab.predict(
        ("" if lang == "zh" else " ").join(rng.choice(vocab_words) for _ in range(predict_words)), model, task=task
    )
    stages["predict"] = peak_rss_mib()
    params = sum(p.numel() * p.element_size() for p in ckpt.model.parameters()) / 2**20
    return {"model": model, "stages_mib": stages, "parameters_mib": params, "predict_words": predict_words}


def measure_memory(lab: Lab, task: str, threads: int, limit: int | None, scaling: dict | None) -> dict:
    """One probe process per model. Lab.predict runs on the app's longest input (MAX_WORDS), or on the
    longest one the scaling section could afford for that model."""
    out = {}
    models = lab.models(task)
    for i, model in enumerate(models):
        if limit is not None and i >= limit:
            out[model] = {"not_run": "smoke mode measures the first model only"}
            continue
        path = str(lab.checkpoints[(task, model)].path)
        words = max(scaling[model]["predict"]["lengths"], default=5) if scaling and model in scaling else MAX_WORDS
        env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        try:
            probe = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tools.bench",
                    "--memory-probe",
                    path,
                    "--threads",
                    str(threads),
                    "--probe-words",
                    str(words),
                ],
                capture_output=True,
                text=True,
                cwd=PROJECT_ROOT,
                env=env,
                timeout=600,
            )
        except subprocess.TimeoutExpired:
            out[model] = {"not_run": "the probe ran past 600 s"}
            continue
        if probe.returncode != 0:
            out[model] = {
                "not_run": "probe failed: " + (probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[-1]
            }
            continue
        out[model] = result = json.loads(probe.stdout.strip().splitlines()[-1])
        log.info("memory %s: peak %.0f MiB", model, result["stages_mib"]["predict"])
    return out
