"""Tensor CNN (Lei et al. 2015): the vectorised DP against brute-force Eq. 3 and the paper's loop,
the Fig. 5 curve against the sentence logits, padding/bucketing invariance and the authors' dropout."""

import itertools
import math

import pytest
import torch

from core.models.tensor_cnn import TensorCNN, TensorCNNConfig, TensorCNNOutput, TensorLayer, decay_matrix
from core.training.recipes import load_recipe
from core.views import LineCurves, sentiment_scores

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def seed():
    torch.manual_seed(0)


def tiny_model(num_classes: int = 5, dropout: float = 0.0, decay: float = 0.5, order: int = 3) -> TensorCNN:
    """Float64, pairwise-distinct sizes; W re-drawn because the paper's zero init would make tests vacuous."""
    config = TensorCNNConfig(
        vocab_size=23,
        num_classes=num_classes,
        embed_dim=5,
        hidden=7,
        num_layers=3,
        ngram_order=order,
        decay=decay,
        dropout=dropout,
    )
    model = TensorCNN(config).double()
    torch.nn.init.normal_(model.classifier.weight, std=1.0)
    return model.eval()


def factors(layer: TensorLayer, x: torch.Tensor) -> list[torch.Tensor]:
    """Px_t, Qx_t, Rx_t for a single sentence x (L, d): a list of (L, h)."""
    return list(layer.pqr(x).chunk(layer.order, dim=-1))


def brute_force_layer(layer: TensorLayer, x: torch.Tensor, lam: float) -> torch.Tensor:
    """Eq. 3 by enumeration: f_n[k] = Σ_{i_1<...<i_n=k} λ^(k-i_1-n+1) Π_m W_m x_{i_m}, summed over n."""
    P = factors(layer, x)
    length, hidden = P[0].shape
    total = torch.zeros(length, hidden, dtype=x.dtype)
    for k in range(length):
        for n in range(1, layer.order + 1):
            for earlier in itertools.combinations(range(k), n - 1):
                positions = (*earlier, k)
                term = torch.ones(hidden, dtype=x.dtype)
                for m, i in enumerate(positions):
                    term = term * P[m][i]
                total[k] += lam ** (k - positions[0] - n + 1) * term
    return torch.relu(layer.o(total))  # (L, h)


def loop_layer(layer: TensorLayer, x: torch.Tensor, lam: float) -> torch.Tensor:
    """The paper's §4 recursion, one position at a time (s tables start at zero)."""
    P = factors(layer, x)
    length, hidden = P[0].shape
    s = [torch.zeros(hidden, dtype=x.dtype) for _ in range(layer.order)]
    out = []
    for t in range(length):
        f = [P[0][t]]
        for m in range(1, layer.order):
            f.append(P[m][t] * s[m - 1])  # uses s_{m}[t-1]
        s = [lam * s[m] + f[m] for m in range(layer.order)]
        out.append(torch.relu(layer.o(sum(f))))
    return torch.stack(out)  # (L, h)


