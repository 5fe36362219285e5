"""The settings that reproduce the public re-implementations (Godin's) in our DCNN. Eq. 4's s read two ways: the
paper's sentence length, or the convolution's width (s + m - 1 at layer 1) as they compute it; each layer's k must
follow its rule exactly. Their initialisation (Lasagne's GlorotUniform) within its bounds."""

import math

import pytest
import torch

from core.models.dcnn import DCNN, DCNNConfig


@pytest.mark.parametrize("k_from", ["sentence", "width"])
def test_each_layer_keeps_the_k_of_its_rule(k_from):
    torch.manual_seed(0)
    config = DCNNConfig(vocab_size=30, num_classes=2, embed_dim=8, widths=[3, 2], maps=[2, 3], k_top=2, k_from=k_from)
    model = DCNN(config).eval()
    for s in (1, 2, 5, 9, 14):
        ids = torch.randint(1, 30, (1, s))
        k = model(ids, torch.tensor([s]), explain=1).k[0].tolist()
        base = s if k_from == "sentence" else s + config.widths[0] - 1
        assert k == [s, max(config.k_top, math.ceil(base / 2)), config.k_top], (s, k)


def test_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="k_from"):
        DCNNConfig(vocab_size=30, k_from="length")


def test_glorot_init_draws_within_godins_lasagne_bounds():
    """init="glorot": Lasagne's GlorotUniform over his (F, C, rows, m) filters, sqrt(6 / ((C + F) rows m)), and
    over the softmax layer; his binary net (widths 7, 5; maps 6, 14; 48 rows; k_top 4): 0.0505, 0.0500, 0.0943."""
    torch.manual_seed(0)
    config = DCNNConfig(vocab_size=50, num_classes=2, widths=[7, 5], maps=[6, 14], k_top=4, init="glorot")
    model = DCNN(config)
    bounds = [math.sqrt(6 / ((1 + 6) * 48 * 7)), math.sqrt(6 / ((6 + 14) * 24 * 5)), math.sqrt(6 / (672 + 2))]
    weights = [layer.conv.weight for layer in model.layers] + [model.out.weight]
    for weight, bound in zip(weights, bounds):
        assert bound * 0.95 < weight.abs().max().item() <= bound  # thousands of draws reach near the bound
    assert not model.out.bias.any()
    torch.manual_seed(0)
    default = DCNN(DCNNConfig(vocab_size=50, num_classes=2, widths=[7, 5], maps=[6, 14], k_top=4))
    assert default.layers[0].conv.weight.abs().max().item() > 0.3  # PyTorch's 1 / sqrt(C m): 0.378
