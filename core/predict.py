"""Text -> Prediction with explanations: the only entry point the front end calls.

    python -m core.predict "it is not a bad film" --model dcnn
    python -m core.predict "这部电影不怎么好看" --model all --json

A `Lab` holds every loaded checkpoint (loaded once) keyed by (task, model). `Lab.predict` tokenizes,
runs one model under inference mode and returns a `Prediction`: class probabilities, the tokens with
their character spans and whether the model knows them, a per-word curve (the model's own
per-position output where it has one, else the prediction on each prefix), a leave-one-word-out
occlusion score per word (the same method for every model), and the model's own views.
"""

import argparse
import json
import logging
import re
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path

import torch

from core.batching import pad_batch
from core.checkpoint import Checkpoint, CheckpointError, load_checkpoint
from core.data import PROJECT_ROOT
from core.models import PAPER_MODELS
from core.text import MAX_CHARS, detect_language, tokenize
from core.views import WordCurve, plain, sentiment_scores, view_to_dict

log = logging.getLogger(__name__)
MAX_WORDS = 300  # longer input is cut (with a notice): AdaSent's pyramid grows with the square of the length
OCCLUSION_MAX_WORDS = 120  # occlusion runs n sentences of n-1 words: cubic for AdaSent, so capped
DEFAULT_TASK = {"en": "sst5", "zh": "zh_sentiment"}
_SURROGATES = re.compile("[\ud800-\udfff]")


class InputError(ValueError):
    """Input we cannot analyse; the message is shown to the user as is."""


@dataclass
class TokenInfo:
    text: str  # normalized form the model sees
    surface: str  # as typed
    start: int
    end: int
    known: bool  # in the model's vocabulary


@dataclass
class Prediction:
    model: str
    task: str
    lang: str
    text: str  # the text analysed (after truncation)
    labels: list[str]
    probs: list[float]
    label: str
    tokens: list[TokenInfo]
    curve: WordCurve
    occlusion: list[float]  # per token: P(label | sentence) - P(label | sentence without it); [] past OCCLUSION_MAX_WORDS
    views: list = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    source: str = ""  # where the checkpoint came from

    def to_dict(self) -> dict:
        data = {f.name: plain(getattr(self, f.name)) for f in fields(self) if f.name not in ("views", "curve")}
        data["curve"] = view_to_dict(self.curve)
        data["views"] = [view_to_dict(v) for v in self.views]
        return data


