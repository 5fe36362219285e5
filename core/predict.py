"""Text -> Prediction with explanations: the only entry point the front end calls.

    python -m core.predict "it is not a bad film" --model dcnn
    python -m core.predict "这部电影不怎么好看" --model all --json

A `Lab` holds every checkpoint `Lab.load` resolved (loaded once) keyed by (task, model). `Lab.check_text`
makes every check of the input; `Lab.predict` runs one model and `Lab.compare` several (all of the
task by default), each under inference mode, and return `Prediction`s: class probabilities, the tokens
with their character spans and whether the model knows them, a per-word curve (the model's own
per-position output or a probe where it has one, else the prediction on each prefix), a
leave-one-word-out occlusion score per word (the same method for every model), and the model's own
views. A server that schedules the model work itself asks for the request's `Plan` instead
(`Lab.plan_predict`, `Lab.plan_compare`), runs its jobs its own way and hands their outcomes to `Plan.finish`.
Core returns data: what the user should know comes as `Notice`s (a code and its parameters), and bad input
as an `InputError` carrying one; the front end words them (core.notices, demo/i18n.py).
"""

import argparse
import html
import json
import logging
import re
import sys
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar, Self

import torch

from core.analysis.attribution import (
    DEFAULT_METHODS,
    GRADIENT_METHODS,
    METHODS,
    Attribution,
    gradient_attributions,
    on_demand,
)
from core.answers import AnswerCache, checkpoint_identity
from core.checkpoints.checkpoint import Checkpoint
from core.checkpoints.hub import load_all
from core.data.batching import pad_batch
from core.models import PAPER_MODELS
from core.models.base import Intervention, parse_intervention
from core.notices import LANGUAGE_NAMES, InputError, InterventionError, Notice
from core.text import MAX_CHARS, Token, detect_language, tokenize
from core.views import Pyramid, Text, WordCurve, sentiment_scores
from core.wire import plain

log = logging.getLogger(__name__)
MAX_WORDS = 150  # longer input is cut (with a notice): the work budget of one request (see below)
OCCLUSION_MAX_WORDS = 60  # occlusion runs n sentences of n-1 words: cubic for AdaSent, so capped
# The work budget: the worst allowed /compare (60 words with occlusion, or 150 without) measured <= 1.3 s and
# <= 0.6 MB of JSON for the five bundled models on 2 shared cores; at 120 and 300 words it was 5-7 s and 5 MB.
DEFAULT_TASK = {"en": "sst5", "zh": "zh_sentiment"}
AUTO = "auto"  # task or language: chosen from the text
ALL = "all"  # model: every model of the task (compare)
_SURROGATES = re.compile("[\ud800-\udfff]")


class Cancelled(Exception):
    """The caller no longer wants the answer (its client disconnected): the models not yet run were skipped."""


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
    lang: str  # the text's language, as detected
    task_lang: str  # the task's language, which the tokenizer and the model use
    text: str  # the text analysed (after truncation)
    labels: list[str]
    probs: list[float]
    label: str
    tokens: list[TokenInfo]
    curve: WordCurve
    # per token: P(label | sentence) - P(label | sentence without it); [] past OCCLUSION_MAX_WORDS
    occlusion: list[float]
    views: list = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    source: str = ""  # where the checkpoint came from
    # method -> per-word scores (core.analysis.attribution)
    attributions: dict[str, Attribution] = field(default_factory=dict)
    intervention: str = "none"  # what was switched off or replaced in the model ("key" or "key:index")

    # how a notebook shows a prediction: set by the front end (demo.notebook draws the lab's own SVG views);
    # without it, a plain table of the class probabilities
    html_renderer: ClassVar[Callable[["Prediction"], str] | None] = None

    def _repr_html_(self) -> str:
        """Jupyter, VS Code and Colab call this to show the prediction inline (HTML and SVG, no JavaScript)."""
        if Prediction.html_renderer is not None:
            return Prediction.html_renderer(self)
        rows = "".join(
            f"<tr><td>{html.escape(label)}</td><td>{prob:.3f}</td></tr>" for label, prob in zip(self.labels, self.probs)
        )
        return (
            f"<b>{html.escape(self.model)}</b>: {html.escape(self.label)} on "
            f"<i>{html.escape(self.text)}</i><table>{rows}</table>"
        )

    def to_dict(self) -> dict:
        """JSON-ready; `notices` in English words, `notice_codes` as data for a client that words them itself."""
        data = {f.name: plain(getattr(self, f.name)) for f in fields(self) if f.name != "notices"}
        data["notices"] = [n.format() for n in self.notices]
        data["notice_codes"] = [plain(n) for n in self.notices]
        return data


