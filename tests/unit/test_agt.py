"""AGT (Guo 2017): the batched attention and highway recursion against per-word, per-layer loops."""

import math

import pytest
import torch
from torch.nn import functional as F

from core.models.agt import AGT, AGTConfig, AGTOutput
from core.training.recipes import load_recipe
from core.views import Heatmap, LineCurves, Table

torch.set_num_threads(1)

# pairwise-distinct sizes so a wrong transpose fails loudly
TINY = dict(vocab_size=23, num_classes=3, embed_dim=5, hidden=7, num_layers=4, attention_dim=6, fc_hidden=8)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def make_model(**overrides) -> AGT:
    model = AGT(AGTConfig(**{**TINY, **overrides})).double().eval()
    with torch.no_grad():  # make the frozen embedding and the attention non-trivial
        model.embedding.weight[1:].normal_()
        model.attn_weight.normal_()
        model.attn_vector.normal_()
    return model


def batch():
    ids = torch.tensor([[3, 7, 1, 22, 9, 4], [5, 2, 8, 0, 0, 0], [11, 0, 0, 0, 0, 0]])  # (3, 6)
    return ids, torch.tensor([6, 3, 1])


def reference(model: AGT, sentence: list[int]):
    """One sentence, word by word and layer by layer, straight from Eq. 4-8 (no batching, no masks)."""
    with torch.no_grad():
        return _reference(model, sentence)


def _reference(model: AGT, sentence: list[int]):
    cfg = model.config
    B = [torch.tanh(model.project.weight @ model.embedding.weight[i] + model.project.bias) for i in sentence]
    attention, selections = [], []
    for l in range(cfg.attention_layers or cfg.num_layers):
        m = [float(model.attn_vector[l] @ torch.tanh(model.attn_weight[:, l].T @ b)) for b in B]  # Eq. 6
        z = sum(math.exp(v) for v in m)
        d = [math.exp(v) / z for v in m]  # Eq. 5
        attention.append(d)
        selections.append(sum(w * b for w, b in zip(d, B)))  # Eq. 4
    y, states, gates = selections[0], [selections[0]], []
    for l in range(1, cfg.num_layers):
        s = selections[min(l, len(selections) - 1)]  # ablation: later layers reuse the last selection vector
        t = torch.sigmoid(model.gate[l - 1].weight @ s + model.gate[l - 1].bias)  # Eq. 7
        f = torch.tanh(model.transform[l - 1].weight @ torch.cat([y, s]) + model.transform[l - 1].bias)
        y = f * t + y * (1 - t)  # Eq. 8
        states.append(y)
        gates.append(t)
    logits = model.fc2(torch.tanh(model.fc1(y)))
    return torch.tensor(attention, dtype=torch.float64), torch.stack(gates), torch.stack(states), logits


@pytest.mark.parametrize("attention_layers", [0, 4, 2, 1])
def test_forward_equals_loop_reference(attention_layers):
    model = make_model(attention_layers=attention_layers)
    ids, lengths = batch()
    out = model(ids, lengths, explain=3)
    assert out.attention.shape == (3, attention_layers or 4, 6)
    assert out.gates.shape == (3, 3, 7) and out.states.shape == (3, 4, 7) and out.logits.shape == (3, 3)
    for b in range(3):
        n = int(lengths[b])
        attention, gates, states, logits = reference(model, ids[b, :n].tolist())
        torch.testing.assert_close(out.attention[b, :, :n], attention)
        torch.testing.assert_close(out.gates[b], gates)
        torch.testing.assert_close(out.states[b], states)
        torch.testing.assert_close(out.logits[b], logits)


def test_attention_sums_to_one_over_words_and_is_zero_on_padding():
    ids, lengths = batch()
    attention = make_model()(ids, lengths, explain=3).attention  # (3, 4, 6)
    torch.testing.assert_close(attention.sum(-1), torch.ones(3, 4, dtype=torch.float64))
    for b, n in enumerate(lengths.tolist()):
        assert (attention[b, :, n:] == 0).all()
        assert (attention[b, :, :n] > 0).all()


def test_closed_gates_give_the_highway_identity():
    model = make_model()
    with torch.no_grad():
        for gate in model.gate:
            gate.weight.zero_()
            gate.bias.fill_(-1e4)  # sigmoid(-1e4) is exactly 0 in float64
    ids, lengths = batch()
    out = model(ids, lengths, explain=3)
    assert (out.gates == 0).all()
    assert torch.equal(out.states[:, -1], out.states[:, 0])  # y_L = y_0 = s+_0
    head = model.fc2(torch.tanh(model.fc1(out.states[:, 0])))
    torch.testing.assert_close(out.logits, head)


