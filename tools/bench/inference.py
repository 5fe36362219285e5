"""Inference latency of one task's checkpoints: one sentence (bare forward and Lab.predict), batches of
64, and how both scale with sentence length."""

import logging
import random
import statistics
import time
from typing import Any

import torch

from core.data import DataError
from core.data.batching import pad_batch
from core.data.tasks import load_task
from core.predict import MAX_WORDS, Lab
from core.text import words as tokenize_words
from tools.bench.timing import growth_exponent, percentile, summary, time_calls

log = logging.getLogger("tools.bench")

# Our own sentences, used when the task's test set cannot be read (e.g. --smoke without --data-dir).
BUILTIN_SENTENCES = {
    "en": [
        "the movie is good .",
        "it is not a bad film , but the plot is dull .",
        "a moving , funny and often surprising story about two brothers who never quite grow up .",
        "the acting is great but the script is flat and the ending drags on far too long .",
        "not the worst movie of the year , not the best either .",
        "dull .",
        "what starts as a clever comedy turns into a tired melodrama that nobody in the cast seems to believe in , "
        "and the last half hour feels like it was assembled from spare parts .",
        "an awful , awful film .",
        "great fun .",
        "the plot is a mess , yet i could not stop watching .",
    ],
    "zh": [
        "这部电影不怎么好看，但是演员很棒。",
        "质量很好，物流也快。",
        "太差了，再也不买了。",
        "房间干净，服务热情，下次还来。",
    ],
}


def bench_sentences(task: str, lang: str, data_dir: str | None, n: int) -> tuple[list[str], str]:
    if data_dir is not None:
        try:
            test = load_task(task, data_dir or None).test
            if test:
                joiner = "" if lang == "zh" else " "
                return [joiner.join(e.words) for e in test[:n]], f"the first {min(n, len(test))} {task} test sentences"
        except (DataError, OSError, KeyError) as err:
            log.warning("cannot read the %s test set (%s): using built-in sentences", task, err)
    return BUILTIN_SENTENCES[lang], f"{len(BUILTIN_SENTENCES[lang])} built-in {lang} sentences"


@torch.inference_mode()
def measure_inference(lab: Lab, task: str, sentences: list[str], s: dict) -> dict:
    out = {}
    for model in lab.models(task):
        ckpt = lab.checkpoints[(task, model)]
        encoded = [
            ids
            for ids in (ckpt.vocab.encode(tokenize_words(t, ckpt.meta.get("lang"))[:MAX_WORDS]) for t in sentences)
            if ids
        ]
        net = ckpt.model

        def forward(i):
            batch = pad_batch([encoded[i % len(encoded)]])
            net(batch.ids, batch.lengths)

        def explain(i):
            lab.predict(sentences[i % len(sentences)], model, task=task)

        def batch64(i):  # the next 64 sentences, cycling over the list
            batch = pad_batch([encoded[(64 * i + j) % len(encoded)] for j in range(64)])
            net(batch.ids, batch.lengths)

        batch_times = time_calls(batch64, s["batch_reps"], s["budget_s"], warmup=1, min_reps=1)
        out[model] = {
            "parameters": sum(p.numel() for p in net.parameters()),
            "mean_words": statistics.fmean(len(e) for e in encoded),
            "forward": summary(time_calls(forward, s["forward_reps"], s["budget_s"], min_reps=s["min_reps"])),
            "predict": summary(time_calls(explain, s["predict_reps"], s["budget_s"], min_reps=s["min_reps"])),
            "batch64": {"sentences_per_s": 64 * len(batch_times) / sum(batch_times), "batches": len(batch_times)},
        }
        log.info(
            "inference %s: forward p50 %.2f ms, predict p50 %.2f ms",
            model,
            out[model]["forward"]["p50_ms"],
            out[model]["predict"]["p50_ms"],
        )
    return out


def random_ids(vocab_size: int, length: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(2, max(3, vocab_size)) for _ in range(length)]


def plain_words(vocab) -> list[str]:
    return [w for w in vocab.itos[2:] if w.isalpha()] or ["good"]


@torch.inference_mode()
def measure_scaling(lab: Lab, task: str, s: dict) -> dict:
    out = {}
    for model in lab.models(task):
        ckpt = lab.checkpoints[(task, model)]
        net, lengths = ckpt.model, s["lengths"]
        # Bare forward: the lengths take turns (round robin), so a burst of load from other processes
        # spreads over all of them instead of bending one point of the curve.
        batches = [pad_batch([random_ids(len(ckpt.vocab), n)]) for n in lengths]
        times: list[list[float]] = [[] for _ in lengths]
        start = time.perf_counter()
        for rep in range(-1, s["scale_reps"]):  # rep -1: warm-up
            for batch, bucket in zip(batches, times):
                t0 = time.perf_counter()
                net(batch.ids, batch.lengths)
                if rep >= 0:
                    bucket.append(1000 * (time.perf_counter() - t0))
            if rep >= 2 and time.perf_counter() - start > s["scale_budget_s"]:
                break
        forward = {
            "lengths": lengths,
            "best_ms": [min(t) for t in times],
            "p50_ms": [percentile(t, 50) for t in times],
            "reps": len(times[0]),
        }
        forward["exponent"] = growth_exponent(lengths, forward["best_ms"])
        out[model] = {"forward": forward, "predict": _predict_scaling(lab, task, model, s)}
        log.info("scaling %s: forward exponent %s", model, forward["exponent"])
    return out


def _predict_scaling(lab: Lab, task: str, model: str, s: dict) -> dict:
    """Lab.predict on growing random sentences. Its cost need not grow monotonically (it may drop an
    explanation past some length; its notices are kept), so every length runs unless the previous
    one measured over the cap."""
    ckpt = lab.checkpoints[(task, model)]
    lang = ckpt.meta.get("lang")
    vocab_words, rng = plain_words(ckpt.vocab), random.Random(0)
    result: dict[str, Any] = {"lengths": [], "p50_ms": [], "best_ms": [], "reps": [], "not_run": [], "notices": {}}
    for i, length in enumerate(s["predict_lengths"]):
        if result["p50_ms"] and result["p50_ms"][-1] > 1000 * s["predict_cap_s"]:
            result["not_run"].append(length)
            continue
        text = ("" if lang == "zh" else " ").join(rng.choice(vocab_words) for _ in range(length))
        if i == 0:
            lab.predict(text, model, task=task)  # warm-up: tokenizer and first kernels
        notices: list[str] = []

        def call(_):
            notices[:] = [n.format() for n in lab.predict(text, model, task=task).notices]

        times = [1000 * t for t in time_calls(call, s["scale_reps"], s["scale_budget_s"], warmup=0, min_reps=3)]
        words = min(len(tokenize_words(text, lang)), MAX_WORDS)
        result["lengths"].append(words)
        result["p50_ms"].append(percentile(times, 50))
        result["best_ms"].append(min(times))
        result["reps"].append(len(times))
        if notices:
            result["notices"][str(words)] = notices
    return result
