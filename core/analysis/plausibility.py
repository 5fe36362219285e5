"""Plausibility: how far a word attribution agrees with the Stanford Sentiment Treebank's human labels.

Faithfulness (AOPC, core.analysis.attribution) asks whether the words a method ranks first are the ones the
model's prediction rests on; plausibility asks whether they are the ones the annotators marked. The two
differ: a faithful explanation of a wrong reason is implausible. Both are per sentence, then averaged.

Definitions, for one sentence of n words with its gold tree T, the model's predicted class c and a method's
scores s_1..s_n (positive = supports c):
- polarity(label): a fine SST label 0, 1 -> -1 (negative), 2 -> 0 (neutral), 3, 4 -> +1 (positive); an SST-2
  class 0 -> -1, 1 -> +1. The orientation o = polarity(c); a sentence predicted neutral (o = 0) has no side
  to agree with and gets no score (None).
- gold word polarity g_i = o * polarity(label of the leaf holding word i): +1 when the annotators read the
  word alone as supporting the prediction, -1 as opposing it, 0 neutral.
- rank agreement = Kendall's tau-b between (s_i) and (g_i), in [-1, 1], 0 expected of a random ranking; None
  when either side is constant (e.g. every word neutral). g has many ties, so its maximum is below 1 unless
  s ties the same words.
- a word's phrase = the smallest node of T holding it (its leaf included, the root not) whose gold label is
  not neutral; agreeing words A = the words whose phrase's polarity equals o: the words inside the phrases the
  annotators labelled the prediction's way. The smallest: "bad" in the positive "not bad" is negative evidence,
  "not" positive. The root is left out: when the whole sentence agrees, every word would.
- precision@k = |top-k words by s (ties: left to right) within A| / k, k = min(TOP_K, n); its chance level
  (the expectation for a random ranking) is |A| / n.
"""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from core.data.sst import Tree

TOP_K = 3
FINE_CLASSES = 5


def polarity(label: int, classes: int = FINE_CLASSES) -> int:
    """-1, 0 or +1 for a class of SST-5 (0..4) or SST-2 (0..1)."""
    if classes == 2:
        return 1 if label == 1 else -1
    return (label > 2) - (label < 2)


def word_labels(tree: Tree) -> list[int]:
    """The fine gold label of each word: its leaf's (a leaf of several words gives each its label)."""
    return [node.label for node in tree.nodes() if not node.children for _ in node.words]


def word_polarities(tree: Tree) -> list[int]:
    return [polarity(label) for label in word_labels(tree)]


def agreeing_words(tree: Tree, orientation: int) -> set[int]:
    """Positions whose smallest non-neutral, non-root node has polarity `orientation` (module docstring)."""
    found: set[int] = set()

    def visit(node: Tree, offset: int, inherited: int) -> None:  # inherited: the nearest polar ancestor's polarity
        nearest = polarity(node.label) or inherited
        if not node.children and nearest == orientation:
            found.update(range(offset, offset + len(node.words)))
        for child in node.children:
            visit(child, offset, nearest)
            offset += len(child.words)

    for child, offset in zip(tree.children, _offsets(tree)):
        visit(child, offset, 0)
    if not tree.children and polarity(tree.label) == orientation:  # a one-leaf sentence is its own phrase
        found.update(range(len(tree.words)))
    return found


def _offsets(tree: Tree) -> list[int]:
    """Where each child of `tree` starts among its words."""
    starts, offset = [], 0
    for child in tree.children:
        starts.append(offset)
        offset += len(child.words)
    return starts


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b (ties counted as in Kendall 1945); None when x or y is constant."""
    concordant = discordant = ties_x = ties_y = 0
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = (x[i] > x[j]) - (x[i] < x[j]), (y[i] > y[j]) - (y[i] < y[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                ties_x += 1
            elif dy == 0:
                ties_y += 1
            elif dx == dy:
                concordant += 1
            else:
                discordant += 1
    pairs_x, pairs_y = concordant + discordant + ties_y, concordant + discordant + ties_x  # pairs untied in x, in y
    if not pairs_x or not pairs_y:
        return None
    return (concordant - discordant) / (pairs_x * pairs_y) ** 0.5


@dataclass
class Plausibility:
    rank_agreement: float | None  # Kendall's tau-b of scores vs oriented gold word polarity
    precision: float | None  # precision@k of the top-k words against the agreeing words
    chance: float | None  # precision@k a random ranking gets on average: |A| / n


def plausibility(
    tree: Tree, scores: list[float], predicted: int, classes: int = FINE_CLASSES, k: int = TOP_K
) -> Plausibility:
    """One sentence's agreement of `scores` (one per word of `tree`) with its gold labels, for the model's
    `predicted` class among `classes` (5 or 2)."""
    if len(scores) != len(tree.words):
        raise ValueError(f"{len(scores)} scores for a tree of {len(tree.words)} words")
    orientation = polarity(predicted, classes)
    if orientation == 0:
        return Plausibility(None, None, None)
    gold = [orientation * g for g in word_polarities(tree)]
    agreeing = agreeing_words(tree, orientation)
    top = sorted(range(len(scores)), key=lambda j: -scores[j])[: min(k, len(scores))]
    return Plausibility(
        kendall_tau_b(scores, gold), sum(j in agreeing for j in top) / len(top), len(agreeing) / len(scores)
    )


def summarize(found: list[Plausibility]) -> dict:
    """Means over the sentences that have each score, and how many had one."""

    def mean(values: list[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return statistics.mean(present) if present else None

    return {
        "rank_agreement": mean([p.rank_agreement for p in found]),
        "rank_sentences": sum(p.rank_agreement is not None for p in found),
        "precision": mean([p.precision for p in found]),
        "chance": mean([p.chance for p in found]),
        "precision_sentences": sum(p.precision is not None for p in found),
    }