def loop_model_logits(model: TensorCNN, ids: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Eval-mode reference for one unpadded sentence: loop layers, mean pools, Wᵀ z̄; plus the
    per-position logits Wᵀ[z¹_t; z²_t; z³_t]."""
    x = model.embedding(torch.tensor(ids))
    states = []
    for layer in model.layers:
        x = loop_layer(layer, x, model.config.decay)
        states.append(x)
    W = model.classifier.weight  # (C, K·h)
    sentence = W @ torch.cat([z.mean(0) for z in states])  # (C,)
    positions = torch.cat(states, dim=-1) @ W.T  # (L, C)
    return sentence, positions


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("lam", [0.0, 0.3, 0.5, 0.9])
def test_dp_equals_brute_force_eq3(order, lam):
    layer = TensorLayer(5, 7, order).double()
    x = torch.randn(2, 8, 5, dtype=torch.float64)
    fast = layer(x, decay_matrix(8, lam, x))  # (2, 8, 7)
    for b in range(2):
        torch.testing.assert_close(fast[b], brute_force_layer(layer, x[b], lam), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(fast[b], loop_layer(layer, x[b], lam))


def test_decay_zero_keeps_only_consecutive_ngrams():
    layer = TensorLayer(5, 7, 3).double()
    x = torch.randn(1, 6, 5, dtype=torch.float64)
    P, Q, R = factors(layer, x[0])
    expected = P.clone()
    expected[1:] += P[:-1] * Q[1:]  # z[k-1, k]
    expected[2:] += P[:-2] * Q[1:-1] * R[2:]  # z[k-2, k-1, k]
    torch.testing.assert_close(layer(x, decay_matrix(6, 0.0, x))[0], torch.relu(layer.o(expected)))


def test_model_equals_loop_reference_and_sentence_logit_is_mean_of_positions():
    model = tiny_model()
    ids = torch.tensor([[3, 9, 4, 17, 22, 1, 8]])
    out = model(ids, torch.tensor([7]), explain=1)
    sentence, positions = loop_model_logits(model, ids[0].tolist())
    torch.testing.assert_close(out.logits[0], sentence)
    torch.testing.assert_close(out.layer_logits[0].sum(0), positions)
    torch.testing.assert_close(out.logits[0], positions.mean(0))  # the Fig. 5 curve is the model itself
    torch.testing.assert_close(model.word_curve(out, 0), positions.softmax(-1))


def test_same_prediction_alone_padded_and_bucketed():
    model = tiny_model()
    sentence = [5, 12, 7, 20, 2]
    alone = model(torch.tensor([sentence]), torch.tensor([5]), explain=1)
    padded_ids = torch.tensor([[4, 4, 9, 1, 3, 8, 6, 11], sentence + [0, 0, 0], [13, 2, 0, 0, 0, 0, 0, 0]])
    padded = model(padded_ids, torch.tensor([8, 5, 2]), explain=3)
    bucketed = model(
        torch.tensor([[1, 2, 3, 4, 5], sentence, [22, 21, 20, 19, 18]]), torch.tensor([5, 5, 5]), explain=3
    )
    for other, row in ((padded, 1), (bucketed, 1)):
        torch.testing.assert_close(other.logits[row], alone.logits[0])
        torch.testing.assert_close(model.word_curve(other, row), model.word_curve(alone, 0))
    assert model.word_curve(padded, 1).shape == (5, 5)


def test_dropout_follows_the_authors_placement():
    """Train mode equals a hand-written forward with the code's masks: words and pooled vector / √(1-p),
    inputs of layers 2+ / (1-p), pooling on the un-dropped outputs (same RNG draws, same order)."""
    p = 0.4
    model = tiny_model(dropout=p).train()
    ids, lengths, labels = torch.tensor([[3, 9, 4, 17, 22, 1]]), torch.tensor([6]), torch.tensor([2])
    torch.manual_seed(7)
    out = model(ids, lengths, labels)

    torch.manual_seed(7)
    x = model.embedding(ids)
    x = x * (torch.rand_like(x) >= p) / math.sqrt(1 - p)
    states = []
    for layer in model.layers:
        if states:
            x = states[-1] * (torch.rand_like(states[-1]) >= p) / (1 - p)
        states.append(layer(x, decay_matrix(6, model.config.decay, x)))
    pooled = torch.cat([z.mean(1) for z in states], dim=-1)
    logits = model.classifier(pooled * (torch.rand_like(pooled) >= p) / math.sqrt(1 - p))
    torch.testing.assert_close(out.logits, logits)
    torch.testing.assert_close(out.loss, torch.nn.functional.cross_entropy(logits, labels))
    assert not torch.allclose(out.logits, model.eval()(ids, lengths).logits)  # dropout did something


def test_eval_is_deterministic_and_outputs_are_detached():
    model = tiny_model(dropout=0.3)
    ids, lengths = torch.tensor([[3, 9, 4, 0], [1, 2, 3, 4]]), torch.tensor([3, 4])
    first, second = model(ids, lengths, explain=2), model(ids, lengths, explain=2)
    torch.testing.assert_close(first.logits, second.logits)
    assert isinstance(first, TensorCNNOutput) and first.loss is None
    assert first.layer_logits.shape == (2, 3, 4, 5) and not first.layer_logits.requires_grad


def test_layer_logits_only_when_asked():
    model = tiny_model()
    ids, lengths = torch.tensor([[3, 9, 4, 0], [1, 2, 3, 4]]), torch.tensor([3, 4])
    plain, explained = model(ids, lengths), model(ids, lengths, explain=1)
    assert plain.layer_logits is None and explained.layer_logits.shape == (2, 3, 4, 5)
    assert torch.equal(plain.logits, explained.logits)


@pytest.mark.parametrize("num_classes", [5, 2])
def test_views_one_curve_per_layer_plus_the_model(num_classes):
    model = tiny_model(num_classes=num_classes)
    words = ["not", "so", "good"]
    out = model(torch.tensor([[7, 1, 2, 0], [3, 4, 5, 6]]), torch.tensor([3, 4]), explain=1)
    (view,) = model.views(out, 0, words)
    assert isinstance(view, LineCurves) and view.x_labels == words
    assert list(view.curves) == ["layer 1", "layer 2", "layer 3", "all layers"]
    full, label, score_range = sentiment_scores(model.word_curve(out, 0).tolist())
    assert view.curves["all layers"] == pytest.approx(full) and view.y_label == label and view.y_range == score_range
    # layer 2's curve: its own block of W on its own states
    z2 = out.layer_logits[0, 1, :3]
    assert view.curves["layer 2"] == pytest.approx(sentiment_scores(z2.softmax(-1).tolist())[0])
    assert all(len(c) == 3 and all(score_range[0] <= v <= score_range[1] for v in c) for c in view.curves.values())


def test_paper_defaults_and_validation():
    config = TensorCNNConfig(vocab_size=10)
    assert (config.num_layers, config.ngram_order, config.hidden, config.decay, config.dropout) == (3, 3, 200, 0.5, 0.3)
    assert config.freeze_embeddings and config.unit_norm_vectors
    model = TensorCNN(config)
    assert not model.embedding.weight.requires_grad and model.classifier.bias is None
    assert torch.all(model.classifier.weight == 0) and torch.all(model.layers[0].o.bias == 0.01)
    recipe = load_recipe("tensor_cnn").training
    assert recipe["optimizer"] == "adagrad" and recipe["lr"] == 0.01
    for bad in ({"decay": 1.0}, {"decay": -0.1}, {"dropout": 1.0}, {"ngram_order": 0}, {"num_layers": 0}):
        with pytest.raises(ValueError, match=str(next(iter(bad.values())))):
            TensorCNNConfig(vocab_size=10, **bad)


def test_fits_a_tiny_batch_from_the_paper_init():
    """With W = 0 (the paper's init) the layers get no gradient at the first step; training must still go."""
    model = tiny_model(num_classes=2).train()
    torch.nn.init.zeros_(model.classifier.weight)
    before = model.layers[0].pqr.weight.detach().clone()
    ids = torch.tensor([[3, 5, 9, 0], [3, 5, 5, 9], [9, 0, 0, 0], [5, 9, 0, 0]])  # 'not ... good' vs 'good'
    lengths, labels = torch.tensor([3, 4, 1, 2]), torch.tensor([0, 0, 1, 1])
    optimizer = torch.optim.Adagrad([p for p in model.parameters() if p.requires_grad], lr=0.1)
    for _ in range(40):
        optimizer.zero_grad()
        model(ids, lengths, labels).loss.backward()
        optimizer.step()
    out = model.eval()(ids, lengths, labels)
    assert out.loss.item() < 0.05 and out.logits.argmax(-1).tolist() == labels.tolist()
    assert not torch.equal(model.layers[0].pqr.weight, before)
