"""Word attributions beside occlusion, and how faithful each is.

Methods (every model, through the shared interface; the gradient ones by Captum on the word vectors):
- `occlusion`: P(c | sentence) - P(c | sentence without the word) (computed by core.predict in its batch).
- `gradient_x_input`: x_i . df/dx_i, f the explained class's logit (Shrikumar et al. 2016).
- `integrated_gradients`: (x_i - x'_i) . the mean of df/dx_i on the straight path from the baseline x' = 0
  (every word vector zero, which is the padding vector) to x (Sundararajan et al. 2017). Completeness: the
  scores sum to f(x) - f(x'). The path is cut into segments, each integrated by Captum (trapezoid rule,
  IG_SEGMENT_STEPS steps, from the segment's start as its baseline; the segments' scores add up to the whole
  path's, and so do their completeness gaps); the segment with the largest gap is halved (both halves in one
  Captum call: one batch through the model) until the error is under COMPLETENESS_TARGET or IG_MAX_SEGMENTS are
  reached (never below IG_MIN_WIDTH: a jump stays a jump), or the jumps alone miss the target.
  The steps go where f changes fast: the mRNN's paths are smooth but steep (a product of word operators), and
  equal steps needed up to 16,384 on SST-5 sentences. A path that crosses a jump of f stays above the target
  however it is cut (DCNN's k-max pooling keeps the top values in word order, so the kept columns reorder as
  a value overtakes another).
- `smoothgrad`: gradient x input averaged over noisy copies of the word vectors (Smilkov et al. 2017).
A word's score is the sum over its vector's dimensions: positive = supports the explained class.

The models are differentiated with respect to the vectors they read through `embedding_rows`
(core.models.base): sentence copy s reads position j from row 1 + s*n + j of a table built from Captum's
input, so a model that looks each distinct word up once (mRNN, AGT) still sees one vector per position.

Faithfulness (`deletion_curve`, `aopc`): delete the words in the order a method ranks them (highest first)
and follow P(c); the area over that curve (AOPC, Samek et al. 2017) is larger when the method found the
words the prediction rests on; a random order is the baseline. `tools/research/attribution.py` measures it on the
test sets, beside how plausible each method is (core.analysis.plausibility: agreement with the SST annotators),
into reports/attribution.md and into each checkpoint's folder (`write_faithfulness`: attribution.json beside
the weights, which `most_faithful` reads).
"""

import functools
import json
import random
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from core.checkpoints.checkpoint import Checkpoint, atomic_write_text, weights_sha256
from core.checkpoints.files import read_json
from core.checkpoints.manifest import FAITHFULNESS
from core.data.batching import pad_batch
from core.models.base import Intervention, SentenceClassifier, embedding_rows

METHODS = ("occlusion", "gradient_x_input", "integrated_gradients", "smoothgrad")
GRADIENT_METHODS = METHODS[1:]
# Too slow for an interactive request on 2 cores (reports/attribution.md, cost table): computed only when asked
ON_DEMAND = ("integrated_gradients", "smoothgrad")
DEFAULT_METHODS = ("occlusion",)  # what a request computes unless it names its methods
COMPLETENESS_TARGET = 0.05  # integrated gradients: |sum of scores - (f(x) - f(x'))| below 5% of the change
COMPLETENESS_FLOOR = 0.1  # logits: a change smaller than this is compared with it (a relative error of ~0 is noise)
IG_SEGMENT_STEPS = 32  # trapezoid-rule steps per path segment
IG_MAX_SEGMENTS = 64  # at most 2,048 steps on the finest cut of the path
IG_MIN_WIDTH = 2.0**-12  # a segment this short that still misses its change holds a jump: it is not halved again
SMOOTHGRAD_SAMPLES = 16
SMOOTHGRAD_NOISE = 0.15  # noise sigma, as a fraction of the sentence's vector value range (Smilkov et al.: 10-20%)
DELETION_STEPS = 10  # AOPC over the first 10 deletions (Samek et al.), at most n-1: a sentence keeps a word
FAITHFULNESS_FORMAT = 1


def on_demand(methods: tuple[str, ...]) -> bool:
    """Whether `methods` include one too slow for every request (a server admits it as long work)."""
    return any(m in ON_DEMAND for m in methods)


@dataclass
class Attribution:
    method: str
    scores: list[float]  # per word: how much it supports the explained class (occlusion: probability, else logit)
    completeness_error: float | None = None  # integrated gradients: |sum - (f(x) - f(x'))| / max(|f(x) - f(x')|, floor)
    steps: int | None = None  # integrated gradients' path steps, SmoothGrad's samples


