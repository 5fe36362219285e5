"""mRNN (Irsoy & Cardie 2015): identity tests against loop references on tiny float64 inputs."""

import json

import pytest
import torch
import torch.func
from torch.nn import functional as F

from core.models.mrnn import MRNN, MRNNConfig, decode_ordinal, ordinal_probs
from core.views import LineCurves, Trajectory, sentiment_scores
from core.wire import plain

V, D, H, C = 23, 5, 7, 5  # vocab, embed, hidden, classes: pairwise distinct


@pytest.fixture(autouse=True)
def seed():
    torch.manual_seed(0)


def make_model(head="softmax", activation="tanh", **overrides) -> MRNN:
    settings = {"num_classes": C, "embed_dim": D, "hidden": H, "activation": activation, "head": head, "dropout": 0.0}
    config = MRNNConfig(vocab_size=V, **{**settings, **overrides})
    model = MRNN(config).double().eval()
    with torch.no_grad():  # no parameter left at a special value (h_0 starts at 0, biases near 0)
        model.h0.normal_()
        model.W.bias.normal_()
        model.out.bias.normal_()
    return model


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([6, 3, 8, 1])
    ids = torch.randint(1, V, (4, 8))
    ids[torch.arange(8)[None, :] >= lengths[:, None]] = 0
    return ids, lengths


def reference_states(model: MRNN, ids: torch.Tensor, n: int) -> torch.Tensor:
    """Eq. 5 for one sentence, one slice of A at a time: h_t,i = f(x_tᵀ A[i] h_{t-1} + (W x_t + V h_{t-1} + b)_i)."""
    f = {"tanh": torch.tanh, "relu": torch.relu, "identity": lambda z: z}[model.config.activation]
    A, W, b, Vh = model.A, model.W.weight, model.W.bias, model.V.weight
    h, states = model.h0, []
    for t in range(n):
        x = model.embedding.weight[ids[t]]
        bilinear = torch.stack([x @ A[i] @ h for i in range(A.shape[0])])
        h = f(bilinear + W @ x + Vh @ h + b)
        states.append(h)
    return torch.stack(states)  # (n, dh)


@pytest.mark.parametrize("training", [False, True])  # eval: word operators per distinct word; train: per position
@pytest.mark.parametrize("activation", ["tanh", "relu", "identity"])
@pytest.mark.parametrize("head", ["softmax", "ordinal"])
@torch.no_grad()
def test_vectorised_steps_equal_slice_loop(head, activation, training):
    model = make_model(head, activation).train(training)  # dropout 0: both modes compute the same function
    ids, lengths = batch()
    out = model(ids, lengths)
    for b, n in enumerate(lengths.tolist()):
        ref = reference_states(model, ids[b], n)
        torch.testing.assert_close(out.states[b, :n], ref)
        torch.testing.assert_close(out.states[b, n:], ref[-1].expand(8 - n, -1))  # frozen after the last word
        z = model.out(ref)  # Eq. 6 at every step, (n, K)
        probs = z.softmax(-1) if head == "softmax" else ordinal_probs(z.sigmoid())
        torch.testing.assert_close(out.step_probs[b, :n], probs)
        torch.testing.assert_close(out.logits[b].softmax(-1), probs[-1])


@torch.no_grad()
def test_matrix_space_special_case():
    """§4.3, Eq. 12: with W = V = b = 0 and f = identity, h_T = M(w_T)…M(w_1) h_0 with M(w) = xᵀA."""
    model = make_model(activation="identity")
    model.W.weight.zero_()
    model.W.bias.zero_()
    model.V.weight.zero_()
    ids, lengths = batch()
    out = model(ids, lengths)
    for b, n in enumerate(lengths.tolist()):
        operators = [torch.einsum("j,ijk->ik", model.embedding.weight[w], model.A) for w in ids[b, :n]]
        sentence = torch.linalg.multi_dot(operators[::-1]) if n > 1 else operators[0]  # M(s), (dh, dh)
        h_T = sentence @ model.h0
        torch.testing.assert_close(out.states[b, -1], h_T)
        torch.testing.assert_close(out.logits[b], model.out.weight @ h_T + model.out.bias)  # y = U h_T + c