# why a model gave no answer (ModelFailure.code): it raised on this input, its checkpoint could not be loaded, or
# the process running it (web/runner.py's worker) ended while it ran
FAILURE_CODES = ("model_error", "checkpoint_unreadable", "worker_ended")


@dataclass
class ModelFailure:
    model: str
    error: str  # the detail: "ExceptionType: message" (the trace is in the log), or the worker's exit status
    code: str = "model_error"  # one of FAILURE_CODES


@dataclass
class Comparison:
    predictions: list[Prediction]  # in the order of Lab.models(task)
    failures: list[ModelFailure]  # models that broke on this input; the others still answered


@dataclass
class CheckedText:
    """A text as every model of its task sees it: checked, cleaned, cut and tokenized once."""

    text: str
    task: str
    lang: str  # detected from the text
    task_lang: str
    tokens: list[Token]
    notices: list[Notice]


@dataclass(frozen=True)
class Request:
    """One analysis asked of a Lab, by name: Lab.plan_predict (one model) and Lab.plan_compare (several) take it,
    Lab.predict and Lab.compare build it from their keywords. `task` and `lang` None or "auto": from the text;
    `models` None: every model of the task; `methods`: see check_methods; `view_options` go to each model's
    `views` where it takes the value (the DCNN's `top_map`: one of its maps; view_option_values), the other
    models ignore them; `intervention` ("key" or "key:index", see Lab.interventions) switches a part of each
    model off or replaces it."""

    text: str
    models: tuple[str, ...] | list[str] | None = None
    task: str | None = None
    lang: str | None = None
    methods: str | list[str] | tuple[str, ...] | None = None
    view_options: dict | None = None
    intervention: str | Intervention | None = None
    max_words: int = MAX_WORDS  # longer input is cut, with a notice


@dataclass(frozen=True)
class ModelJob:
    """One model's work on a checked text, as data another process can run (`Lab.run` there; the Space's model
    worker, service.serving, to which web/runner.py sends long requests so that they never hold the server's
    GIL): the checkpoint travels as its directory and is loaded there once."""

    directory: str
    source: str
    checked: CheckedText
    model: str
    methods: tuple[str, ...]
    view_options: dict | None = None  # the ones the model takes of the Request's
    intervention: str = "none"  # the Request's, checked against the model


@dataclass
class Plan:
    """One request's model work, checked and not yet run (Lab.plan_predict, Lab.plan_compare). A scheduler reads
    `words` and `on_demand`, runs each of `jobs` (the models without a kept answer) with `here` or in another
    process (Lab.run there), and hands the outcomes, in the order of `jobs`, to `finish`; `run_here` does all of
    it in this process (Lab.predict, Lab.compare). The scheduler may stop between jobs (its client left)."""

    checked: CheckedText
    models: list[str]  # as asked, in the order of the answer
    kept: dict[str, Prediction]  # model -> the answer kept for this very request (core.answers)
    jobs: list[ModelJob]
    on_demand: bool  # a slow attribution method (ON_DEMAND) was asked for
    here: Callable[[ModelJob], Prediction | ModelFailure]  # one job, in this process
    keys: dict[str, tuple | None]  # model -> its answer's key in `answers` (None: not kept)
    answers: AnswerCache | None

    @property
    def words(self) -> int:
        """The words analysed: how long the request is."""
        return len(self.checked.tokens)

    def rechecked(self) -> "Plan":
        """This plan without the jobs whose answers were kept since it was made (another request's for the same
        thing, while this one waited for its turn)."""
        if self.answers is None:
            return self
        found = {
            job.model: answer
            for job in self.jobs
            if (key := self.keys[job.model]) is not None and (answer := self.answers.get(key)) is not None
        }
        if not found:
            return self
        return replace(self, kept=self.kept | found, jobs=[job for job in self.jobs if job.model not in found])

    def run_here(self, executor: Executor | None = None) -> Comparison:
        """The answer, every job run in this process: one after another, or side by side on `executor`."""
        return self.finish(list(map(self.here, self.jobs) if executor is None else executor.map(self.here, self.jobs)))

    def finish(self, outcomes: list[Prediction | ModelFailure]) -> Comparison:
        """The answer from the jobs' outcomes (in the order of `jobs`) and the kept answers; the new answers are
        kept. A model that broke is listed in `failures`; RuntimeError when no model answered."""
        ran = dict(zip((job.model for job in self.jobs), outcomes))
        for model, outcome in ran.items():
            key = self.keys[model]
            if isinstance(outcome, Prediction) and key is not None and self.answers is not None:
                self.answers.put(key, outcome)
        answered = self.kept | ran
        found = [answered[m] for m in self.models]
        predictions = [o for o in found if isinstance(o, Prediction)]
        failures = [o for o in found if isinstance(o, ModelFailure)]
        if failures and not predictions:
            raise RuntimeError("; ".join(f"{f.model}: {f.error}" for f in failures))
        return Comparison(predictions, failures)


