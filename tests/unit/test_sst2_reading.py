"""An SST-5 model read as SST-2 (core.analysis.metrics.binary_from_fine): positive exactly when the two positive
classes outweigh the two negative ones, whatever the neutral class holds."""

import random

import torch

from core.analysis.batched import predict_batched
from core.analysis.metrics import binary_from_fine, evaluate_as_binary
from core.data import Example
from core.data.vocab import Vocab
from core.models.nbow import NBoW, NBoWConfig


def test_rule_against_brute_force():
    rng = random.Random(0)
    for _ in range(500):
        raw = [rng.random() for _ in range(5)]
        probs = [x / sum(raw) for x in raw]
        negative, positive = probs[0] + probs[1], probs[3] + probs[4]
        assert binary_from_fine([probs]) == [1 if positive > negative else 0]


def test_ties_and_neutral_mass_read_negative():
    assert binary_from_fine([[0.1, 0.1, 0.6, 0.1, 0.1], [0.0, 0.0, 1.0, 0.0, 0.0]]) == [0, 0]
    assert binary_from_fine([[0.0, 0.2, 0.55, 0.25, 0.0]]) == [1]


def test_evaluate_as_binary_counts_the_rule_on_a_model():
    torch.manual_seed(0)
    vocab = Vocab.build([["good", "bad", "film"]])
    model = NBoW(NBoWConfig(vocab_size=len(vocab), num_classes=5, embed_dim=8, hidden=4))
    examples = [Example(("good", "film"), 1), Example(("bad", "film"), 0), Example(("film",), 1)]
    probs, _ = predict_batched(model, [vocab.encode(e.words) for e in examples], 8, exact_lengths=True)
    expected = sum(p == e.label for p, e in zip(binary_from_fine(probs), examples)) / 3
    assert evaluate_as_binary(model, examples, vocab) == {"accuracy": expected, "n": 3}
