"""Classification metrics, and running a model over a list of examples."""

from core.analysis.batched import predict_batched
from core.data import Example
from core.data.vocab import Vocab
from core.models.base import Intervention


def classification_report(gold: list[int], pred: list[int], labels: list[str]) -> dict:
    """Accuracy, per-class precision/recall/F1 and the confusion matrix (rows gold, columns predicted)."""
    n = len(labels)
    confusion = [[0] * n for _ in range(n)]
    for g, p in zip(gold, pred):
        confusion[g][p] += 1
    per_class = {}
    for c, name in enumerate(labels):
        tp = confusion[c][c]
        predicted = sum(confusion[r][c] for r in range(n))
        actual = sum(confusion[c])
        precision = tp / predicted if predicted else 0.0
        recall = tp / actual if actual else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class[name] = {"precision": precision, "recall": recall, "f1": f1, "support": actual}
    correct = sum(confusion[c][c] for c in range(n))
    # mean |predicted - gold| over ordered classes: Irsoy & Cardie's "ranking loss" (§4.2)
    ranking_loss = sum(abs(g - p) for g, p in zip(gold, pred)) / max(1, len(gold))
    return {
        "accuracy": correct / max(1, len(gold)),
        "n": len(gold),
        "ranking_loss": ranking_loss,
        "per_class": per_class,
        "confusion": confusion,
    }


def predict_examples(
    model, examples: list[Example], vocab: Vocab, batch_size: int = 256, intervention: Intervention | None = None
) -> tuple[list[int], list[int]]:
    """(gold, predicted) labels in the examples' order, from exact-length batches (no padding), as in training;
    the model under `intervention` (core.models.base) when one is given."""
    sequences = [vocab.encode(e.words) for e in examples]
    _, pred = predict_batched(model, sequences, batch_size, exact_lengths=True, intervention=intervention)
    return [e.label for e in examples], pred


def evaluate(
    model, examples: list[Example], vocab: Vocab, labels: list[str], intervention: Intervention | None = None
) -> dict:
    return classification_report(*predict_examples(model, examples, vocab, intervention=intervention), labels)


def binary_from_fine(fine_probs: list[list[float]]) -> list[int]:
    """SST-2 labels (0 negative, 1 positive) read from SST-5 class probabilities: positive when
    p(positive) + p(very positive) > p(very negative) + p(negative), the rule in Irsoy's own code."""
    return [int(p[3] + p[4] > p[0] + p[1]) for p in fine_probs]


def evaluate_as_binary(model, examples: list[Example], vocab: Vocab) -> dict:
    """An SST-5 model on SST-2 examples, read through `binary_from_fine`: accuracy and count."""
    probs, _ = predict_batched(model, [vocab.encode(e.words) for e in examples], 256, exact_lengths=True)
    pred = binary_from_fine(probs)
    return {"accuracy": sum(p == e.label for p, e in zip(pred, examples)) / max(1, len(examples)), "n": len(examples)}
