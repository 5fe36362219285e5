"""Multiplicative recurrent neural network (mRNN): Ozan Irsoy and Claire Cardie, "Modeling
Compositionality with Multiplicative Recurrent Neural Networks", ICLR 2015.

An Elman RNN whose update also has a bilinear term: through a dh×dx×dh tensor A, every word vector
x selects its own linear operator M(w) = xᵀA on the hidden "meaning" space, so a sentence is read as
a product of word operators, as in matrix-space models (§4.3), but with parameters shared by all words.

Equations implemented (paper numbering):
- Eq. 5   h_t = f(x_tᵀ A^{[1..dh]} h_{t-1} + W x_t + V h_{t-1} + b),  (xᵀAh)_i = xᵀ A^{[i]} h,
          f ∈ {tanh, relu, identity} (§5.2). The word operators M_t = x_tᵀA (Eq. 10) of all steps
          come from one matrix product; only the T mat-vecs M_t h_{t-1} run in a loop.
- Eq. 6   y_t = g(U h_t + c) at every step: the native per-word curve. The sentence output is the
          last step's (§3.2). g = softmax (SST, §5.1) or the ordinal head below.
- §4.2    ordinal regression (Cheng et al. 2008): g = element-wise sigmoid over C-1 outputs with
          cumulative targets r_i = 1 if i < k; `decode_ordinal` is the paper's decoding rule.
- Eq. 10-12: with W = V = b = 0 and f = identity, h_T = M(w_T)…M(w_1) h_0 (a matrix-space model).
- Eq. 7 (bias units folded into A') is the same model; we keep W, V, b as separate named tensors.

Deviations from the paper:
- Pretrained vectors are scaled to unit norm (`unit_norm_vectors`): our CBOW vectors have norms near 13,
  and the multiplicative term x_tᵀ A h_{t-1} then saturates tanh within a few words.
- Phrase labels ("labels for partial sentences", §5.1): every labelled phrase is its own training
  sequence, read from h_0 with the loss at its last word (the data layer's phrase instances). A phrase
  inside a sentence is not a prefix of it, so supervising intermediate steps of the whole sentence
  could use only the left-branching phrases; one label per sequence also keeps the shared contract.
- Dropout 0.3 on the word vectors and on h_t before the output layer, never on the recurrent path
  (so a sentence's memory is not erased step by step). The paper names no regulariser; the rate and
  the whole training recipe come from the same author's DRNN code (oir/deep-recursive, drsv.cpp).
- h_0 is a learned vector starting at 0; the paper does not say (§3.1 learns or fixes it).
- Ordinal head: the shared contract needs class probabilities, which the paper never forms. We use
  P(y > k) = the running minimum of the sigmoid outputs (monotone, and exactly the paper's "a 0
  zeroes every later entry"), P(y = k) = P(y > k-1) - P(y > k). decode_ordinal(σ) is the median of
  that distribution. The paper does not name the ordinal loss; we use binary cross-entropy.
- Initialisation (not given): uniform ±1/sqrt(fan-in) like nn.Linear; A[:, :, k] as a Linear(dx, dh).
- Word vectors that start random (every row when no pretrained vectors are used, else the rows they
  lack) are drawn from U(±0.25), Kim (2014)'s range, with the padding row at zero (`build_embedding`,
  core/models/base.py); the paper does not give this initialisation.

Glossary: B batch, L padded length, T one sentence's length, dx word-vector size (embed_dim),
dh hidden size, C classes, K head outputs (C for softmax, C-1 for ordinal). A (dh, dx, dh);
M_t (dh, dh) word operator; W (dh, dx), b (dh); V (dh, dh); U (K, dh), c (K).
"""

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from core.models.base import (
    DIM,
    NUM_CLASSES,
    SENTENCE_INDEX,
    VOCAB_SIZE,
    Dropout,
    Intervention,
    InterventionSpec,
    ModelOutput,
    SentenceClassifier,
    check_config,
    explained,
    length_mask,
)
from core.models.card import ModelCard
from core.views import LineCurves, Text, Trajectory, sentiment_scores


def _identity(z: Tensor) -> Tensor:
    return z


ACTIVATIONS = {"tanh": torch.tanh, "relu": torch.relu, "identity": _identity}
HEADS = ("softmax", "ordinal")


