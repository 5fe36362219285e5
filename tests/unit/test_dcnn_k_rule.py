"""Eq. 4's s read two ways: the paper's sentence length, or the convolution's width (s + m - 1 at layer 1) as the
public re-implementations compute it. Each layer's k must follow its rule exactly."""

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
