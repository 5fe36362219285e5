"""AdaSent: Han Zhao, Zhengdong Lu, Pascal Poupart (2015), "Self-Adaptive Hierarchical Sentence
Model", IJCAI 2015.

The equations were lost in the text extraction of the paper; they are reconstructed from its prose
(notes/models.md section (d)), and the equation numbers below are the ones the prose refers to.

    first level (§Structure)      h^1_j = U emb(x_j)                              U: d -> D, no bias
    composition (Eq. 6)           hhat  = tanh(W_L h^{t-1}_j + W_R h^{t-1}_{j+1} + b_W)
    local gates (Eq. 7)           (w_l, w_r, w_c) = softmax(G_L h^{t-1}_j + G_R h^{t-1}_{j+1} + b_G)
    convex combination (Eq. 5)    h^t_j = w_l h^{t-1}_j + w_r h^{t-1}_{j+1} + w_c hhat
    level pooling (§Local Composition and Level Pooling)   hbar^t = mean_j or max_j h^t_j
    classifier (§Gating Network)  p(C | H=t) = g(hbar^t), an MLP shared by all levels
    gating network                gamma_t = p(H=t | x) = softmax_t(w . hbar^t) over the sentence's levels
    consensus                     p(C | x) = sum_t gamma_t p(C | H=t)
    objective (Eq. 14)            -log p(y | x) + lambda (|W_L|_F^2 + |W_R|_F^2)

Unit (t, j) covers words j..j+t-1, so level t has n-t+1 units and a sentence of n words has n levels.
Each level is computed for the whole batch in one step (L-1 steps in all). With right padding, unit
(t, j) (0-based j) is real iff j + t <= n; its two children then are real too, so real units never
see a pad, and pooling and the level gate are masked to real units and levels.

Deviations from the paper:
- `logits` are log p(C | x), the log of the gamma-mixture, computed with logsumexp; softmax(logits)
  is the mixture itself and cross-entropy on them is exactly the paper's -log p(y | x).
- The Frobenius penalty is applied by AdaGrad as weight decay on W_L and W_R only (`param_groups`):
  weight_decay = 2 lambda (torch's AdaGrad adds weight_decay * W to the gradient before accumulating,
  so this is exactly the penalty's gradient). The paper penalises nothing else: the rest gets 0.
- The paper does not say which level pooling it used (mean or max), the size D, the MLP's hidden
  size, the initialisation, the learning rate or the batch size; the defaults below are our choices.
- Per-unit class probabilities (the classifier g applied to single units instead of a pooled level)
  are a probe, not the model's own output (`word_curve_kind = "probe"`): they never enter the loss,
  and they are computed for the first `explain` sentences of a batch only (the predictor's sentence, not
  the occlusion variants batched with it). With mean pooling units and levels share one space.
- `dropout` on the pooled level vectors before the classifier is not in the paper (default 0).
- The classifier g is one tanh hidden layer (`classifier_hidden` units) and a linear layer to the classes;
  the paper says only that g is an MLP, giving neither its depth nor its non-linearity.
- Word vectors that start random (every row when no pretrained vectors are used, else the rows they
  lack) are drawn from U(±0.25), Kim (2014)'s range, with the padding row at zero (`build_embedding`,
  core/models/base.py); the paper does not give this initialisation.

Shapes: B batch, L padded length (= number of levels computed), n_t = L-t+1 units at level t,
T levels, d embedding, D hidden (pyramid), H classifier hidden, C classes, 3 local gates.
Symbols: omega = (w_l, w_r, w_c) the local gates of a unit; gamma the level beliefs; U, W_*, G_*, b_*
as in the paper.
Memory: training keeps all L(L+1)/2 units for backward; under no_grad only one level of hidden
states is alive at a time, plus the (L(L+1)/2, C) explanation tensors, so long sentences are cheap.
"""

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

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
    classification_loss,
    explained,
)
from core.models.card import ModelCard
from core.views import Pyramid, Text, sentiment_scores