def test_decode_ordinal_paper_example():
    assert decode_ordinal(torch.tensor([1.0, 0.0, 1.0, 0.0])).item() == 1
    assert decode_ordinal(torch.tensor([0.9, 0.2, 0.7, 0.1])).item() == 1
    assert decode_ordinal(torch.tensor([0.5, 0.5, 0.49, 0.9])).item() == 2  # "0 if less than 0.5, 1 otherwise"
    assert decode_ordinal(torch.tensor([[0.1, 0.9, 0.9, 0.9], [0.6, 0.7, 0.8, 0.9]])).tolist() == [0, 4]


def test_decode_ordinal_matches_paper_rule_loop():
    values = torch.rand(200, 4)
    values[::7, 1] = 0.5
    for row, label in zip(values.tolist(), decode_ordinal(values).tolist()):
        bits = [0 if v < 0.5 else 1 for v in row]  # binarise
        for i in range(len(bits)):  # the first 0 zeroes every higher entry
            if bits[i] == 0:
                bits[i:] = [0] * (len(bits) - i)
                break
        assert label == sum(bits)


def test_ordinal_probs_are_a_distribution_whose_median_is_the_decoded_label():
    cumulative = torch.rand(300, C - 1, dtype=torch.float64)
    probs = ordinal_probs(cumulative)
    assert (probs >= 0).all()
    torch.testing.assert_close(probs.sum(-1), torch.ones(300, dtype=torch.float64))
    median = (probs.cumsum(-1) > 0.5).long().argmax(-1)  # smallest k with P(y <= k) > 1/2
    assert torch.equal(median, decode_ordinal(cumulative))
    # monotone outputs are read as P(y > k) unchanged
    monotone = cumulative.sort(-1, descending=True).values
    torch.testing.assert_close(1 - ordinal_probs(monotone).cumsum(-1)[:, :-1], monotone)


