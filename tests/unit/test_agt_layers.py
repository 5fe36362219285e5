"""tools.research.agt_layers: each intervention at a layer against the model with that layer's parameters set by
hand, the gate openness and carry a fixed gate bias gives, and the per-layer gradient norms against autograd's own."""

import copy

import pytest
import torch

from core.models.agt import AGT, AGTConfig
from core.models.base import Intervention
from tools.research.agt_layers import layer_effects, layer_gradient_norms, layer_state, used_layers

torch.set_num_threads(1)

TINY = dict(vocab_size=23, num_classes=3, embed_dim=5, hidden=7, num_layers=4, attention_dim=6, fc_hidden=8)
SEQUENCES = [[3, 7, 1, 22, 9, 4], [5, 2, 8], [11], [6, 6, 13, 2]]


def make_model(**overrides) -> AGT:
    torch.manual_seed(0)
    model = AGT(AGTConfig(**{**TINY, **overrides})).double().eval()
    with torch.no_grad():  # a non-trivial frozen embedding and attention
        model.embedding.weight[1:].normal_()
        model.attn_weight.normal_()
        model.attn_vector.normal_()
    return model


def probs(model: AGT, sequences=SEQUENCES, intervention: Intervention | None = None) -> list[torch.Tensor]:
    return [
        model(torch.tensor([s]), torch.tensor([len(s)]), intervention=intervention).logits.softmax(-1)[0]
        for s in sequences
    ]


@pytest.mark.parametrize("layer", [1, 2, 4])
def test_uniform_attention_equals_a_zero_attention_vector(layer):
    model = make_model()
    by_hand = copy.deepcopy(model)
    with torch.no_grad():  # w^m_l = 0: every score m_{l,n} is 0, so Eq. 5 gives every word 1/N
        by_hand.attn_vector[layer - 1].zero_()
    intervened = probs(model, intervention=Intervention("uniform_attention", layer))
    for a, b in zip(intervened, probs(by_hand)):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize(("key", "bias"), [("gates_closed", -1e4), ("gates_open", 1e4)])
@pytest.mark.parametrize("layer", [2, 4])
def test_fixed_gate_equals_a_saturated_gate(key, bias, layer):
    model = make_model()
    by_hand = copy.deepcopy(model)
    with torch.no_grad():  # sigmoid(±1e4) is exactly 1 or 0 in float64: T_l fixed
        by_hand.gate[layer - 2].weight.zero_()
        by_hand.gate[layer - 2].bias.fill_(bias)
    intervened = probs(model, intervention=Intervention(key, layer))
    for a, b in zip(intervened, probs(by_hand)):
        torch.testing.assert_close(a, b)


def test_layer_effects_against_brute_force():
    model = make_model(gate_bias=-1.0)
    effects = layer_effects(model, SEQUENCES)
    plain = torch.stack(probs(model))
    assert [r["layer"] for r in effects["uniform_attention"]] == [1, 2, 3, 4]
    assert [r["layer"] for r in effects["gates_closed"]] == [2, 3, 4]
    for layer in (1, 3):
        by_hand = copy.deepcopy(model)
        with torch.no_grad():
            by_hand.attn_vector[layer - 1].zero_()
        moved = torch.stack(probs(by_hand))
        row = effects["uniform_attention"][layer - 1]
        assert row["max_dp"] == pytest.approx((moved - plain).abs().max().item(), abs=1e-12)
        assert row["flips"] == int((moved.argmax(-1) != plain.argmax(-1)).sum())
    # a layer whose attention is already uniform: the intervention changes nothing, and the layer is not used
    # through it (its gate may still be)
    with torch.no_grad():
        model.attn_vector[2].zero_()
    assert layer_effects(model, SEQUENCES)["uniform_attention"][2]["max_dp"] < 1e-12


def test_used_layers_reads_either_intervention_at_the_bar():
    effects = {
        "uniform_attention": [{"layer": l, "max_dp": dp} for l, dp in [(1, 0.02), (2, 0.0), (3, 0.009), (4, 0.0)]],
        "gates_closed": [{"layer": l, "max_dp": dp} for l, dp in [(2, 0.0), (3, 0.0), (4, 0.01)]],
        "gates_open": [{"layer": l, "max_dp": dp} for l, dp in [(2, 0.5), (3, 0.5), (4, 0.5)]],  # not counted
    }
    assert used_layers(effects, 4) == [1, 4]


@pytest.mark.parametrize("bias", [1.0, -2.0])
def test_a_fixed_gate_bias_gives_its_openness_and_carry(bias):
    model = make_model(gate_bias=bias)
    with torch.no_grad():
        for gate in model.gate:
            gate.weight.zero_()  # T_l = sigmoid(b) for every sentence and unit
    state = layer_state(model, SEQUENCES)
    open_ = torch.sigmoid(torch.tensor(bias, dtype=torch.float64)).item()
    assert state[0]["gate_mean"] is None
    for l, row in enumerate(state):
        if l:
            assert row["gate_mean"] == pytest.approx(open_, abs=1e-12)
            assert row["gate_bias_mean"] == bias and row["gate_bias_moved"] == 0
        # what reaches the top through the skip paths alone: (1 - T) for each of the layers above
        assert row["carry_to_top"] == pytest.approx((1 - open_) ** (3 - l), rel=1e-9)


def test_uniform_attention_reads_entropy_ratio_one():
    model = make_model()
    with torch.no_grad():
        model.attn_vector.zero_()
    for row in layer_state(model, SEQUENCES):
        assert row["attention_entropy_ratio"] == pytest.approx(1.0, abs=1e-12)


def test_layer_gradient_norms_against_autograd():
    model = make_model()
    model.train()
    ids = torch.tensor([SEQUENCES[0], SEQUENCES[3] + [0, 0]])
    loss = model(ids, torch.tensor([6, 4]), torch.tensor([0, 2])).loss
    params = [model.attn_weight, model.attn_vector, *model.gate.parameters(), *model.transform.parameters()]
    grads = torch.autograd.grad(loss, params, retain_graph=True)
    loss.backward()
    norms = layer_gradient_norms(model)
    attn_weight, attn_vector = grads[0], grads[1]
    for l in range(4):
        by_hand = torch.cat([attn_weight[:, l].flatten(), attn_vector[l]]).norm()
        torch.testing.assert_close(norms[0, l], by_hand)
    gate_grads, transform_grads = grads[2:8], grads[8:]
    for l in range(1, 4):
        torch.testing.assert_close(norms[1, l], torch.cat([g.flatten() for g in gate_grads[2 * l - 2 : 2 * l]]).norm())
        torch.testing.assert_close(
            norms[2, l], torch.cat([g.flatten() for g in transform_grads[2 * l - 2 : 2 * l]]).norm()
        )
    assert norms[1, 0] == 0 and norms[2, 0] == 0