# A pyramid has n(n+1)/2 units: in full (a score and three gates each) 4 MB of JSON at 300 words. Beyond
# this many words it is sent without gates and with rounded scores (core.views.Pyramid.detail_words).
PYRAMID_DETAIL_WORDS = 60


@dataclass
class AdaSentConfig:
    vocab_size: int
    num_classes: int = 5
    # §Implementation Details: 50-d word2vec (Wikipedia). Ours are weaker and the trainer PCA-reduces them;
    # keeping 100 of their 300 dimensions won the TREC sweep (docs/experiments.md)
    embed_dim: int = 100
    hidden_dim: int = 100  # §Structure: D >= d (size not given; 10K-100K parameters in all, §Results)
    classifier_hidden: int = 50  # §Implementation Details: the classifier g is an MLP (size not given)
    pooling: str = "mean"  # §Local Composition and Level Pooling: "average pooling or max pooling"
    dropout: float = 0.2  # not in the paper: on pooled level vectors before g
    freeze_embeddings: bool = False  # §Implementation Details: "we fine-tune the word embeddings"

    def __post_init__(self):
        check_config(
            self,
            {
                "vocab_size": VOCAB_SIZE,
                "num_classes": NUM_CLASSES,
                "embed_dim": DIM,
                "hidden_dim": DIM,
                "classifier_hidden": DIM,
            },
        )
        if self.pooling not in ("mean", "max"):
            raise ValueError(f"pooling must be 'mean' or 'max', got {self.pooling!r}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")


@dataclass
class AdaSentOutput(ModelOutput):
    lengths: Tensor | None = None  # (B,) words per sentence = real levels per sentence
    unit_probs: list[Tensor] = field(default_factory=list)  # level t-1: (explain, n_t, C) p(C | unit (t, j))
    gates: list[Tensor] = field(default_factory=list)  # level t-2 (t >= 2): (B, n_t, 3) (w_l, w_r, w_c)
    gamma: Tensor | None = None  # (B, T) level beliefs p(H=t | x), 0 on levels t > n
    level_probs: Tensor | None = None  # (B, T, C) p(C | H=t)


