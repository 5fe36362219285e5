"""core.analysis.batched.predict_batched: input order, eval mode, batches that change nothing, repeats run once."""

import pytest
import torch

from core.analysis.batched import _chunks, predict_batched
from core.models.nbow import NBoW, NBoWConfig


@pytest.fixture
def model():
    torch.manual_seed(0)
    return NBoW(NBoWConfig(vocab_size=30, num_classes=3, embed_dim=8, hidden=6, dropout=0.5))


SEQUENCES = [[5, 6, 7], [3], [8, 9], [4, 4, 4, 4], [2], [7, 8, 9], [10, 11]]


def test_outputs_come_back_in_input_order_as_if_each_ran_alone(model):
    alone = [predict_batched(model, [s], 1) for s in SEQUENCES]
    for exact in (False, True):
        probs, labels = predict_batched(model, SEQUENCES, batch_size=3, exact_lengths=exact)
        assert labels == [a[1][0] for a in alone]
        for row, (a, _) in zip(probs, alone):
            assert row == pytest.approx(a[0], abs=1e-6) and sum(row) == pytest.approx(1.0)


def test_the_model_runs_in_eval_mode_and_gets_its_mode_back(model):
    model.train()
    first = predict_batched(model, SEQUENCES, 4)
    assert model.training and predict_batched(model, SEQUENCES, 4) == first  # dropout off while predicting
    assert predict_batched(model, [], 4) == ([], [])


def test_exact_length_batches_hold_one_length_and_at_most_batch_size():
    lengths = [len(s) for s in SEQUENCES]
    order = sorted(range(len(SEQUENCES)), key=lengths.__getitem__)
    assert _chunks(order, lengths, 2, exact_lengths=True) == [[1, 4], [2, 6], [0, 5], [3]]
    assert _chunks(order, lengths, 3, exact_lengths=False) == [[1, 4, 2], [6, 0, 5], [3]]


def test_a_repeated_sequence_runs_once_and_answers_at_each_of_its_places(model):
    seen: list[list[int]] = []
    model.register_forward_hook(lambda _m, args, _out: seen.extend(args[0].tolist()))
    repeated = SEQUENCES + [[3], [5, 6, 7], [3]]
    probs, labels = predict_batched(model, repeated, batch_size=2, exact_lengths=True)
    assert sorted(map(tuple, seen)) == sorted(map(tuple, SEQUENCES))  # each distinct sequence once
    alone = predict_batched(model, SEQUENCES, batch_size=2, exact_lengths=True)
    assert (probs[7:], labels[7:]) == ([alone[0][1], alone[0][0], alone[0][1]], [alone[1][1], alone[1][0], alone[1][1]])
