"""Tensor CNN: non-linear, non-consecutive n-gram feature maps.

Tao Lei, Regina Barzilay, Tommi Jaakkola (2015), "Molding CNNs for text: non-linear, non-consecutive
convolutions", EMNLP. Checked against the authors' Theano code (taolei87/text_convnet `model.py`).

Equations implemented
- Eq. 2, low-rank n-gram tensor: z[i, j, k] = Oᵀ(Px_i ⊙ Qx_j ⊙ Rx_k).
- Eq. 3, non-consecutive 3-grams with decay: z_3[k] = Σ_{i<j<k} λ^(k-i-2) z[i, j, k] (and likewise
  for 2-grams), summed over orders 1..n: z[t] = Oᵀ(f_1[t] + f_2[t] + f_3[t]).
- §4 dynamic program: f_1[t] = Px_t, s_m[t] = λ s_m[t-1] + f_m[t], f_2[t] = s_1[t-1] ⊙ Qx_t,
  f_3[t] = s_2[t-1] ⊙ Rx_t. Decay-matrix form, with no loop over positions: s_m[t-1] = Σ_{s<t} λ^(t-1-s) f_m[s]
  = (E f_m)[t], where E[t, s] = λ^(t-1-s) for s < t and 0 otherwise. Each order costs one (L, L) matmul,
  and the result is exact (unlike a cumsum of λ^(-t)-scaled terms, which overflows for long sentences).
- §4 architecture: z'[t] = ReLU(z[t] + b), K stacked layers (layer k+1 reads layer k's z'), each layer
  mean-pooled over the sentence, pooled vectors concatenated, ỹ = softmax(Wᵀ z̄), W without bias.
- Fig. 5, local sentiment: p_t = softmax(Wᵀ[z¹_t; z²_t; z³_t]). Since the layers after pooling are
  linear, the sentence logits are exactly the mean over t of these per-position logits.

Deviations from the paper
- Initialisation follows the authors' code, P, Q, R, O ~ U(±√(3/h)); the paper says U(±√(3/d)) for
  P, Q, R. The code produced the reported numbers, and for d = 300, h = 200 the scales differ by 1.2x.
- Dropout follows the authors' code. The paper only says "units on z⁽ⁱ⁾ at each level". The code drops
  the word vectors and the pooled vector, dividing by √(1-p), and drops the input of layers 2+,
  dividing by (1-p); the pooling reads the un-dropped layer outputs. At eval it is the identity, so test
  inputs are 1/√(1-p) larger than the training expectation, as in the code.
- Padding: the authors batch sentences of identical length. We also accept right-padded batches. The
  operator is causal (E is strictly lower triangular), so real positions never see pads in any layer,
  and only the mean pool is masked. Pads are not zero after a layer (ReLU(b) = 0.01).
- Any n-gram order n >= 1 is allowed (the DP generalises, one more factor matrix per order); the
  paper uses n <= 3.
- Unit-norm word vectors (§6) are applied by the trainer (`unit_norm_vectors`); L2 and AdaGrad live
  in the optimizer (configs/recipes/tensor_cnn.toml).
- Word vectors that start random (every row when no pretrained vectors are used, else the rows they
  lack) are drawn from U(±0.25), Kim (2014)'s range, with the padding row at zero (`build_embedding`,
  core/models/base.py); the paper does not give this initialisation.

Glossary
B batch, L tokens, d word-vector size, h feature size (the paper's d in Table 1's footnote), n n-gram
order, K layers, C classes. P, Q, R (h, d_in) the factors of the n-gram tensor (rows of `pqr`), O (h, h)
the output factor, b the ReLU bias, W (K·h, C) the softmax, λ the decay, f_m the m-gram DP table, E the
(L, L) decay matrix, z⁽ᵏ⁾ layer k's output sequence.
"""

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from core.models.base import (
    DIM,
    LAYERS,
    NUM_CLASSES,
    VOCAB_SIZE,
    Intervention,
    InterventionSpec,
    ModelOutput,
    SentenceClassifier,
    check_config,
    classification_loss,
    dropout,
    explained,
    length_mask,
    masked_mean,
)
from core.models.card import ModelCard
from core.views import LineCurves, Text, sentiment_scores