class AdaSent(SentenceClassifier[AdaSentOutput]):
    key = "adasent"
    card = ModelCard(
        name="AdaSent",
        cited="Zhao et al. 2015",
        citation=('Han Zhao, Zhengdong Lu, Pascal Poupart (2015), "Self-Adaptive Hierarchical Sentence Model", IJCAI'),
        no_result="AdaSent reports no SST result (MR, CR, SUBJ, MPQA and TREC only)",
        view_text={
            "adasent_pyramid": (
                "AdaSent pyramid: unit (t, j) covers words j..j+t-1; colour = the classifier g on the unit "
                "alone (a probe)"
            ),
        },
        view_text_zh={
            "adasent_pyramid": (
                "AdaSent 金字塔：单元 (t, j) 覆盖第 j..j+t-1 个词；颜色 = 分类器 g 单独作用于该单元（探针）"
            ),
        },
        interventions_zh={
            "level_only": "§门控网络：各层级的共识（只读一个层级）",
            "uniform_gates": "§门控网络：γ_t = p(H=t | x)（换成均匀权重）",
            "fixed_local_gates": "式 5、7：每个单元的局部门（在某一层级固定为各 1/3）",
        },
    )
    config_class = AdaSentConfig
    word_curve_kind = "probe"  # level 1: g on each word alone; the model only ever applies g to pooled levels

    interventions = {
        "level_only": InterventionSpec("§Gating Network: the consensus over levels (read at one level only)", "level"),
        "uniform_gates": InterventionSpec("§Gating Network: γ_t = p(H=t | x) (replaced by uniform weights)"),
        "fixed_local_gates": InterventionSpec(
            "Eq. 5, 7: each unit's local gates (fixed to 1/3 each at a level)", "level"
        ),
    }

    def __init__(self, config: AdaSentConfig):
        super().__init__(config)
        d, D = config.embed_dim, config.hidden_dim
        self.embedding = self.build_embedding(config.vocab_size, d, config.freeze_embeddings)
        self.U = nn.Linear(d, D, bias=False)  # first-level map R^d -> R^D
        # the pyramid's shared composition (Eq. 6) and local gate (Eq. 7) parameters
        self.W_L = nn.Parameter(torch.empty(D, D))
        self.W_R = nn.Parameter(torch.empty(D, D))
        self.b_W = nn.Parameter(torch.zeros(D))
        self.G_L = nn.Parameter(torch.empty(3, D))
        self.G_R = nn.Parameter(torch.empty(3, D))
        self.b_G = nn.Parameter(torch.zeros(3))
        for weight in (self.W_L, self.W_R, self.G_L, self.G_R):
            nn.init.uniform_(weight, -1 / math.sqrt(D), 1 / math.sqrt(D))  # nn.Linear's default range
        self.classifier = nn.Sequential(  # g: hbar^t -> class scores, shared by all levels
            nn.Linear(D, config.classifier_hidden), nn.Tanh(), nn.Linear(config.classifier_hidden, config.num_classes)
        )
        self.level_gate = nn.Linear(D, 1, bias=False)  # w: one score per level (a bias cancels in the softmax)
        self.dropout = Dropout(config.dropout)

    def forward(
        self,
        ids: Tensor,
        lengths: Tensor,
        labels: Tensor | None = None,
        explain: int = 0,
        intervention: Intervention | None = None,
    ) -> AdaSentOutput:
        L, D = ids.shape[1], self.config.hidden_dim
        position = torch.arange(L, device=ids.device)  # (L,)

        # §Structure: first level, the word vectors mapped from R^d to R^D
        h = self.U(self.embedding(ids))  # (B, L, D)

        # Eqs. 6-7 for both children in one matmul: rows [W_L; G_L] read the left child, [W_R; G_R] the right
        weight = torch.cat([self.W_L, self.G_L, self.W_R, self.G_R])  # (2(D+3), D)
        bias = torch.cat([self.b_W, self.b_G])  # (D+3,)
        act = intervention
        pooled, unit_probs, gates = [], [], []
        for t in range(1, L + 1):
            if t > 1:
                both = h @ weight.T  # (B, n_{t-1}, 2(D+3))
                pre = both[:, :-1, : D + 3] + both[:, 1:, D + 3 :] + bias  # (B, n_t, D+3)
                h_hat = pre[..., :D].tanh()  # Eq. 6  (B, n_t, D)
                omega = pre[..., D:].softmax(-1)  # Eq. 7  (B, n_t, 3)
                if act is not None and act.key == "fixed_local_gates" and act.index == t:
                    omega = torch.full_like(omega, 1 / 3)
                # Eq. 5: a convex combination of the left child, the right child and the composition
                h = omega[..., 0:1] * h[:, :-1] + omega[..., 1:2] * h[:, 1:] + omega[..., 2:] * h_hat  # (B, n_t, D)
                gates.append(omega.detach())
            # level pooling over the real units only: unit (t, j) is real iff j + t <= n
            real = (position[: L - t + 1] < (lengths - t + 1)[:, None]).unsqueeze(-1)  # (B, n_t, 1)
            if self.config.pooling == "mean":
                pooled.append((h * real).sum(1) / real.sum(1).clamp_min(1))  # (B, D)
            else:
                pooled.append(h.masked_fill(~real, -math.inf).amax(1).where(real.any(1), 0.0))  # (B, D)
            if explain:  # explanation only: g's opinion of every unit of the first `explain` sentences
                with torch.no_grad():
                    unit_probs.append(self.classifier(h[:explain]).softmax(-1))  # (explain, n_t, C)
        h_bar = torch.stack(pooled, 1)  # (B, T, D)
        real_level = position[None, :] < lengths[:, None]  # (B, T): level t exists iff t <= n

        # §Gating Network: the shared classifier g gives p(C | H=t) for every level
        level_log_probs = self.classifier(self.dropout(h_bar)).log_softmax(-1)  # (B, T, C)
        # gating network w: gamma_t = softmax over the sentence's real levels of a linear score
        scores = self.level_gate(h_bar).squeeze(-1)  # (B, T)
        if act is not None and act.key == "uniform_gates":
            scores = torch.zeros_like(scores)
        elif act is not None and act.key == "level_only":  # a sentence with fewer levels reads its top one
            level = torch.minimum(lengths, torch.tensor(act.index, device=ids.device)) - 1  # (B,)
            scores = torch.where(position[None, :] == level[:, None], 0.0, -math.inf)
        scores = scores.masked_fill(~real_level, -math.inf)  # (B, T)
        log_gamma = scores.log_softmax(-1)  # (B, T)
        # consensus p(C | x) = sum_t gamma_t p(C | H=t), in log space; Eq. 14's data term is CE on it
        logits = torch.logsumexp(log_gamma[..., None] + level_log_probs, dim=1)  # (B, C)

        return AdaSentOutput(
            logits=logits,
            loss=classification_loss(logits, labels),
            lengths=lengths,
            unit_probs=unit_probs,
            gates=gates,
            gamma=log_gamma.detach().exp(),
            level_probs=level_log_probs.detach().exp(),
        )

    def intervention_range(self, key: str) -> tuple[int, int]:
        return (2, SENTENCE_INDEX[1]) if key == "fixed_local_gates" else SENTENCE_INDEX  # level 1 has no gates

    def param_groups(self, weight_decay: float) -> list[dict]:
        """Eq. 14's Frobenius penalty lambda (|W_L|^2 + |W_R|^2) as weight decay on W_L and W_R only
        (weight_decay = 2 lambda); nothing else is penalised; the sparse embedding has its own group."""
        penalised = {id(self.W_L), id(self.W_R)}
        trained = [p for p in self.parameters() if p.requires_grad and p is not self.embedding.weight]
        groups = [
            {"params": [self.W_L, self.W_R], "weight_decay": weight_decay},
            {"params": [p for p in trained if id(p) not in penalised], "weight_decay": 0.0},
        ]
        if self.embedding.weight.requires_grad:
            groups.append({"params": [self.embedding.weight], "weight_decay": 0.0})
        return groups

    def word_curve(self, output: AdaSentOutput, index: int) -> Tensor:
        """A probe, (n, C): the shared classifier g on each level-1 unit (word) alone. The model never does
        this (g only sees pooled levels), so it shows what g makes of a word, not a step of the model."""
        return output.unit_probs[0][index, : int(explained(output.lengths)[index])]

    def views(self, output: AdaSentOutput, index: int, words: list[str], class_names: list[str] | None = None) -> list:
        n = int(explained(output.lengths)[index])
        reduced = n > PYRAMID_DETAIL_WORDS
        scores, gates = [], []
        for t in range(1, n + 1):  # level t has n-t+1 real units
            level_scores, label, score_range = sentiment_scores(
                output.unit_probs[t - 1][index, : n - t + 1].tolist(), class_names
            )
            scores.append([round(s, 3) for s in level_scores] if reduced else level_scores)
            gates.append(
                [] if t == 1 or reduced else [tuple(g) for g in output.gates[t - 2][index, : n - t + 1].tolist()]
            )
        pyramid = Pyramid(
            title=Text("adasent_pyramid"),
            words=list(words),
            scores=scores,
            gates=gates,
            level_beliefs=explained(output.gamma)[index, :n].tolist(),
            level_probs=explained(output.level_probs)[index, :n].tolist(),
            score_label=label,
            score_range=score_range,
            detail_words=PYRAMID_DETAIL_WORDS if reduced else 0,
        )
        return [pyramid]