def _logit_of(net: SentenceClassifier, target: int, n: int, intervention: Intervention | None = None):
    """f(x) for Captum: x (S, n, d) the word vectors of S copies of one sentence -> (S,) the target's logit (of
    the model under `intervention`: Captum calls this function, never the model)."""

    def forward(vectors: Tensor) -> Tensor:
        copies = vectors.shape[0]
        rows = torch.cat([vectors.new_zeros(1, vectors.shape[-1]), vectors.reshape(copies * n, -1)])  # (1 + S n, d)
        ids = torch.arange(1, copies * n + 1).view(copies, n)  # (S, n): copy s, word j reads its own row
        with embedding_rows(rows):
            return net(ids, torch.full((copies,), n), intervention=intervention).logits[:, target]  # (S,)

    return forward


def _completeness_error(gap: float, change: float) -> float:
    return abs(gap) / max(abs(change), COMPLETENESS_FLOOR)


def _integrated_gradients(ig, vectors: Tensor) -> tuple[Tensor, float, int]:
    """Integrated gradients from 0 to `vectors` (1, n, d) on adaptively cut segments [a, b] of the path a x:
    (scores (1, n, d), completeness error, steps on the final cut)."""

    def segments(*cuts: tuple[float, float]) -> dict[tuple[float, float], tuple[Tensor, float]]:
        """Each segment [a, b]'s scores and gap (sum of scores - (f(b x) - f(a x))), all in one Captum call: its
        copies go through the model as one batch."""
        scores, gaps = ig.attribute(
            torch.cat([b * vectors for _, b in cuts]),
            torch.cat([a * vectors for a, _ in cuts]),
            n_steps=IG_SEGMENT_STEPS,
            method="riemann_trapezoid",
            return_convergence_delta=True,
        )
        return {ends: (scores[i : i + 1].detach(), float(gaps[i])) for i, ends in enumerate(cuts)}

    pieces = segments((0.0, 1.0))
    change = float(pieces[(0.0, 1.0)][0].sum()) - pieces[(0.0, 1.0)][1]  # f(x) - f(0), from the whole path's gap
    while True:
        error = _completeness_error(sum(gap for _, gap in pieces.values()), change)
        halvable = [ends for ends in pieces if ends[1] - ends[0] > IG_MIN_WIDTH]
        # the jumps (segments no longer halvable) alone miss the target: more steps elsewhere cannot reach it
        jumps = _completeness_error(sum(gap for ends, (_, gap) in pieces.items() if ends not in halvable), change)
        if (
            error < COMPLETENESS_TARGET
            or len(pieces) >= IG_MAX_SEGMENTS
            or not halvable
            or jumps >= COMPLETENESS_TARGET
        ):
            break
        a, b = max(halvable, key=lambda ends: abs(pieces[ends][1]))
        del pieces[(a, b)]
        pieces |= segments((a, (a + b) / 2), ((a + b) / 2, b))
    return functools.reduce(torch.add, [scores for scores, _ in pieces.values()]), error, IG_SEGMENT_STEPS * len(pieces)


def gradient_attributions(
    net: SentenceClassifier,
    ids: list[int],
    target: int,
    methods: tuple[str, ...] | list[str],
    seed: int = 0,
    intervention: Intervention | None = None,
) -> dict[str, Attribution]:
    """The gradient methods among `methods` for class `target` of the sentence `ids` (known words and unknown
    alike: each position's vector is what the model reads), of the model under `intervention`. Runs with
    gradients even inside inference mode."""
    if not set(methods) & set(GRADIENT_METHODS):
        return {}
    from captum.attr import (
        InputXGradient,
        IntegratedGradients,
        NoiseTunnel,
    )  # seconds to import (it brings matplotlib): only when asked

    found = {}
    with torch.inference_mode(False), torch.enable_grad():
        vectors = net.embedding.weight.detach()[torch.tensor(ids)].unsqueeze(0).clone().requires_grad_()  # (1, n, d)
        forward = _logit_of(net, target, len(ids), intervention)
        if "gradient_x_input" in methods:
            scores = InputXGradient(forward).attribute(vectors)
            found["gradient_x_input"] = Attribution("gradient_x_input", scores.sum(-1)[0].tolist())
        if "integrated_gradients" in methods:
            scores, error, steps = _integrated_gradients(IntegratedGradients(forward), vectors.detach())
            found["integrated_gradients"] = Attribution(
                "integrated_gradients", scores.sum(-1)[0].tolist(), error, steps
            )
        if "smoothgrad" in methods:
            generator_state = torch.get_rng_state()
            torch.manual_seed(seed)  # the same noise for the same sentence: a request is repeatable
            sigma = SMOOTHGRAD_NOISE * float(vectors.detach().max() - vectors.detach().min())
            scores = NoiseTunnel(InputXGradient(forward)).attribute(
                vectors, nt_type="smoothgrad", nt_samples=SMOOTHGRAD_SAMPLES, stdevs=sigma
            )
            torch.set_rng_state(generator_state)
            found["smoothgrad"] = Attribution("smoothgrad", scores.sum(-1)[0].tolist(), steps=SMOOTHGRAD_SAMPLES)
    return found