@dataclass
class MRNNConfig:
    vocab_size: int
    num_classes: int = 5
    embed_dim: int = 300  # §5.1: 300-d word2vec (Google News)
    # dh: Table 2 uses 20 on SST (Table 1: 25 on MPQA); 50 was no better here (docs/experiments.md)
    hidden: int = 20
    activation: str = "tanh"  # f in Eq. 5; §5.2: tanh best on MPQA, identity only slightly worse
    head: str = "softmax"  # §5.1: softmax on SST; "ordinal" = §4.2 cumulative sigmoids (MPQA)
    dropout: float = 0.3  # not in the paper: the same author's DRNN code (drsv.cpp, DROP = 0.3)
    freeze_embeddings: bool = True  # §5.1: pretrained vectors are not fine-tuned
    # not in the paper: our CBOW vectors have norms near 13, which saturate tanh through x_tᵀ A h_{t-1}
    # within a few words (measured pre-activation std 1.8); unit-norm rows (as Lei et al. do) keep it small
    unit_norm_vectors: bool = True

    def __post_init__(self):
        # hidden is bounded lower than other widths: A holds dh x dx x dh numbers and every word builds a dh x dh
        # operator
        check_config(self, {"vocab_size": VOCAB_SIZE, "num_classes": NUM_CLASSES, "embed_dim": DIM, "hidden": (1, 512)})
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {self.activation!r}")
        if self.head not in HEADS:
            raise ValueError(f"head must be one of {', '.join(HEADS)}, got {self.head!r}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")


@dataclass
class MRNNOutput(ModelOutput):
    step_probs: Tensor | None = None  # (B, L, C) class probabilities of y_t (Eq. 6) at every step
    states: Tensor | None = None  # (B, L, dh) h_1..h_L; frozen after each sentence's last word
    cumulative: Tensor | None = None  # (B, L, C-1) ordinal head only: raw σ outputs P(y > k) per step
    lengths: Tensor | None = None  # (B,) sentence lengths, to cut the padding off the curves


def decode_ordinal(cumulative: Tensor) -> Tensor:
    """§4.2 decoding of cumulative outputs (..., C-1) -> labels (...): binarise (< 0.5 -> 0, else 1);
    from the lowest index, the first 0 zeroes every higher entry; the label is the number of ones.
    E.g. [1, 0, 1, 0] -> [1, 0, 0, 0] -> 1."""
    bits = (cumulative >= 0.5).long()  # (..., C-1)
    return bits.cumprod(-1).sum(-1)  # (...)


def ordinal_probs(cumulative: Tensor) -> Tensor:
    """Class probabilities (..., C) from cumulative σ outputs (..., C-1) read as P(y > k).

    The raw outputs need not decrease in k; their running minimum does, so the differences are a
    distribution whose median is decode_ordinal(cumulative)."""
    above = cumulative.cummin(-1).values  # (..., C-1) P(y > k), non-increasing
    upper = torch.cat([torch.ones_like(above[..., :1]), above], -1)  # (..., C) P(y > k-1)
    lower = torch.cat([above, torch.zeros_like(above[..., :1])], -1)  # (..., C) P(y > k)
    return upper - lower  # (..., C)