def test_ordinal_head_loss_logits_and_labels():
    model = make_model("ordinal")
    ids, lengths = batch()
    labels = torch.tensor([0, 2, 4, 3])
    out = model(ids, lengths, labels)
    s = out.cumulative[:, -1]  # (B, C-1) σ outputs of the last step
    targets = torch.tensor([[0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.float64)
    bce = -(targets * s.log() + (1 - targets) * (1 - s).log()).sum(-1).mean()
    torch.testing.assert_close(out.loss.detach(), bce)
    torch.testing.assert_close(out.logits.softmax(-1).detach(), ordinal_probs(s))
    assert torch.equal(model.predict_labels(out), decode_ordinal(s))


def test_softmax_head_loss_and_labels():
    model = make_model()
    ids, lengths = batch()
    labels = torch.tensor([0, 2, 4, 3])
    out = model(ids, lengths, labels)
    torch.testing.assert_close(out.loss, F.cross_entropy(out.logits, labels))
    assert torch.equal(model.predict_labels(out), out.logits.argmax(-1))


@pytest.mark.parametrize("head", ["softmax", "ordinal"])
@torch.no_grad()
def test_same_prediction_alone_and_in_batch(head):
    model = make_model(head)
    ids, lengths = batch()
    ids[1, 3:] = torch.randint(1, V, (5,))  # whatever sits in the padding must not matter
    together = model(ids, lengths)
    for b, n in enumerate(lengths.tolist()):
        alone = model(ids[b : b + 1, :n], lengths[b : b + 1])
        torch.testing.assert_close(together.logits[b : b + 1], alone.logits)
        torch.testing.assert_close(model.word_curve(together, b), model.word_curve(alone, 0))
        assert model.predict_labels(together)[b] == model.predict_labels(alone)[0]


@pytest.mark.parametrize("head", ["softmax", "ordinal"])
@torch.no_grad()
def test_word_curve_is_the_prefix_prediction(head):
    """y_t (Eq. 6) after word t is exactly the model's prediction for the prefix w_1..w_t."""
    model = make_model(head)
    ids, lengths = batch()
    curve = model.word_curve(model(ids, lengths), 2)
    assert curve.shape == (8, C)
    for t in range(1, 9):
        prefix = model(ids[2:3, :t], torch.tensor([t]))
        torch.testing.assert_close(curve[t - 1], prefix.logits[0].softmax(-1))


@pytest.mark.parametrize("head", ["softmax", "ordinal"])
@torch.no_grad()
def test_views(head):
    model = make_model(head)
    ids, lengths = batch()
    out = model(ids, lengths)
    words = [f"w{i}" for i in range(6)]
    views = model.views(out, 0, words)
    trajectory = views[0]
    assert isinstance(trajectory, Trajectory) and trajectory.words == words
    assert trajectory.scores == pytest.approx(sentiment_scores(model.word_curve(out, 0).tolist())[0])
    # PCA reference: project the centred states on the top two right singular vectors (up to sign)
    states = out.states[0, :6]
    centred = states - states.mean(0)
    _, _, vh = torch.linalg.svd(centred)
    reference = centred @ vh[:2].T
    points = torch.tensor(trajectory.points, dtype=torch.float64)
    torch.testing.assert_close(points.abs(), reference.abs())
    assert (points[-1] >= 0).all()
    assert all(isinstance(v, float) for point in trajectory.points for v in point)
    if head == "ordinal":
        curves = views[1]
        assert isinstance(curves, LineCurves) and len(curves.curves) == C - 1
        assert curves.curves["P(y > 1)"] == pytest.approx(out.cumulative[0, :6, 1].tolist())
    else:
        assert len(views) == 1
    json.dumps([plain(v) for v in views])
    one_word = model.views(out, 3, ["w"])[0]  # a one-word sentence has a single point at the origin
    assert one_word.points == [(0.0, 0.0)]


def test_gradients_reach_every_trained_tensor():
    model = make_model(dropout=0.3)
    model.train()
    ids, lengths = batch()
    model(ids, lengths, torch.tensor([0, 1, 2, 3])).loss.backward()
    for name, p in model.named_parameters():
        if name == "embedding.weight":
            assert not p.requires_grad and p.grad is None  # §5.1: fixed word vectors
        else:
            assert p.grad is not None and p.grad.abs().sum() > 0, name
    trained = make_model(freeze_embeddings=False)
    trained(ids, lengths, torch.tensor([0, 1, 2, 3])).loss.backward()
    assert trained.embedding.weight.grad.is_sparse


@pytest.mark.parametrize("head", ["softmax", "ordinal"])
def test_gradients_match_finite_differences(head):
    model = make_model(head, embed_dim=3, hidden=4)  # gradcheck perturbs every entry: keep them few
    ids, lengths = batch()
    ids, lengths, labels = ids[:, :4], lengths.clamp(max=4), torch.tensor([0, 1, 2, 4])
    names = ["A", "V.weight", "W.weight", "h0", "out.weight"]

    def loss(*tensors):
        return torch.func.functional_call(model, dict(zip(names, tensors)), (ids, lengths, labels)).loss

    params = dict(model.named_parameters())
    assert torch.autograd.gradcheck(loss, tuple(params[n].detach().clone().requires_grad_() for n in names))


def test_ordinal_head_overfits_a_few_sentences():
    model = make_model("ordinal")
    model.train()
    ids, lengths = batch()
    labels = torch.tensor([0, 2, 4, 3])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    for _ in range(40):
        loss = model(ids, lengths, labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    out = model(ids, lengths, labels)
    assert out.loss.item() < 0.2
    assert torch.equal(model.predict_labels(out), labels)


@pytest.mark.parametrize(
    "bad", [{"activation": "sigmoid"}, {"head": "softmax2"}, {"dropout": 1.0}, {"hidden": 0}, {"num_classes": 1}]
)
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError, match=str(list(bad.values())[0])):
        MRNNConfig(vocab_size=V, **bad)