def test_gate_bias_starts_at_one():
    model = AGT(AGTConfig(**TINY))
    for gate in model.gate:
        assert torch.equal(gate.bias, torch.ones(7))


def test_sentence_alone_equals_inside_a_padded_batch():
    model = make_model()
    ids, lengths = batch()
    together = model(ids, lengths, explain=3)
    for b, n in enumerate(lengths.tolist()):
        alone = model(ids[b : b + 1, :n], lengths[b : b + 1], explain=1)
        torch.testing.assert_close(alone.logits[0], together.logits[b])
        torch.testing.assert_close(alone.attention[0], together.attention[b, :, :n])
        torch.testing.assert_close(alone.gates[0], together.gates[b])


def test_explanation_tensors_only_when_asked():
    model = make_model()
    ids, lengths = batch()
    plain, explained = model(ids, lengths), model(ids, lengths, explain=1)
    assert plain.attention is None and plain.gates is None and plain.states is None
    assert explained.states.shape == (3, 4, 7)
    assert torch.equal(plain.logits, explained.logits)


def test_loss_is_mean_cross_entropy_and_adadelta_trains():
    model = AGT(AGTConfig(**TINY))  # float32, frozen embedding, dropout on
    ids, lengths = batch()
    labels = torch.tensor([0, 2, 1])
    out = model.eval()(ids, lengths, labels)
    torch.testing.assert_close(out.loss, F.cross_entropy(out.logits, labels))
    model.train()
    recipe = load_recipe("agt").training
    optimizer = torch.optim.Adadelta(model.param_groups(recipe["l2"]), lr=recipe["lr"])
    losses = []
    for _ in range(120):
        loss = model(ids, lengths, labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert model.embedding.weight.grad is None
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize(
    "bad", [{"num_layers": 1}, {"attention_layers": -1}, {"attention_layers": 5}, {"dropout": 1.0}, {"hidden": 0}]
)
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError, match=str(next(iter(bad.values())))):
        AGTConfig(**{**TINY, **bad})


def test_views_normalise_select_and_compose():
    model = make_model(num_layers=3, attention_layers=2)
    words = ["not", "so", "much", "a", "movie"]
    attention = torch.tensor([[[0.3, 0.3, 0.3, 0.0, 0.1, 0.0], [0.1, 0.2, 0.05, 0.05, 0.6, 0.0]]])  # (1, 2, 6)
    gates = torch.tensor([[[0.1, 0.3], [0.5, 0.9]]])  # (1, 2, 2)
    output = AGTOutput(logits=torch.zeros(1, 3), attention=attention, gates=gates)
    heatmap, table, curves = model.views(output, 0, words)
    assert model.word_curve(output, 0) is None

    assert isinstance(heatmap, Heatmap) and heatmap.y_labels == ["L1", "L2"] and heatmap.x_labels == words
    expected = [[1, 1, 1, 0, 1 / 3], [1 / 11, 3 / 11, 0, 0, 1]]
    for row, want in zip(heatmap.values, expected):
        assert row == pytest.approx(want)

    assert isinstance(table, Table) and len(table.rows) == 2
    assert table.rows[0] == ["L1", "not so much", "not so much", "not so much"]
    assert table.rows[1] == ["L2", "movie", "movie", "movie"]

    assert isinstance(curves, LineCurves) and curves.x_labels == ["L2", "L3"] and curves.x_title == "layer"
    assert curves.curves["mean T_l over units"] == pytest.approx([0.2, 0.7])


def test_views_phrases_and_single_word_sentence():
    model = make_model()
    ids, lengths = batch()
    output = model(ids, lengths, explain=3)
    heatmap, table, _ = model.views(output, 2, ["fine"])
    assert heatmap.values == [[1.0]] * 4  # one word takes all the attention
    assert all(row[1] == "fine" for row in table.rows)
    words = ["a", "b", "c", "d", "e", "f"]
    output.attention[0, 0] = torch.tensor([0.2, 0.2, 0.0, 0.2, 0.2, 0.2])
    assert model.views(output, 0, words)[1].rows[0][2] == "a b | d e f"