class Lab:
    def __init__(self, checkpoints: dict[tuple[str, str], Checkpoint], sources: dict[tuple[str, str], str] | None = None,
                 errors: dict[str, str] | None = None):
        self.checkpoints = checkpoints
        self.sources = sources or {}
        self.errors = errors or {}  # checkpoint path -> why it could not be loaded

    @classmethod
    def from_directory(cls, root: str | Path = PROJECT_ROOT / "checkpoints") -> "Lab":
        """Load every `<root>/<task>/<model>/` checkpoint; a broken one is reported, not fatal."""
        checkpoints, sources, errors = {}, {}, {}
        for config in sorted(Path(root).glob("*/*/config.json")):
            try:
                ckpt = load_checkpoint(config.parent)
            except CheckpointError as err:
                log.error("skipping checkpoint: %s", err)
                errors[str(config.parent)] = str(err)
                continue
            key = (ckpt.meta.get("task", config.parent.parent.name), ckpt.meta.get("model", config.parent.name))
            checkpoints[key], sources[key] = ckpt, f"bundled: {config.parent}"
        return cls(checkpoints, sources, errors)

    @classmethod
    def load(cls, root: str | Path | None = None, prefer: str = "auto", config: str | Path | None = None,
             bundled: str | Path | None = None) -> "Lab":
        """Resolve every checkpoint through core.hub: the explicit `root` directory if given, else the
        pinned Hub repo of configs/hub.toml (cache first; offline or unreachable falls back within 3 s),
        else the bundled checkpoints/. `prefer`: "auto", "hub" (no fallback) or "bundled" (no network).
        `sources` says where each came from ("hub: repo@rev", "bundled: path", "directory: path");
        a broken checkpoint lands in `errors` (message naming the file) and the others still load."""
        from core.hub import load_all

        checkpoints, sources, errors, _ = load_all(root, prefer, config, bundled)
        return cls(checkpoints, sources, errors)

    def tasks(self, lang: str | None = None) -> list[str]:
        return sorted({t for t, _ in self.checkpoints if lang is None or self.checkpoints[(t, _)].meta.get("lang") == lang})

    def models(self, task: str) -> list[str]:
        found = {m for t, m in self.checkpoints if t == task}
        return [m for m in PAPER_MODELS + sorted(found - set(PAPER_MODELS)) if m in found]

    def resolve_task(self, text: str, task: str | None, lang: str | None, notices: list[str]) -> tuple[str, str]:
        lang = lang or detect_language(text)
        if lang not in ("en", "zh"):
            raise InputError(f"unknown language {lang!r}; choose 'en' or 'zh'")
        if task is None:
            task = DEFAULT_TASK[lang]
        task_lang = next((c.meta.get("lang") for (t, _), c in self.checkpoints.items() if t == task), None)
        if task_lang is None:
            raise InputError(f"no model is loaded for task {task!r}; available: {', '.join(self.tasks()) or 'none'}")
        if task_lang != lang:
            notices.append(f"The text looks {'Chinese' if lang == 'zh' else 'English'} but task {task} is "
                           f"{'Chinese' if task_lang == 'zh' else 'English'}; most words will be unknown to its models.")
        return task, task_lang

    @torch.inference_mode()
    def predict(self, text: str, model: str, task: str | None = None, lang: str | None = None,
                max_words: int = MAX_WORDS) -> Prediction:
        for name, value in (("text", text), ("model", model), ("task", task), ("lang", lang)):
            if not isinstance(value, str) and not (value is None and name in ("task", "lang")):
                raise InputError(f"{name} must be a string, got {type(value).__name__}")
        notices: list[str] = []
        text = text.replace("\x00", "")
        if _SURROGATES.search(text):  # lone surrogates (possible through the JSON API) cannot be encoded
            text = _SURROGATES.sub("\ufffd", text)  # one character for one: offsets stay valid
            notices.append("Invalid characters (lone surrogates) were replaced with \ufffd.")
        if len(text) > MAX_CHARS:
            text = text[:MAX_CHARS]
            notices.append(f"The text was cut to its first {MAX_CHARS} characters.")
        if not text.strip():
            raise InputError("Please type a sentence: the text is empty.")
        task, task_lang = self.resolve_task(text, task, lang, notices)
        if (task, model) not in self.checkpoints:
            raise InputError(f"model {model!r} is not available for task {task!r}; available: {', '.join(self.models(task))}")
        ckpt = self.checkpoints[(task, model)]
        tokens = tokenize(text, task_lang)
        if not tokens:
            raise InputError("No words found in the text.")
        if len(tokens) > max_words:
            tokens = tokens[:max_words]
            text = text[: tokens[-1].end]
            notices.append(f"Only the first {max_words} words were analysed.")
        words = [t.text for t in tokens]
        ids = ckpt.vocab.encode(words)
        known = [i != ckpt.vocab.unk_id for i in ids]
        if not any(known):
            notices.append("None of these words is in the model's vocabulary: the prediction is the model's prior.")
        elif not all(known):
            notices.append(f"{len(known) - sum(known)} of {len(known)} words are unknown to this model (marked in the highlight).")

        # one batch: the sentence (explained), then each prefix w_1..w_i for a model without a per-word output
        # of its own, and the sentence without each word (leave-one-word-out); one pass reads the weights once
        net = ckpt.model
        prefixes = [] if net.native_word_curve else [ids[: i + 1] for i in range(len(ids))]
        occlude = 1 < len(ids) <= OCCLUSION_MAX_WORDS  # one word has nothing to leave out of
        if len(ids) > OCCLUSION_MAX_WORDS:
            notices.append(f"Word attributions (leave-one-word-out) are computed for texts of up to {OCCLUSION_MAX_WORDS} words.")
        leave_one_out = [ids[:i] + ids[i + 1:] for i in range(len(ids))] if occlude else []
        batch = pad_batch([ids] + prefixes + leave_one_out)
        output = net(batch.ids, batch.lengths, explain=1)
        all_probs = output.logits.softmax(-1)  # (1 + N, C)
        probs = all_probs[0]  # (C,)
        label_id = int(net.predict_labels(output)[0])

        if net.native_word_curve:
            curve_probs, kind = net.word_curve(output, 0), "native"
        else:
            curve_probs, kind = all_probs[1: 1 + len(prefixes)], "prefix"
        rows = curve_probs.tolist()
        scores, score_label, score_range = sentiment_scores(rows)
        title = "the model's own per-word output" if kind == "native" else "prediction on each prefix"
        curve = WordCurve(kind, words, scores, rows, score_label, score_range, title)
        if occlude:  # how much each word supports the predicted class
            occlusion = (probs[label_id] - all_probs[1 + len(prefixes):, label_id]).tolist()
        else:
            occlusion = [0.0] if len(ids) == 1 else []
        token_info = [TokenInfo(t.text, text[t.start:t.end], t.start, t.end, k) for t, k in zip(tokens, known)]
        labels = ckpt.meta["labels"]
        return Prediction(model, task, task_lang, text, labels, probs.tolist(), labels[label_id], token_info, curve,
                          occlusion, net.views(output, 0, words), notices, self.sources.get((task, model), ""))

    def compare(self, text: str, task: str | None = None, lang: str | None = None) -> list[Prediction]:
        """Every loaded paper model on one task."""
        notices: list[str] = []
        task, _ = self.resolve_task(text if isinstance(text, str) else "", task, lang, notices)
        return [self.predict(text, m, task, lang) for m in self.models(task)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.predict", description="Classify a sentence and explain it.")
    parser.add_argument("text")
    parser.add_argument("--model", default="all", help="a model key, or 'all'")
    parser.add_argument("--task", default=None, help="default: sst5 for English, zh_sentiment for Chinese")
    parser.add_argument("--lang", default=None, choices=["en", "zh"])
    parser.add_argument("--checkpoints", default=None, help="a checkpoint directory (default: Hub, else bundled)")
    parser.add_argument("--json", action="store_true", help="print the full prediction with explanations as JSON")
    args = parser.parse_args(argv)
    lab = Lab.load(args.checkpoints)
    try:
        predictions = (lab.compare(args.text, args.task, args.lang) if args.model == "all"
                       else [lab.predict(args.text, args.model, args.task, args.lang)])
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([p.to_dict() for p in predictions], ensure_ascii=False, indent=1))
        return 0
    for p in predictions:
        top = ", ".join(f"{l} {q:.2f}" for l, q in sorted(zip(p.labels, p.probs), key=lambda x: -x[1])[:3])
        print(f"{p.model:>10}  {p.label:<14} ({top})")
        for notice in p.notices:
            print(f"{'':>10}  note: {notice}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
