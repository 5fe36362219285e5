"""AdaSent: the batched pyramid against a unit-by-unit loop of the paper's equations, the
distributions it produces, the scope of each unit, padding/batch invariance and the Frobenius groups."""

import json

import pytest
import torch

from core.models.adasent import AdaSent, AdaSentConfig
from core.training.recipes import load_recipe
from core.views import Pyramid, sentiment_scores
from core.wire import plain

V, d, D, H, C = 23, 5, 7, 6, 3  # pairwise-distinct tiny sizes


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def make_model(pooling: str = "mean", num_classes: int = C, **overrides) -> AdaSent:
    config = AdaSentConfig(
        vocab_size=V,
        num_classes=num_classes,
        embed_dim=d,
        hidden_dim=D,
        classifier_hidden=H,
        pooling=pooling,
        **overrides,
    )
    model = AdaSent(config).double().eval()
    with torch.no_grad():  # non-zero biases, so a wrong bias path fails
        for p in (model.b_W, model.b_G):
            p.uniform_(-0.5, 0.5)
    return model


def batch(sentences: list[list[int]], pad: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(s) for s in sentences])
    ids = torch.full((len(sentences), int(lengths.max())), pad, dtype=torch.long)
    for row, s in enumerate(sentences):
        ids[row, : len(s)] = torch.tensor(s)
    return ids, lengths


def reference(model: AdaSent, words: list[int]) -> dict:
    """The paper's equations unit by unit, for one unpadded sentence, with plain vector ops."""
    emb = model.embedding.weight[torch.tensor(words)]
    levels = [[model.U.weight @ e for e in emb]]  # level 1: U emb(x_j)
    gates = []
    for t in range(2, len(words) + 1):
        prev, level, level_gates = levels[-1], [], []
        for j in range(len(words) - t + 1):
            left, right = prev[j], prev[j + 1]
            h_hat = torch.tanh(model.W_L @ left + model.W_R @ right + model.b_W)  # Eq. 6
            w = torch.softmax(model.G_L @ left + model.G_R @ right + model.b_G, 0)  # Eq. 7
            level.append(w[0] * left + w[1] * right + w[2] * h_hat)  # Eq. 5
            level_gates.append(w)
        levels.append(level)
        gates.append(torch.stack(level_gates))
    first, _, second = model.classifier

    def g(v):  # the MLP classifier, probabilities
        return torch.softmax(second.weight @ torch.tanh(first.weight @ v + first.bias) + second.bias, 0)

    if model.config.pooling == "mean":
        pooled = [torch.stack(level).mean(0) for level in levels]
    else:
        pooled = [torch.stack(level).max(0).values for level in levels]
    level_probs = torch.stack([g(v) for v in pooled])  # (n, C)
    gamma = torch.softmax(torch.stack([model.level_gate.weight[0] @ v for v in pooled]), 0)  # (n,)
    return {
        "probs": (gamma[:, None] * level_probs).sum(0),  # p(C|x) = sum_t gamma_t p(C|H=t)
        "gamma": gamma,
        "level_probs": level_probs,
        "unit_probs": [torch.stack([g(u) for u in level]) for level in levels],
        "gates": gates,
    }


SENTENCES = [[3, 7, 1, 9, 12, 4], [5], [8, 2, 11, 6], [14, 14, 2]]


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_matches_unit_by_unit_reference(pooling):
    model = make_model(pooling)
    ids, lengths = batch(SENTENCES)
    labels = torch.tensor([0, 2, 1, 2])
    out = model(ids, lengths, labels, explain=len(SENTENCES))
    nll = []
    for b, words in enumerate(SENTENCES):
        n, ref = len(words), reference(model, words)
        torch.testing.assert_close(out.logits[b].softmax(-1), ref["probs"])
        torch.testing.assert_close(out.gamma[b, :n], ref["gamma"])
        torch.testing.assert_close(out.level_probs[b, :n], ref["level_probs"])
        for t in range(1, n + 1):
            torch.testing.assert_close(out.unit_probs[t - 1][b, : n - t + 1], ref["unit_probs"][t - 1])
        for t in range(2, n + 1):
            torch.testing.assert_close(out.gates[t - 2][b, : n - t + 1], ref["gates"][t - 2])
        nll.append(-ref["probs"][labels[b]].log())
    torch.testing.assert_close(out.loss, torch.stack(nll).mean())  # the paper's -log of the mixture