def without(ids: list[int], removed: set[int]) -> list[int]:
    """The sentence with the words at positions `removed` deleted."""
    return [i for j, i in enumerate(ids) if j not in removed]


@torch.inference_mode()
def class_probs(net: SentenceClassifier, sentences: list[list[int]], target: int) -> list[float]:
    """P(target) for each sentence, one batch."""
    batch = pad_batch(sentences)
    return net(batch.ids, batch.lengths).logits.softmax(-1)[:, target].tolist()


def occlusion(net: SentenceClassifier, ids: list[int], target: int) -> Attribution:
    """Leave-one-word-out, as core.predict computes it in its batch: P(c | x) - P(c | x without word i)."""
    full, *left_out = class_probs(net, [ids] + [without(ids, {i}) for i in range(len(ids))], target)
    return Attribution("occlusion", [full - p for p in left_out])


def every_method(net: SentenceClassifier, ids: list[int], target: int, seed: int = 0) -> dict[str, Attribution]:
    """All of METHODS for class `target` of the sentence `ids` (2 words or more: occlusion leaves one out)."""
    return {"occlusion": occlusion(net, ids, target)} | gradient_attributions(net, ids, target, GRADIENT_METHODS, seed)


def sentence_aopc(
    net: SentenceClassifier, ids: list[int], target: int, found: dict[str, Attribution]
) -> dict[str, float]:
    """Each method's AOPC on this one sentence: its deletion curve in the method's order."""
    return {m: aopc(deletion_curve(net, ids, target, ranking(a.scores))) for m, a in found.items()}


def ranking(scores: list[float]) -> list[int]:
    """Positions from the highest score down (ties: left to right)."""
    return sorted(range(len(scores)), key=lambda j: -scores[j])


def deletion_curve(
    net: SentenceClassifier, ids: list[int], target: int, order: list[int], steps: int = DELETION_STEPS
) -> list[float]:
    """P(target) after deleting the first k words of `order`, k = 0..K, K = min(steps, n - 1)."""
    depth = min(steps, len(ids) - 1)
    return class_probs(net, [without(ids, set(order[:k])) for k in range(depth + 1)], target)


def aopc(curve: list[float]) -> float:
    """Area over the probability-drop curve: the mean over k = 0..K of P_0 - P_k (Samek et al. 2017, Eq. 12)."""
    return sum(curve[0] - p for p in curve) / len(curve)


def random_order(n: int, rng: random.Random) -> list[int]:
    order = list(range(n))
    rng.shuffle(order)
    return order


def write_faithfulness(checkpoint: Checkpoint, measured: dict) -> Path:
    """Store a deletion test of these weights beside them (the checkpoint's attribution.json): its number of
    sentences, each method's AOPC, the random order's, and the plausibility where the task has gold trees."""
    record = {
        "format": FAITHFULNESS_FORMAT,
        "weights_sha256": weights_sha256(checkpoint),
        "sentences": measured["sentences"],
        "aopc": measured["aopc"],
        "random": measured["random"],
        "plausibility": measured.get("plausibility"),
    }
    path = Path(checkpoint.path) / FAITHFULNESS
    atomic_write_text(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return path


def most_faithful(checkpoint: Checkpoint) -> dict | None:
    """What the checkpoint's attribution.json measured for these very weights (same sha256):
    {"method": the method with the highest AOPC, "aopc": {method: AOPC}, "random": the random order's
    AOPC, "sentences": n, "plausibility": {method: core.analysis.plausibility.summarize(...)} or None where
    the task has no gold trees}; None when they were not measured."""
    try:
        entry = read_json(Path(checkpoint.path) / FAITHFULNESS)
        if entry["format"] != FAITHFULNESS_FORMAT or entry["weights_sha256"] != weights_sha256(checkpoint):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    best = max(entry["aopc"], key=entry["aopc"].get)
    return {
        "method": best,
        "aopc": entry["aopc"],
        "random": entry["random"],
        "sentences": entry["sentences"],
        "plausibility": entry.get("plausibility"),
    }