class MRNN(SentenceClassifier[MRNNOutput]):
    key = "mrnn"
    card = ModelCard(
        name="mRNN",
        cited="Irsoy & Cardie 2015",
        citation=(
            'Ozan Irsoy, Claire Cardie (2015), "Modeling Compositionality with Multiplicative Recurrent Neural '
            'Networks", ICLR'
        ),
        no_result="the mRNN paper reports SST-5 and MPQA only",
        view_text={
            "mrnn_trajectory": "Hidden-state trajectory (mRNN, cf. paper Fig. 2)",
            "mrnn_pca": (
                "PCA of this sentence's hidden states h_1..h_T (centred, torch.linalg.svd): PC1 {pc1:.0%}, "
                "PC2 {pc2:.0%} of their variance; signs chosen so the last word has x, y >= 0; colour = {score} "
                "after each word"
            ),
            "mrnn_ordinal": "Ordinal outputs after each word (§4.2, decoded at 0.5)",
            "mrnn_ordinal_curve": "P(y > {k})",
            "mrnn_sigmoid": "sigmoid output",
        },
        view_text_zh={
            "mrnn_trajectory": "隐藏状态轨迹（mRNN，参见论文图 2）",
            "mrnn_pca": (
                "本句隐藏状态 h_1..h_T 的主成分分析（已中心化）：PC1 占方差的 {pc1:.0%}，PC2 占 {pc2:.0%}；"
                "符号取使最后一个词的 x、y >= 0；颜色 = 每个词之后的{score}"
            ),
            "mrnn_ordinal": "每个词之后的序数输出（§4.2，以 0.5 为界解码）",
            "mrnn_ordinal_curve": "P(y > {k})",
            "mrnn_sigmoid": "sigmoid 输出",
        },
        interventions_zh={
            "additive": "§4.1 式 5：关闭乘性项 xᵀAh（即 §3.2、§5.2 的加性 RNN）",
            "cut_at": "§3.2：循环状态携带到目前为止的语义（在该词之前把 h 重置为 h_0）",
        },
    )
    config_class = MRNNConfig
    word_curve_kind = "native"  # Eq. 6: y_t at every step
    interventions = {
        "additive": InterventionSpec("§4.1 Eq. 5: the multiplicative term xᵀAh off (the additive RNN of §3.2, §5.2)"),
        "cut_at": InterventionSpec(
            "§3.2: the recurrence carries the meaning so far (h reset to h_0 before the word)", "word"
        ),
    }

    def __init__(self, config: MRNNConfig):
        super().__init__(config)
        dx, dh = config.embed_dim, config.hidden
        self.embedding = self.build_embedding(config.vocab_size, dx, config.freeze_embeddings)
        self.A = nn.Parameter(torch.empty(dh, dx, dh).uniform_(-1 / math.sqrt(dx), 1 / math.sqrt(dx)))
        self.W = nn.Linear(dx, dh)  # W x_t + b
        self.V = nn.Linear(dh, dh, bias=False)  # V h_{t-1}
        self.h0 = nn.Parameter(torch.zeros(dh))
        outputs = config.num_classes if config.head == "softmax" else config.num_classes - 1
        self.out = nn.Linear(dh, outputs)  # U h_t + c
        self.dropout = Dropout(config.dropout)
        self.f = ACTIVATIONS[config.activation]

    def forward(
        self,
        ids: Tensor,
        lengths: Tensor,
        labels: Tensor | None = None,
        explain: int = 0,
        intervention: Intervention | None = None,
    ) -> MRNNOutput:
        B, L = ids.shape
        mask = length_mask(lengths, L)  # (B, L)
        x = self.dropout(self.embedding(ids))  # (B, L, dx)

        # Eq. 5, the parts that do not depend on h, for every step at once: the word operator
        # M_t = x_tᵀA (Eq. 10: M_t[i, k] = x_tᵀ A^{[i]}[:, k]) and the input term W x_t + b
        if self.training:  # dropout gives every position its own x_t
            M = torch.einsum("blj,ijk->blik", x, self.A)  # (B, L, dh, dh)
        else:  # M(w) depends on the word alone: one operator per distinct word (occlusion batches repeat them all)
            types, where = torch.unique(ids, return_inverse=True)  # (U,), (B, L)
            M = torch.einsum("uj,ijk->uik", self.embedding(types), self.A)[where]  # (B, L, dh, dh)
        u = self.W(x)  # (B, L, dh)

        # Eq. 5: h_t = f(M_t h_{t-1} + V h_{t-1} + W x_t + b); after its last word a sentence keeps its
        # state, so padding never reaches it and h_L is each sentence's final state
        # (unbind, not M[:, t]: indexing would back-propagate a full-size zero tensor at every step)
        act = intervention
        additive = act is not None and act.key == "additive"
        cut = None
        if act is not None and act.key == "cut_at":
            assert act.index is not None  # check_intervention: an indexed intervention has its index
            cut = act.index - 1  # 0-based step
        h = self.h0.expand(B, -1)  # (B, dh)
        steps = []
        for t, (M_t, u_t, m_t) in enumerate(zip(M.unbind(1), u.unbind(1), mask.unbind(1))):
            if t == cut:
                h = self.h0.expand(B, -1)
            h_new = self.f((0 if additive else torch.einsum("bik,bk->bi", M_t, h)) + self.V(h) + u_t)  # (B, dh)
            h = torch.where(m_t[:, None], h_new, h)  # (B, dh)
            steps.append(h)
        states = torch.stack(steps, 1)  # (B, L, dh)

        # Eq. 6: y_t = g(U h_t + c) at every step; the sentence output is the last step's
        z = self.out(self.dropout(states))  # (B, L, K)
        if self.config.head == "softmax":
            logits = z[:, -1]  # (B, C)
            loss = None if labels is None else F.cross_entropy(logits, labels)
            step_probs, cumulative = z.softmax(-1), None  # (B, L, C)
        else:
            # §4.2: σ outputs against cumulative targets r_k = 1 if k < label
            cumulative = z.sigmoid()  # (B, L, C-1)
            step_probs = ordinal_probs(cumulative)  # (B, L, C)
            probs = step_probs[:, -1]  # (B, C)
            logits = probs.clamp_min(torch.finfo(probs.dtype).tiny).log()  # (B, C): softmax(logits) = probs
            loss = None
            if labels is not None:
                targets = (torch.arange(z.shape[-1], device=ids.device) < labels[:, None]).to(z.dtype)  # (B, C-1)
                loss = F.binary_cross_entropy_with_logits(z[:, -1], targets, reduction="sum") / B
            cumulative = cumulative.detach()
        return MRNNOutput(
            logits=logits,
            loss=loss,
            step_probs=step_probs.detach(),
            states=states.detach(),
            cumulative=cumulative,
            lengths=lengths,
        )

    def intervention_range(self, key: str) -> tuple[int, int]:
        return SENTENCE_INDEX

    def predict_labels(self, output: MRNNOutput) -> Tensor:
        """(B,) predicted classes: argmax for the softmax head, the paper's decoding (§4.2) for the
        ordinal head (the median of the class probabilities, which can differ from their argmax)."""
        if self.config.head == "ordinal":
            return decode_ordinal(explained(output.cumulative)[:, -1])
        return output.logits.argmax(-1)

    # -- explanation ----------------------------------------------------------------------------
    def word_curve(self, output: MRNNOutput, index: int) -> Tensor:
        """y_t of Eq. 6 for every word: the class distribution after reading words 1..t."""
        return explained(output.step_probs)[index, : int(explained(output.lengths)[index])]  # (T, C)

    def views(self, output: MRNNOutput, index: int, words: list[str], class_names: list[str] | None = None) -> list:
        T = len(words)
        states = explained(output.states)[index, :T].double()  # (T, dh)
        scores, score_label, _ = sentiment_scores(self.word_curve(output, index).tolist(), class_names)

        # Fig. 2 draws hidden states in 2-D; we project this sentence's h_1..h_T on their top two
        # principal axes (SVD of the centred states), signed so that the last word lies at x, y >= 0
        centred = states - states.mean(0)  # (T, dh)
        _, sigma, Vh = torch.linalg.svd(centred, full_matrices=False)  # sigma (r,), Vh (r, dh), r = min(T, dh)
        axes = torch.zeros(2, states.shape[1], dtype=states.dtype)  # (2, dh)
        axes[: min(2, len(sigma))] = Vh[:2]
        points = centred @ axes.T  # (T, 2)
        points = points * torch.where(points[-1] < 0, -1.0, 1.0)  # (T, 2)
        variance = sigma.square()  # (r,)
        share = (variance[:2] / variance.sum().clamp_min(1e-300)).tolist() + [0.0, 0.0]
        note = Text("mrnn_pca", pc1=share[0], pc2=share[1], score=score_label)
        views: list = [
            Trajectory(
                Text("mrnn_trajectory"), list(words), [(float(a), float(b)) for a, b in points.tolist()], scores, note
            )
        ]

        if output.cumulative is not None:
            # §4.2: the raw ordinal outputs after each word; decoding counts the leading ones >= 0.5
            cumulative = output.cumulative[index, :T].T.tolist()  # (C-1, T)
            views.append(
                LineCurves(
                    Text("mrnn_ordinal"),
                    list(words),
                    {Text("mrnn_ordinal_curve", k=k): row for k, row in enumerate(cumulative)},
                    Text("mrnn_sigmoid"),
                    y_range=(0.0, 1.0),
                )
            )
        return views