@dataclass
class TensorCNNConfig:
    vocab_size: int
    num_classes: int = 5
    embed_dim: int = 300  # §6: 300-d GloVe 840B
    hidden: int = 200  # Table 1 footnote: feature dimension 200
    num_layers: int = 3  # Table 1 footnote: 3 layers
    ngram_order: int = 3  # Table 1 footnote: n = 3 (orders 1..n are summed, §4)
    decay: float = 0.5  # Table 1 footnote: λ = 0.5
    dropout: float = 0.3  # §6 search; the README's documented run uses 0.3
    freeze_embeddings: bool = True  # §6: vectors "fixed in the experiments without fine-tuning"
    unit_norm_vectors: bool = True  # §6: vectors normalised to unit L2 norm (done by the trainer)

    def __post_init__(self):
        # orders above 3 are not in the paper; each costs one more (L, L) decay matmul per layer
        check_config(
            self,
            {
                "vocab_size": VOCAB_SIZE,
                "num_classes": NUM_CLASSES,
                "embed_dim": DIM,
                "hidden": DIM,
                "num_layers": LAYERS,
                "ngram_order": (1, 8),
            },
        )
        if not 0 <= self.decay < 1:
            raise ValueError(f"decay (λ) must be in [0, 1), got {self.decay}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")


@dataclass
class TensorCNNOutput(ModelOutput):
    # (B, K, L, C): W_kᵀ z⁽ᵏ⁾[t], layer k's block of the softmax at each position; summed over k these are
    # the Fig. 5 per-position logits, and their mean over real positions is `logits` (eval mode); explain > 0 only
    layer_logits: Tensor | None = None
    lengths: Tensor | None = None  # (B,) real sentence lengths


def decay_matrix(length: int, decay: float, like: Tensor) -> Tensor:
    """E (L, L) with E[t, s] = λ^(t-1-s) for s < t, else 0, so (E f)[t] = s[t-1] of the §4 DP."""
    t = torch.arange(length, device=like.device)
    gap = t[:, None] - t[None, :] - 1  # (L, L): words strictly between s and t
    return torch.where(gap >= 0, decay ** gap.clamp_min(0).to(like.dtype), 0.0)  # 0^0 = 1: λ = 0 keeps s = t-1


class TensorLayer(nn.Module):
    """One feature-mapping layer (§4): the n-gram DP, then z' = ReLU(Oᵀ Σ_m f_m + b)."""

    def __init__(self, d_in: int, hidden: int, order: int):
        super().__init__()
        self.order = order
        self.pqr = nn.Linear(d_in, order * hidden, bias=False)  # rows [P; Q; R]: one matmul gives Px, Qx, Rx
        self.o = nn.Linear(hidden, hidden)  # O, and the ReLU bias b
        bound = (3 / hidden) ** 0.5  # authors' code: U(±√(3/h)) for P, Q, R and O
        nn.init.uniform_(self.pqr.weight, -bound, bound)
        nn.init.uniform_(self.o.weight, -bound, bound)
        nn.init.constant_(self.o.bias, 0.01)  # §5: "a small positive constant 0.01"

    def forward(self, x: Tensor, decay: Tensor, max_order: int | None = None) -> Tensor:
        # Eq. 2 factors at every position: Px_t, Qx_t, Rx_t (orders above `max_order` left out: an intervention)
        factors = self.pqr(x).chunk(self.order, dim=-1)[:max_order]  # n x (B, L, h)
        # §4 DP: f_1 = Px, f_2 = Qx ⊙ s_1[t-1], f_3 = Rx ⊙ s_2[t-1], where s_m[t-1] = (E f_m)[t]
        f = factors[0]  # (B, L, h)
        total = f  # (B, L, h): f_1 + ... + f_n
        for factor in factors[1:]:
            f = factor * (decay @ f)  # (B, L, h)
            total = total + f
        # §4: z = Oᵀ(f_1 + f_2 + f_3), z' = ReLU(z + b)
        return torch.relu(self.o(total))  # (B, L, h)


CONSECUTIVE = Intervention("consecutive")


