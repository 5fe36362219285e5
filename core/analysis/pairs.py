"""Minimal pairs: two sentences that differ in a few words, each model's prediction on both, the change of
the expected sentiment from the first to the second, and the two token lists aligned so that the words they
share sit at one position and the words only one sentence has stand alone.

    comparison = compare_pair(lab, "The film is good.", "The film is not good.")
    [(p.model, p.a.label, p.b.label, p.difference) for p in comparison.pairs]

The front end draws this data (demo/tabs/pairs.py); a probe failure of an invariance or directional test
is such a pair (core.analysis.probes.Case.text and .variant).
"""

from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher

from core.notices import InputError
from core.predict import Comparison, Lab, ModelFailure, Plan, Prediction, Request
from core.views import sentiment_scores

SENTENCES = ("a", "b")


class PairInputError(InputError):
    """One sentence of the pair cannot be analysed; `sentence` says which ("a" or "b"), `notice` why."""

    def __init__(self, sentence: str, error: InputError):
        self.sentence = sentence
        super().__init__(error.notice.code, **error.notice.params)


@dataclass
class WordAlignment:
    """The words of two sentences on one axis: `columns[x]` is (index in a, index in b) of the words at
    position x; None where only the other sentence has a word there."""

    words_a: list[str]
    words_b: list[str]
    columns: list[tuple[int | None, int | None]]

    def positions(self, sentence: str) -> list[int]:
        """The position of each word of sentence "a" or "b", in its order."""
        side = SENTENCES.index(sentence)
        return [x for x, column in enumerate(self.columns) if column[side] is not None]

    def labels(self) -> list[str]:
        """The word at each position: the shared word, or the one sentence's own."""
        words = []
        for i, j in self.columns:
            if i is None:
                assert j is not None  # a column holds a word of a, of b or of both
                words.append(self.words_b[j])
            else:
                words.append(self.words_a[i])
        return words


@dataclass
class PairedPrediction:
    """One model on both sentences."""

    model: str
    a: Prediction
    b: Prediction
    score_a: float  # expected sentiment of sentence a (core.views.sentiment_scores of its probabilities)
    score_b: float
    difference: float  # score_b - score_a


@dataclass
class PairComparison:
    task: str
    score_label: str  # what score_a, score_b and the curves' scores are
    score_range: tuple[float, float]
    alignment: WordAlignment
    pairs: list[PairedPrediction]  # in the order of Lab.models(task)
    failures: list[ModelFailure]  # models that broke on either sentence; the others still answered


def align_words(words_a: list[str], words_b: list[str]) -> WordAlignment:
    """Align two token lists by their matching blocks (difflib's longest-matching-block recursion, an
    approximation of the longest common subsequence): a shared word takes one position; a replaced word
    counts as removed and inserted, so each stands alone. Deterministic, no junk heuristic."""
    columns: list[tuple[int | None, int | None]] = []
    for tag, a0, a1, b0, b1 in SequenceMatcher(None, words_a, words_b, autojunk=False).get_opcodes():
        if tag == "equal":
            columns += [(a0 + k, b0 + k) for k in range(a1 - a0)]
        else:
            columns += [(i, None) for i in range(a0, a1)] + [(None, j) for j in range(b0, b1)]
    return WordAlignment(list(words_a), list(words_b), columns)


def _compare(
    lab: Lab,
    sentence: str,
    text: str,
    task: str | None,
    lang: str | None,
    models: list[str] | None,
    run: Callable[[Plan], Comparison],
) -> Comparison:
    try:
        plan = lab.plan_compare(Request(text, task=task, lang=lang, models=models))
    except InputError as err:
        raise PairInputError(sentence, err) from None
    return run(plan)


def compare_pair(
    lab: Lab,
    text_a: str,
    text_b: str,
    task: str | None = None,
    lang: str | None = None,
    models: list[str] | None = None,
    run: Callable[[Plan], Comparison] = Plan.run_here,
) -> PairComparison:
    """`models` (default: every model of the task) on both sentences. The task is resolved from sentence a
    (as Lab.compare does) and sentence b goes to the same models. Bad input in either sentence raises
    PairInputError naming it; a model that fails on either sentence is listed in `failures`. `run` answers each
    sentence's Plan: here, one model after another, unless a server passes its own scheduler."""
    first = _compare(lab, "a", text_a, task, lang, models, run)
    task = first.predictions[0].task
    second = _compare(lab, "b", text_b, task, lang, models, run)
    by_model = {p.model: p for p in second.predictions}
    failures = first.failures + [f for f in second.failures if f.model not in {g.model for g in first.failures}]
    pairs = []
    labels = first.predictions[0].labels
    for a in first.predictions:
        b = by_model.get(a.model)
        if b is None:
            continue  # it failed on sentence b: in failures
        (score_a, score_b), score_label, score_range = sentiment_scores([a.probs, b.probs], labels)
        pairs.append(PairedPrediction(a.model, a, b, score_a, score_b, score_b - score_a))
    if not pairs:
        raise RuntimeError("; ".join(f"{f.model}: {f.error}" for f in failures))
    alignment = align_words(
        [t.text for t in first.predictions[0].tokens], [t.text for t in second.predictions[0].tokens]
    )
    return PairComparison(task, score_label, score_range, alignment, pairs, failures)