def test_gates_and_level_beliefs_are_distributions():
    model = make_model()
    ids, lengths = batch(SENTENCES)
    out = model(ids, lengths)
    assert len(out.gates) == ids.shape[1] - 1
    for gates in out.gates:
        assert (gates >= 0).all()
        torch.testing.assert_close(gates.sum(-1), torch.ones(gates.shape[:2], dtype=gates.dtype))
    real_level = torch.arange(ids.shape[1])[None, :] < lengths[:, None]
    torch.testing.assert_close(out.gamma.sum(-1), torch.ones(len(SENTENCES), dtype=out.gamma.dtype))
    assert (out.gamma[~real_level] == 0).all() and (out.gamma[real_level] > 0).all()
    torch.testing.assert_close(out.level_probs.sum(-1), torch.ones(out.level_probs.shape[:2], dtype=out.gamma.dtype))


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_unit_depends_only_on_its_span(pooling):
    model = make_model(pooling)
    words = SENTENCES[0]
    n = len(words)
    base = model(*batch([words]), explain=1)
    for k in range(n):
        edited = list(words)
        edited[k] = 20 + k % 3  # tokens not in the sentence
        out = model(*batch([edited]), explain=1)
        for t in range(1, n + 1):
            for j in range(n - t + 1):
                covers = j <= k <= j + t - 1
                same = torch.allclose(out.unit_probs[t - 1][0, j], base.unit_probs[t - 1][0, j], rtol=0, atol=1e-12)
                assert same != covers, f"unit (t={t}, j={j}) vs word {k}"
                if t > 1:
                    same_gate = torch.equal(out.gates[t - 2][0, j], base.gates[t - 2][0, j])
                    assert same_gate != covers, f"gates of unit (t={t}, j={j}) vs word {k}"


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_same_prediction_alone_and_in_a_batch(pooling):
    model = make_model(pooling)
    ids, lengths = batch(SENTENCES, pad=22)  # pads are a real, non-zero token: it must still never count
    out = model(ids, lengths, explain=len(SENTENCES))
    for b, words in enumerate(SENTENCES):
        alone = model(*batch([words]), explain=1)
        n = len(words)
        torch.testing.assert_close(out.logits[b], alone.logits[0])
        torch.testing.assert_close(out.gamma[b, :n], alone.gamma[0])
        torch.testing.assert_close(model.word_curve(out, b), model.word_curve(alone, 0))
        for t in range(2, n + 1):
            torch.testing.assert_close(out.gates[t - 2][b, : n - t + 1], alone.gates[t - 2][0])
    order = torch.tensor([2, 0, 3, 1])
    torch.testing.assert_close(model(ids[order], lengths[order]).logits, out.logits[order])


def test_padding_gets_no_gradient():
    model = make_model("max").train()
    ids, lengths = batch(SENTENCES, pad=22)
    model(ids, lengths, torch.tensor([0, 1, 2, 0])).loss.backward()
    grad = model.embedding.weight.grad.coalesce().to_dense()  # sparse: the embedding is fine-tuned
    dense = [p for p in model.parameters() if p is not model.embedding.weight]
    assert torch.isfinite(grad).all() and all(torch.isfinite(p.grad).all() for p in dense)
    assert (grad[22] == 0).all() and (grad[3] != 0).any()