class TensorCNN(SentenceClassifier[TensorCNNOutput]):
    key = "tensor_cnn"
    card = ModelCard(
        name="Tensor CNN",
        cited="Lei et al. 2015",
        citation=(
            'Tao Lei, Regina Barzilay, Tommi Jaakkola (2015), "Molding CNNs for text: non-linear, non-consecutive'
            ' convolutions", EMNLP'
        ),
        view_text={
            "tcnn_layers": "Local sentiment at each word, per layer (Lei et al. 2015, Fig. 5)",
            "tcnn_layer": "layer {layer}",
            "tcnn_all_layers": "all layers",
        },
        view_text_zh={
            "tcnn_layers": "每个词处的局部情感，逐层（Lei 等 2015，图 5）",
            "tcnn_layer": "第 {layer} 层",
            "tcnn_all_layers": "全部层",
        },
        interventions_zh={
            "consecutive": "§3 式 3：非连续 n 元组（λ → 0 时只剩连续 n 元组）",
            "max_order": "§4：各阶 n 元组 1..n 相加（去掉高于该序号的阶）",
            "layer_off": "§4：每层的池化特征都进入 softmax（去掉其中一层）",
        },
    )
    config_class = TensorCNNConfig
    word_curve_kind = "native"  # Fig. 5: each position's softmax over its layers' states
    interventions = {
        "consecutive": InterventionSpec("§3 Eq. 3: non-consecutive n-grams (λ -> 0 keeps consecutive ones only)"),
        "max_order": InterventionSpec("§4: n-gram orders 1..n summed (orders above the index left out)", "order"),
        "layer_off": InterventionSpec("§4: every layer's pooled features feed the softmax (one left out)", "layer"),
    }

    def __init__(self, config: TensorCNNConfig):
        super().__init__(config)
        self.embedding = self.build_embedding(config.vocab_size, config.embed_dim, config.freeze_embeddings)
        sizes = [config.embed_dim] + [config.hidden] * (config.num_layers - 1)
        self.layers = nn.ModuleList(TensorLayer(d_in, config.hidden, config.ngram_order) for d_in in sizes)
        self.classifier = nn.Linear(config.num_layers * config.hidden, config.num_classes, bias=False)  # W
        nn.init.zeros_(self.classifier.weight)  # §5: "W ... initialized as zeros"

    def forward(
        self,
        ids: Tensor,
        lengths: Tensor,
        labels: Tensor | None = None,
        explain: int = 0,
        intervention: Intervention | None = None,
    ) -> TensorCNNOutput:
        cfg = self.config
        mask = length_mask(lengths, ids.shape[1])  # (B, L)

        # Stacked layers (§4): layer k+1 reads layer k's output; dropout placed as in the authors' code
        x = dropout(self.embedding(ids), cfg.dropout, self.training, sqrt_scale=True)  # (B, L, d)
        act = intervention
        decay = decay_matrix(ids.shape[1], 0.0 if act == CONSECUTIVE else cfg.decay, x)  # (L, L)
        max_order = act.index if act and act.key == "max_order" else None
        states: list[Tensor] = []  # K x (B, L, h): z⁽ᵏ⁾, un-dropped
        for layer in self.layers:
            if states:
                x = dropout(states[-1], cfg.dropout, self.training, sqrt_scale=False)  # (B, L, h)
            states.append(layer(x, decay, max_order))

        # §4: mean of each layer over the real positions, concatenated; ỹ = softmax(Wᵀ z̄)
        means = [masked_mean(z, mask) for z in states]  # K x (B, h)
        if act and act.key == "layer_off":  # that layer's features still feed the next layer, not the softmax
            assert act.index is not None  # check_intervention: an indexed intervention has its index
            means[act.index - 1] = torch.zeros_like(means[act.index - 1])
            states[act.index - 1] = torch.zeros_like(states[act.index - 1])  # nor the per-position curves
        pooled = torch.cat(means, dim=-1)  # (B, K·h)
        logits = self.classifier(dropout(pooled, cfg.dropout, self.training, sqrt_scale=True))  # (B, C)

        # Fig. 5: each layer's block of W applied at every position, without averaging (explanations only)
        layer_logits = None
        if explain:
            with torch.no_grad():
                blocks = self.classifier.weight.view(cfg.num_classes, cfg.num_layers, cfg.hidden)  # (C, K, h)
                layer_logits = torch.einsum("kbth,ckh->bktc", torch.stack(states), blocks)  # (B, K, L, C)
        return TensorCNNOutput(
            logits=logits, loss=classification_loss(logits, labels), layer_logits=layer_logits, lengths=lengths
        )

    def intervention_range(self, key: str) -> tuple[int, int]:
        return (1, self.config.ngram_order) if key == "max_order" else (1, self.config.num_layers)

    def word_curve(self, output: TensorCNNOutput, index: int) -> Tensor:
        """Fig. 5: p_t = softmax(Wᵀ[z¹_t; z²_t; z³_t]) at each real position, (n_words, C)."""
        n = int(explained(output.lengths)[index])
        return explained(output.layer_logits)[index, :, :n].sum(0).softmax(-1)  # (n, C)

    def views(
        self, output: TensorCNNOutput, index: int, words: list[str], class_names: list[str] | None = None
    ) -> list:
        """One local-sentiment curve per layer (its own block of W on its own states) plus the model's."""
        n = int(explained(output.lengths)[index])
        per_layer = explained(output.layer_logits)[index, :, :n].softmax(-1)  # (K, n, C)
        probs = {Text("tcnn_layer", layer=k + 1): p for k, p in enumerate(per_layer)} | {
            Text("tcnn_all_layers"): self.word_curve(output, index)
        }
        scored = {
            name: sentiment_scores(p.tolist(), class_names) for name, p in probs.items()
        }  # name -> (scores, label, range)
        _, label, score_range = scored[Text("tcnn_all_layers")]
        return [
            LineCurves(
                title=Text("tcnn_layers"),
                x_labels=list(words[:n]),
                curves={name: s[0] for name, s in scored.items()},
                y_label=label,
                y_range=score_range,
            )
        ]