def _auto(value: str | None) -> str | None:
    return None if value in (None, "", AUTO) else value


def _check_string(name: str, value, optional: bool = False) -> None:
    if not isinstance(value, str) and not (optional and value is None):
        raise InputError("not_a_string", name=name, type=type(value).__name__)


def check_methods(methods: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The attribution methods asked for: None or "default" (DEFAULT_METHODS), "all", or names (a list, or
    one string, comma-separated), in METHODS order; InputError for a name that is not a method."""
    if methods is None or methods == "default":
        return DEFAULT_METHODS
    if methods == ALL:
        return METHODS
    names = methods.split(",") if isinstance(methods, str) else methods
    for name in names:
        _check_string("method", name)
        if name.strip() not in METHODS:
            raise InputError("unknown_method", method=name.strip(), available=list(METHODS))
    return tuple(m for m in METHODS if m in {name.strip() for name in names})


class Lab:
    def __init__(
        self,
        checkpoints: dict[tuple[str, str], Checkpoint],
        sources: dict[tuple[str, str], str] | None = None,
        errors: dict[str, str] | None = None,
        answers: AnswerCache | None = None,
    ):
        self.checkpoints = checkpoints
        self.sources = sources or {}
        self.errors = errors or {}  # checkpoint path -> why it could not be loaded
        self.answers = answers  # recent answers to answer an identical request again (core.answers); None: none

    @classmethod
    def load(
        cls,
        root: str | Path | None = None,
        prefer: str = "auto",
        config: str | Path | None = None,
        bundled: str | Path | None = None,
    ) -> Self:
        """Resolve every checkpoint through core.checkpoints.hub: the explicit `root` directory if given, else the
        pinned Hub repo of configs/hub.toml (cache first; offline or unreachable falls back within 3 s),
        else the bundled checkpoints/. `prefer`: "auto", "hub" (no fallback) or "bundled" (no network).
        Each checkpoint must sit in its own <task>/<model>/ folder and match the manifest.json of its
        root where there is one. `sources` says where each came from ("hub: repo@rev", "bundled: path",
        "directory: path"); a broken checkpoint lands in `errors` (message naming the file) and the
        others still load."""
        checkpoints, sources, errors, _ = load_all(root, prefer, config, bundled)
        return cls(checkpoints, sources, errors)

    def run(self, job: ModelJob) -> "Prediction | ModelFailure":
        """A ModelJob (what a Plan's scheduler may send to another process) run here, on this lab's checkpoint of
        its model; a model that breaks is reported as a ModelFailure."""
        intervention = parse_intervention(job.intervention)
        return self.attempt(job.checked, job.model, job.methods, job.view_options, intervention)

    def _explain_job(self, job: ModelJob) -> Prediction:
        """A ModelJob run here; a model that breaks raises (plan_predict's)."""
        intervention = parse_intervention(job.intervention)
        return self._explain(job.checked, job.model, job.methods, job.view_options, intervention)

    def answer_identity(self, key: tuple[str, str]) -> str:
        """What tells the checkpoint served under `key` from every other, in the key of a kept answer."""
        return checkpoint_identity(self.checkpoints[key], self.sources.get(key, ""))

    def kept_key(self, *request: object, task: str | None = None) -> tuple:
        """The key, among the kept answers, of a report that depends only on `request` and the checkpoints of
        `task` (of every task when None): a probe suite's, a treebank tree's."""
        served = sorted(k for k in self.checkpoints if task is None or k[0] == task)
        return (*request, tuple(self.answer_identity(k) for k in served))

    def tasks(self, lang: str | None = None) -> list[str]:
        return sorted({t for (t, _), c in self.checkpoints.items() if lang is None or c.meta.get("lang") == lang})

    def models(self, task: str | None = None) -> list[str]:
        """The models of `task` (of every task when None): the papers' order, then any others by name."""
        found = {m for t, m in self.checkpoints if task is None or t == task}
        return [m for m in PAPER_MODELS if m in found] + sorted(found - set(PAPER_MODELS))

    def check_text(
        self, text: str, task: str | None = None, lang: str | None = None, max_words: int = MAX_WORDS
    ) -> CheckedText:
        """Every check of the input, for one model or all: InputError for what cannot be analysed,
        notices for what was changed. `task` and `lang` may be None or "auto" (from the text); `lang`
        only chooses the default task, and the task's language decides the tokenizer."""
        _check_string("text", text)
        _check_string("task", task, optional=True)
        _check_string("lang", lang, optional=True)
        task, lang = _auto(task), _auto(lang)
        notices: list[Notice] = []
        text = text.replace("\x00", " ")  # a separator (as in find -print0), one character for one: offsets stay valid
        if _SURROGATES.search(text):  # lone surrogates (possible through the JSON API) cannot be encoded
            text = _SURROGATES.sub("\ufffd", text)  # one character for one: offsets stay valid
            notices.append(Notice("surrogates_replaced"))
        if len(text) > MAX_CHARS:
            text = text[:MAX_CHARS]
            notices.append(Notice("text_cut", {"max_chars": MAX_CHARS}))
        if not text.strip():
            raise InputError("empty")
        text_lang = detect_language(text)
        if lang is not None and lang not in LANGUAGE_NAMES:
            raise InputError("unknown_language", lang=lang)
        task = task or DEFAULT_TASK[lang or text_lang]  # the language given chooses the task, not the tokenizer
        task_lang = next((c.meta.get("lang") for (t, _), c in self.checkpoints.items() if t == task), None)
        if task_lang is None:
            if not self.checkpoints:
                raise InputError("nothing_loaded", task=task)
            raise InputError("unknown_task", task=task, available=self.tasks())
        if task_lang != text_lang:
            notices.append(Notice("language_mismatch", {"text_lang": text_lang, "task": task, "task_lang": task_lang}))
        tokens = tokenize(text, task_lang)
        if not tokens:
            raise InputError("no_words")
        if len(tokens) > max_words:
            tokens = tokens[:max_words]
            text = text[: tokens[-1].end]
            notices.append(Notice("words_cut", {"max_words": max_words}))
        return CheckedText(text, task, text_lang, task_lang, tokens, notices)

    def _check_model(self, task: str, model: str) -> None:
        _check_string("model", model)
        if model == ALL:
            raise InputError("one_model_expected")
        if (task, model) not in self.checkpoints:
            raise InputError("unknown_model", model=model, task=task, available=self.models(task))

    def predict(self, text: str, model: str, **asked: Any) -> Prediction:
        """One model on one text: `asked` names the Request's other fields (task, lang, methods, view_options,
        intervention, max_words). Bad input raises InputError."""
        return self.plan_predict(Request(text, models=(model,), **asked)).run_here().predictions[0]

    def plan_predict(self, request: Request) -> Plan:
        """One model's work (`request.models` names one), checked and not yet run (InputError for bad input); its
        Comparison has the one prediction. A model that raises here raises (a worker process reports a
        ModelFailure: RuntimeError)."""
        plan = self._checked_plan(request, self._explain_job)
        if len(plan.models) != 1:
            raise InputError("one_model_expected")
        return plan

    def compare(self, text: str, *, executor: Executor | None = None, **asked: Any) -> Comparison:
        """The Request's models (default: every model of the task) on one text, the input checked once; `asked`
        names its other fields. A model that breaks on good input is logged and listed in `failures`; the others
        still answer (RuntimeError when none does). With an `executor` the models run side by side (torch
        releases the GIL)."""
        return self.plan_compare(Request(text, **asked)).run_here(executor)

    def plan_compare(self, request: Request) -> Plan:
        """`compare`'s work, checked and not yet run (InputError for bad input)."""
        return self._checked_plan(request, self.run)

    def _checked_plan(self, request: Request, here: Callable[[ModelJob], Prediction | ModelFailure]) -> Plan:
        """Every check of `request`, then its Plan: a job for each model without a kept answer, run by `here`."""
        methods = check_methods(request.methods)
        checked = self.check_text(request.text, request.task, request.lang, request.max_words)
        models = self.models(checked.task) if request.models is None else list(request.models)
        interventions = {}
        for model in models:
            self._check_model(checked.task, model)
            interventions[model] = self.check_intervention(checked, model, request.intervention)
        options = {m: self._taken(checked.task, m, request.view_options or {}) for m in models}
        asked = (request.text, request.task, request.lang, request.max_words)
        keys = {m: self._answer_key(asked, checked, m, methods, options[m], interventions[m]) for m in models}
        answers = self.answers  # a key is None when there is no cache
        kept = {
            m: a for m, k in keys.items() if k is not None and answers is not None and (a := answers.get(k)) is not None
        }
        jobs = [self._job(checked, m, methods, options[m], interventions[m]) for m in models if m not in kept]
        return Plan(checked, models, kept, jobs, on_demand(methods), here, keys, self.answers)

    def interventions(self, task: str | None = None) -> dict[str, dict[str, dict]]:
        """{model: {intervention key: {"section": the paper's claim it tests, "index": what its index names}}}
        for the models of `task` (default: every task's models)."""
        _check_string("task", task, optional=True)
        if task is not None and task not in self.tasks():
            raise InputError("unknown_task", task=task[:60], available=self.tasks())
        found = {}
        for (t, model), ckpt in self.checkpoints.items():
            if task in (None, t):
                found[model] = {
                    key: {"section": spec.section, "index": spec.index}
                    for key, spec in ckpt.model.interventions.items()
                }
        return found

    def intervention_start(self, text: str, model: str, task: str | None, key: str) -> int:
        """The index an intervention menu offers first for indexed intervention `key` of `model` on `text`: the
        model's choice for this text (SentenceClassifier.intervention_start: at most one pass, no explanation).
        InputError for a text that cannot be analysed or a model the text's task lacks."""
        checked = self.check_text(text, task)
        self._check_model(checked.task, model)
        ckpt = self.checkpoints[(checked.task, model)]
        batch = pad_batch([ckpt.vocab.encode([t.text for t in checked.tokens])])
        with torch.inference_mode():
            return ckpt.model.intervention_start(key, batch.ids, batch.lengths)

    def check_intervention(
        self, checked: CheckedText, model: str, intervention: str | Intervention | None
    ) -> Intervention | None:
        """The intervention asked for, checked against the model and the text (a word or level index must
        lie in the text); InputError (an InterventionError) otherwise."""
        if isinstance(intervention, str) or intervention is None:
            _check_string("intervention", intervention, optional=True)
            intervention = parse_intervention(intervention)
        if intervention is None:
            return None
        net = self.checkpoints[(checked.task, model)].model
        net.check_intervention(intervention)
        # a word or level intervention has an index: check_intervention refused one without
        if net.interventions[intervention.key].index in ("word", "level") and intervention.index > len(checked.tokens):  # type: ignore[operator]
            raise InterventionError(
                "index_out_of_range",
                intervention=intervention.key,
                what=net.interventions[intervention.key].index,
                lowest=1,
                highest=len(checked.tokens),
                value=intervention.index,
            )
        return intervention

    def _taken(self, task: str, model: str, view_options: dict) -> dict | None:
        """The view options the model takes with these values (None: none)."""
        net = self.checkpoints[(task, model)].model
        taken = {k: v for k, v in view_options.items() if v in net.view_option_values(k)}
        return taken or None

    def _answer_key(
        self,
        request: tuple,
        checked: CheckedText,
        model: str,
        methods: tuple[str, ...],
        view_options: dict | None = None,
        intervention: Intervention | None = None,
    ) -> tuple | None:
        """The key of this request's answer in `answers` (core.answers), or None when it is not kept there: the
        request as given and as checked, and the identity of the checkpoint that answers it."""
        if self.answers is None or not self.answers.keeps(len(checked.tokens)):
            return None
        identity = self.answer_identity((checked.task, model))
        options = json.dumps(view_options, sort_keys=True, default=str)
        return (*request, checked.task, checked.task_lang, model, methods, options, str(intervention), identity)

    def _job(
        self,
        checked: CheckedText,
        model: str,
        methods: tuple[str, ...],
        view_options: dict | None = None,
        intervention: Intervention | None = None,
    ) -> ModelJob:
        key = (checked.task, model)
        return ModelJob(
            str(self.checkpoints[key].path),
            self.sources.get(key, ""),
            checked,
            model,
            methods,
            view_options,
            str(intervention) if intervention else "none",
        )

    def attempt(
        self,
        checked: CheckedText,
        model: str,
        methods: tuple[str, ...],
        view_options: dict | None = None,
        intervention: Intervention | None = None,
    ) -> Prediction | ModelFailure:
        """One model on a checked text, here; a model that raises gives a ModelFailure (compare, ModelJob)."""
        try:
            return self._explain(checked, model, methods, view_options, intervention)
        except Exception as err:  # one broken model must not take the others down
            log.exception("model %s failed on %r", model, checked.text[:200])
            return ModelFailure(model, f"{type(err).__name__}: {err}")

    def _explain(
        self,
        checked: CheckedText,
        model: str,
        methods: tuple[str, ...] = DEFAULT_METHODS,
        view_options: dict | None = None,
        intervention: Intervention | None = None,
    ) -> Prediction:
        with torch.inference_mode():
            prediction = self._explain_plain(checked, model, methods, view_options, intervention)
        if intervention is not None:
            prediction.intervention = str(intervention)
            prediction.notices.append(Notice("intervention", {"intervention": str(intervention), "model": model}))
        return prediction

    def _explain_plain(
        self,
        checked: CheckedText,
        model: str,
        methods: tuple[str, ...],
        view_options: dict | None,
        intervention: Intervention | None,
    ) -> Prediction:
        """The prediction and its explanations; every pass (the gradient methods' too) under `intervention`."""
        ckpt = self.checkpoints[(checked.task, model)]
        notices = list(checked.notices)
        words = [t.text for t in checked.tokens]
        ids = ckpt.vocab.encode(words)
        known = [i != ckpt.vocab.unk_id for i in ids]
        if not any(known):
            notices.append(Notice("all_unknown"))
        elif not all(known):
            notices.append(Notice("some_unknown", {"unknown": len(known) - sum(known), "total": len(known)}))

        # one batch: the sentence (explained), then each prefix w_1..w_i for a model without a per-word output
        # of its own, and the sentence without each word (leave-one-word-out); one pass reads the weights once
        net = ckpt.model
        prefixes = [ids[: i + 1] for i in range(len(ids))] if net.word_curve_kind is None else []
        occlude = 1 < len(ids) <= OCCLUSION_MAX_WORDS  # one word has nothing to leave out of
        if len(ids) > OCCLUSION_MAX_WORDS:
            notices.append(
                Notice(
                    "attribution_skipped",
                    {"methods": list(methods), "max_words": OCCLUSION_MAX_WORDS, "words": len(ids)},
                )
            )  # the methods asked for, by name
        leave_one_out = [ids[:i] + ids[i + 1 :] for i in range(len(ids))] if occlude else []
        batch = pad_batch([ids] + prefixes + leave_one_out)
        output = net(batch.ids, batch.lengths, explain=1, intervention=intervention)
        all_probs = output.logits.softmax(-1)  # (1 + N, C)
        probs = all_probs[0]  # (C,)
        label_id = int(net.predict_labels(output)[0])
        labels = ckpt.meta["labels"]

        if net.word_curve_kind is None:
            curve_probs, kind = all_probs[1 : 1 + len(prefixes)], "prefix"
        else:
            curve_probs, kind = net.word_curve(output, 0), net.word_curve_kind
        rows = curve_probs.tolist()
        scores, score_label, score_range = sentiment_scores(rows, labels)
        curve = WordCurve(kind, words, scores, rows, score_label, score_range, Text(f"curve_{kind}"))
        if occlude:  # how much each word supports the predicted class
            occlusion = (probs[label_id] - all_probs[1 + len(prefixes) :, label_id]).tolist()
        else:
            occlusion = [0.0] if len(ids) == 1 else []
        # the gradient methods run their own passes (with gradients), under the same word cap as occlusion
        attributions = (
            {"occlusion": Attribution("occlusion", occlusion)} if "occlusion" in methods and occlusion else {}
        )
        if len(ids) <= OCCLUSION_MAX_WORDS:
            gradient_methods = [m for m in methods if m in GRADIENT_METHODS]
            attributions |= gradient_attributions(net, ids, label_id, gradient_methods, intervention=intervention)
        views = net.views(output, 0, words, labels, **(view_options or {}))
        notices += [
            Notice("pyramid_reduced", {"max_words": v.detail_words})
            for v in views
            if isinstance(v, Pyramid) and v.detail_words
        ]
        text = checked.text
        token_info = [
            TokenInfo(t.text, text[t.start : t.end], t.start, t.end, k) for t, k in zip(checked.tokens, known)
        ]
        return Prediction(
            model,
            checked.task,
            checked.lang,
            checked.task_lang,
            text,
            labels,
            probs.tolist(),
            labels[label_id],
            token_info,
            curve,
            occlusion,
            views,
            notices,
            self.sources.get((checked.task, model), ""),
            attributions,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.predict", description="Classify a sentence and explain it.")
    parser.add_argument("text", help="the sentence to classify")
    parser.add_argument("--model", default=ALL, help="a model key, or 'all'")
    parser.add_argument("--task", default=None, help="default: sst5 for English, zh_sentiment for Chinese")
    parser.add_argument(
        "--lang", default=None, choices=["en", "zh"], help="the sentence's language (default: detected)"
    )
    parser.add_argument("--checkpoints", default=None, help="a checkpoint directory (default: Hub, else bundled)")
    parser.add_argument("--json", action="store_true", help="print the full prediction with explanations as JSON")
    parser.add_argument(
        "--methods",
        default="default",
        help="word attribution methods: 'default', 'all' or a comma-separated list of " + ", ".join(METHODS),
    )
    args = parser.parse_args(argv)
    try:
        lab = Lab.load(args.checkpoints)
        for where, message in lab.errors.items():  # the others still answer
            print(f"error: checkpoint {where}: {message}", file=sys.stderr)
        if lab.errors and not lab.checkpoints:
            return 2
        models = None if args.model == ALL else [args.model]
        result = lab.compare(args.text, task=args.task, lang=args.lang, models=models, methods=args.methods)
    except (ValueError, OSError, RuntimeError) as err:  # InputError is a ValueError; RuntimeError: every model failed
        print(f"error: {err}", file=sys.stderr)
        return 2
    for failure in result.failures:
        print(f"error: model {failure.model} failed ({failure.error})", file=sys.stderr)
    if args.json:
        print(json.dumps([p.to_dict() for p in result.predictions], ensure_ascii=False, indent=1))
        return 1 if result.failures else 0
    for p in result.predictions:
        top = ", ".join(f"{l} {q:.2f}" for l, q in sorted(zip(p.labels, p.probs), key=lambda x: -x[1])[:3])
        print(f"{p.model:>10}  {p.label:<14} ({top})")
        for notice in p.notices:
            print(f"{'':>10}  note: {notice.format()}")
    return 1 if result.failures else 0


if __name__ == "__main__":
    sys.exit(main())