def test_frobenius_penalty_only_on_recurrent_matrices():
    model = make_model().float().train()
    groups = model.param_groups(weight_decay=0.1)
    decayed = [p for g in groups if g["weight_decay"] > 0 for p in g["params"]]
    assert len(decayed) == 2 and decayed[0] is model.W_L and decayed[1] is model.W_R
    grouped = [id(p) for g in groups for p in g["params"]]
    assert sorted(grouped) == sorted(id(p) for p in model.parameters())  # each parameter exactly once
    optimizer = torch.optim.Adagrad(groups, lr=0.1)  # the sparse embedding group must be accepted
    with torch.no_grad():  # zero data gradient: only the penalty moves anything
        before = {name: p.clone() for name, p in model.named_parameters()}
    model(*batch(SENTENCES)).logits.sum().mul(0).backward()
    optimizer.step()
    moved = {name for name, p in model.named_parameters() if not torch.equal(p, before[name])}
    assert moved == {"W_L", "W_R"}
    frozen = AdaSent(AdaSentConfig(vocab_size=V, embed_dim=d, hidden_dim=D, freeze_embeddings=True))
    assert all(frozen.embedding.weight is not p for g in frozen.param_groups(0.1) for p in g["params"])


def test_word_curve_and_pyramid_view():
    model = make_model(num_classes=5)
    words = SENTENCES[2]
    ids, lengths = batch(SENTENCES)
    out = model(ids, lengths, explain=len(SENTENCES))
    curve = model.word_curve(out, 2)
    assert curve.shape == (len(words), 5)
    torch.testing.assert_close(curve, out.unit_probs[0][2, : len(words)])
    [view] = model.views(out, 2, [f"w{i}" for i in words])
    assert isinstance(view, Pyramid)
    n = len(words)
    assert [len(level) for level in view.scores] == list(range(n, 0, -1))
    assert view.gates[0] == [] and [len(level) for level in view.gates[1:]] == list(range(n - 1, 0, -1))
    assert all(abs(sum(g) - 1) < 1e-9 for level in view.gates for g in level)
    assert abs(sum(view.level_beliefs) - 1) < 1e-9 and len(view.level_probs) == n
    expected, label, score_range = sentiment_scores(out.unit_probs[n - 1][2, :1].tolist())
    assert view.scores[-1] == expected and view.score_label == label and view.score_range == score_range
    json.dumps(plain(view))  # plain Python only


def test_long_sentence_explain_flag_and_training_mode():
    model = make_model()
    ids = torch.randint(1, V, (1, 300))
    with torch.no_grad():
        out = model(ids, torch.tensor([300]), explain=1)
    assert len(out.unit_probs) == 300 and torch.isfinite(out.logits).all()
    torch.testing.assert_close(out.gamma.sum(), torch.tensor(1.0, dtype=out.gamma.dtype))
    # per-unit probabilities are an explanation: skipped unless asked for, and the logits do not change
    assert model(ids, torch.tensor([300])).unit_probs == []
    torch.testing.assert_close(model(ids, torch.tensor([300])).logits, out.logits)
    # and computed for the first `explain` sentences only, the same as for all of them
    first, every = model(*batch(SENTENCES), explain=1), model(*batch(SENTENCES), explain=len(SENTENCES))
    assert [level.shape[0] for level in first.unit_probs] == [1] * len(first.unit_probs)
    for level_first, level_every in zip(first.unit_probs, every.unit_probs):
        torch.testing.assert_close(level_first[0], level_every[0])
    model.train()
    train_out = model(*batch(SENTENCES), torch.tensor([0, 1, 2, 0]))
    assert train_out.unit_probs == [] and train_out.loss.requires_grad


def test_defaults_follow_the_paper():
    config = AdaSentConfig(vocab_size=V)
    assert not config.freeze_embeddings  # fine-tuned word vectors (their size, 100, is ours: see the model file)
    assert config.hidden_dim >= config.embed_dim  # §Structure: D >= d
    recipe = load_recipe("adasent").training
    assert recipe["optimizer"] == "adagrad" and recipe["clip"] > 0


@pytest.mark.parametrize("bad", [{"pooling": "sum"}, {"hidden_dim": 0}, {"dropout": 1.0}, {"num_classes": 1}])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError, match=str(next(iter(bad.values())))):
        AdaSentConfig(vocab_size=V, **bad)
