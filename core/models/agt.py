"""Attention Gated Transformation network (AGT).

Paper: Hongyu Guo (2017), "A Deep Network with Visual Text Composition Behavior", ACL (short papers).
No public code exists; this is built from the paper's text.

Equations implemented (paper numbering):
    §3.1   B_n = tanh(P x_n + b_P)                      shared projection of the word vectors to h = 200
    Eq. 6  m_{l,n} = w^m_l · tanh(W^m_l B_n)            one attention per layer, over the words only
    Eq. 5  d_{l,n} = softmax_n(m_{l,n})                 padded words get exactly zero attention
    Eq. 4  s+_l = sum_n d_{l,n} B_n                     the layer's selection vector
    Eq. 7  T_l = sigmoid(W^t_l s+_l + b^t_l)            transform gate, driven by the selection (l > 0)
    Eq. 8  y_0 = s+_0;  y_l = f([y_{l-1}; s+_l]) T_l + y_{l-1} (1 - T_l)   (l > 0)
    §2.2   two fully connected layers on y_{L-1}, softmax, cross entropy
The attention depends only on the words (not on y_{l-1}): B_n and m_{l,n} are functions of the word id
alone, so all layers' scores come out of one matmul over the batch's distinct ids, and only the
highway recursion (Eq. 8) loops over layers.

Deviations from the paper (and why):
- f is not specified; Eq. 1 names tanh as the example, so f(z) = tanh(W^f_l z + b^f_l).
- The attention width (rows of W^m_l), the first FC layer's width and non-linearity, and where
  dropout goes are not stated: attention_dim = fc_hidden = 200, tanh, dropout 0.2 on the input and
  the output of the first FC layer (the penultimate features, as in Kim 2014). Eq. 6 has no bias.
- Embeddings are frozen by default. The paper initialises from GloVe but does not say whether it
  fine-tunes. On the Chinese tasks, where our vectors cover little of the vocabulary, they are trained
  (configs/recipes/agt.toml); PyTorch's Adadelta has no sparse form, so the trainer gives the embedding
  dense gradients.
- Adadelta with lr 1.0 (Zeiler's original rule; PyTorch's default) instead of the stated 0.0005,
  which would shrink Adadelta's unit-free step about 2000x; L2, clipping and epochs are not stated.
- Ablation (§3.2: "only s+_0", 48.5; "s+_0..s+_2", 49.0, "removing s+_i for i > k-1"): with
  attention_layers = k > 0 only k attention vectors exist, and layers l >= k reuse the last one,
  s+_{k-1}, in Eq. 7-8; for k = 1 every layer sees the same linear combination of word vectors, which is
  what §3.2 says this ablation transforms. The paper does not say what replaces s+_l; plain highway layers
  on y_{l-1} did not train here (docs/experiments.md).
- The transform-gate bias: §3.1's +1 is the default, but with Eq. 8 as printed it starts every gate at 0.73, the
  skip paths decay by 0.27 per layer and L1-L8 get no learning signal (they stay idle). The SST-5 recipe uses
  -1.5, which carries y_{l-1} the way a Highway network starts and uses all 15 layers at the same dev
  (configs/recipes/agt.toml; docs/experiments.md, round four).
- Outputs: layer 0 has no gate (y_0 = s+_0), so `gates` holds layers 1..14 (L2..L15) only.
- Word vectors that start random (every row when no pretrained vectors are used, else the rows they
  lack) are drawn from U(±0.25), Kim (2014)'s range, with the padding row at zero (`build_embedding`,
  core/models/base.py); the paper does not give this initialisation.

Glossary: B batch, N words (padded length), U distinct word ids in the batch, E word-vector size
(GloVe 300), h layer width (200, also the projected word size), a attention width, A attending layers,
Lyr layers (15), F first FC layer width, C classes.
Paper symbols: B_n = `words[:, n]`, m = `scores`, d = `attention`, s+ = `selections`, T = `gates`,
y = `states`, l = layer index (the paper's L1..L15 are l = 0..14).
"""

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from core.models.base import (
    DIM,
    LAYERS,
    NUM_CLASSES,
    VOCAB_SIZE,
    Dropout,
    Intervention,
    InterventionSpec,
    ModelOutput,
    SentenceClassifier,
    check_config,
    classification_loss,
    explained,
    length_mask,
)
from core.models.card import ModelCard
from core.views import Heatmap, LineCurves, Table, Text

SELECTED = 0.95  # §3.1: a word is "selected" when its normalised attention is > 0.95
LOOSE = 0.5  # §3.1's looser "more than the median of the full attention", read as > 0.5 of it


@dataclass
class AGTConfig:
    vocab_size: int
    num_classes: int = 5
    embed_dim: int = 300  # §3.1: 300-d GloVe vectors
    hidden: int = 200  # §3.1: "15 layers with 200 dimensions each"; words are projected to this size
    num_layers: int = 15  # §3.1
    attention_layers: int = 0  # layers 0..k-1 get their own s+_l, later ones reuse s+_{k-1}; 0 = all. §3.2: 1, 3
    attention_dim: int = 200  # rows of W^m_l (Eq. 6): not stated, we use the layer width
    fc_hidden: int = 200  # first of the two FC layers (§2.2): width not stated
    gate_bias: float = 1.0  # §3.1: "transform gate bias of 1" (§3.2: it drives the compositional behaviour)
    dropout: float = 0.2  # §3.1
    freeze_embeddings: bool = True  # not stated in the paper: GloVe kept fixed; trained on Chinese (its recipe)
    # not in the paper: scale pretrained rows to unit norm; our CBOW vectors' norms (about 13) saturate the
    # tanh projection B = tanh(P x). Off by default until a run shows it helps (compare on SST-5 dev).
    unit_norm_vectors: bool = False

    def __post_init__(self):
        check_config(
            self,
            {
                "vocab_size": VOCAB_SIZE,
                "num_classes": NUM_CLASSES,
                "embed_dim": DIM,
                "hidden": DIM,
                "num_layers": LAYERS,
                "attention_dim": DIM,
                "fc_hidden": DIM,
            },
        )
        if self.num_layers < 2:
            raise ValueError(f"num_layers must be >= 2 (layer 0 has no gate), got {self.num_layers}")
        if not 0 <= self.attention_layers <= self.num_layers:
            raise ValueError(f"attention_layers must be in [0, {self.num_layers}], got {self.attention_layers}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")


@dataclass
class AGTOutput(ModelOutput):
    # explanation only (explain > 0, for the whole batch; None otherwise)
    attention: Tensor | None = None  # (B, A, N) d_{l,n}: sums to 1 over the real words, 0 on padding
    gates: Tensor | None = None  # (B, Lyr-1, h) T_l for layers l = 1..Lyr-1 (layer 0 has no gate)
    states: Tensor | None = None  # (B, Lyr, h) y_0..y_{Lyr-1}


class AGT(SentenceClassifier[AGTOutput]):
    key = "agt"
    card = ModelCard(
        name="AGT",
        cited="Guo 2017",
        citation='Hongyu Guo (2017), "A Deep Network with Visual Text Composition Behavior", ACL',
        no_result="the AGT paper reports SST-5 only",
        view_text={
            "agt_attention": "Layer attention over the words (min-max normalised per layer, Fig. 4)",
            "agt_attention_value": "normalised attention d_{{l,n}}",
            "agt_selected": "Words selected per layer (normalised attention > 0.95, §3.1) and composed phrases",
            "agt_selected_words": "selected words",
            "agt_phrases": "phrases (runs of selected words)",
            "agt_loose": "loose selection (> 0.5)",
            "agt_gates": "Transform-gate activity per layer (Fig. 3)",
            "agt_gate_mean": "mean T_l over units",
            "agt_gate": "transform gate T_l",
        },
        view_text_zh={
            "agt_attention": "各层对词的注意力（每层最小-最大归一化，图 4）",
            "agt_attention_value": "归一化注意力 d_{{l,n}}",
            "agt_selected": "每层选中的词（归一化注意力 > 0.95，§3.1）及组成的短语",
            "agt_selected_words": "选中的词",
            "agt_phrases": "短语（连续选中的词）",
            "agt_loose": "宽松选择（> 0.5）",
            "agt_gates": "每层变换门的活动（图 3）",
            "agt_gate_mean": "各单元 T_l 的均值",
            "agt_gate": "变换门 T_l",
        },
        interventions_zh={
            "uniform_attention": "式 4-6：某层对词的注意力（改为均匀）",
            "gates_open": "式 7-8：某层的变换门 T_l（固定全开：y_l = f(...)）",
            "gates_closed": "式 7-8：某层的变换门 T_l（固定关闭：y_l = y_{l-1}）",
            "skip_only": "§3.2：所有门关闭，只剩跳连路径：y = s+_0，即“只用 s+_0”的核心",
        },
    )
    config_class = AGTConfig

    interventions = {
        "uniform_attention": InterventionSpec("Eq. 4-6: a layer's attention over the words (made uniform)", "layer"),
        "gates_open": InterventionSpec("Eq. 7-8: a layer's transform gate T_l (fixed open: y_l = f(...))", "layer"),
        "gates_closed": InterventionSpec("Eq. 7-8: a layer's transform gate T_l (fixed shut: y_l = y_{l-1})", "layer"),
        "skip_only": InterventionSpec(
            "§3.2: every gate shut, only the skip paths: y = s+_0, the bag-of-vectors core "
            "(the paper's 'only s+_0' ablation retrains with s+_0 at every layer)"
        ),
    }

    def __init__(self, config: AGTConfig):
        super().__init__(config)
        h, a = config.hidden, config.attention_dim
        self.attention_layers = k = config.attention_layers or config.num_layers  # A
        self.embedding = self.build_embedding(config.vocab_size, config.embed_dim, config.freeze_embeddings)
        self.project = nn.Linear(config.embed_dim, h)  # §3.1: shared over words
        # Eq. 6 for all attending layers, stacked so one matmul serves them all
        self.attn_weight = nn.Parameter(torch.empty(h, k, a).uniform_(-(h**-0.5), h**-0.5))  # [:, l] = W^m_l transposed
        self.attn_vector = nn.Parameter(torch.empty(k, a).uniform_(-(a**-0.5), a**-0.5))  # w^m_l
        # Eq. 7-8 for layers 1..Lyr-1 (index l-1)
        gates = [nn.Linear(h, h) for _ in range(config.num_layers - 1)]  # W^t_l, b^t_l
        for gate in gates:
            nn.init.constant_(gate.bias, config.gate_bias)
        self.gate = nn.ModuleList(gates)
        self.transform = nn.ModuleList(nn.Linear(2 * h, h) for _ in range(config.num_layers - 1))  # W^f_l
        self.fc1 = nn.Linear(h, config.fc_hidden)
        self.fc2 = nn.Linear(config.fc_hidden, config.num_classes)
        self.dropout = Dropout(config.dropout)

    def forward(
        self,
        ids: Tensor,
        lengths: Tensor,
        labels: Tensor | None = None,
        explain: int = 0,
        intervention: Intervention | None = None,
    ) -> AGTOutput:
        mask = length_mask(lengths, ids.shape[1])  # (B, N)
        # B_n and every layer's score m_{l,n} depend on the word alone, not on its context, so we compute
        # them once per distinct word of the batch (SST phrase batches: 0.6 distinct words per token)
        types, where = torch.unique(ids, return_inverse=True)  # (U,), (B, N)
        # §3.1: the word matrix B, a shared linear projection of the word vectors followed by tanh
        type_words = self.project(self.embedding(types)).tanh()  # (U, h)
        # Eq. 6, every attending layer in one matmul: m_{l,n} = w^m_l . tanh(W^m_l B_n)
        keys = (type_words @ self.attn_weight.flatten(1)).unflatten(-1, self.attn_vector.shape).tanh()  # (U, A, a)
        type_scores = (keys * self.attn_vector).sum(-1)  # (U, A)
        words, scores = type_words[where], type_scores[where].transpose(1, 2)  # (B, N, h), (B, A, N)
        # Eq. 5: softmax over the real words only (exp(-inf) = 0 on padding)
        act = intervention
        if act is not None and act.key == "uniform_attention":  # that layer attends to every word alike
            assert act.index is not None  # check_intervention: an indexed intervention has its index
            scores = scores.index_fill(1, torch.tensor([act.index - 1], device=ids.device), 0.0)
        attention = scores.masked_fill(~mask[:, None, :], float("-inf")).softmax(-1)  # (B, A, N)
        # Eq. 4: s+_l = sum_n d_{l,n} B_n
        selections = attention @ words  # (B, A, h)

        # Eq. 8, l = 0: y_0 = s+_0
        y = selections[:, 0]  # (B, h)
        states, gates = [y], []
        for l in range(1, self.config.num_layers):
            # the ablation's layers without their own s+_l reuse the last one (see the docstring)
            s = selections[:, min(l, self.attention_layers - 1)]  # (B, h)
            # Eq. 7: T_l = sigmoid(W^t_l s+_l + b^t_l)
            gate = torch.sigmoid(self.gate[l - 1](s))  # (B, h)
            if act is not None and (
                act.key == "skip_only" or act.key in ("gates_open", "gates_closed") and act.index == l + 1
            ):  # the paper's L1..L15 are l = 0..14
                gate = torch.full_like(gate, 1.0 if act.key == "gates_open" else 0.0)
            # Eq. 8: y_l = f([y_{l-1}; s+_l]) T_l + y_{l-1} (1 - T_l) = lerp(y_{l-1}, f, T_l), f = tanh(W^f_l . + b^f_l)
            y = torch.lerp(y, torch.tanh(self.transform[l - 1](torch.cat([y, s], dim=-1))), gate)  # (B, h)
            if explain:
                states.append(y)
                gates.append(gate)

        # §2.2: two fully connected layers, then softmax (inside the cross entropy)
        hidden = self.dropout(self.fc1(self.dropout(y)).tanh())  # (B, F)
        logits = self.fc2(hidden)  # (B, C)
        explained = {}
        if explain:  # for `views`, for the whole batch
            explained = dict(
                attention=attention.detach(),
                gates=torch.stack(gates, dim=1).detach(),
                states=torch.stack(states, dim=1).detach(),
            )
        return AGTOutput(logits=logits, loss=classification_loss(logits, labels), **explained)

    # -- explanation (word_curve stays None: the predictor computes prefix predictions) ----------
    def intervention_range(self, key: str) -> tuple[int, int]:
        # layer 1 (l = 0) has no gate; the attending layers are the first `attention_layers`
        return (1, self.attention_layers) if key == "uniform_attention" else (2, self.config.num_layers)

    def views(self, output: AGTOutput, index: int, words: list[str], class_names: list[str] | None = None) -> list:
        n = len(words)
        attention = explained(output.attention)[index, :, :n].double()  # (A, n)
        # Fig. 2/4: min-max normalise each layer's weights within the sentence (one word: weight 1)
        low, high = attention.min(-1, keepdim=True).values, attention.max(-1, keepdim=True).values  # (A, 1)
        spread = high - low  # (A, 1)
        normalised = torch.where(spread > 0, (attention - low) / spread.clamp_min(1e-300), 1.0)  # (A, n)
        names = [f"L{l + 1}" for l in range(self.config.num_layers)]  # the paper's L1..L15

        rows = []
        for name, weights in zip(names, normalised.tolist()):
            selected = [w > SELECTED for w in weights]
            rows.append(
                [
                    name,
                    " ".join(w for w, keep in zip(words, selected) if keep),
                    " | ".join(_phrases(words, selected)),
                    " ".join(w for w, v in zip(words, weights) if v > LOOSE),
                ]
            )
        gate_means = explained(output.gates)[index].double().mean(-1).tolist()  # (Lyr-1,) mean over units
        return [
            Heatmap(
                title=Text("agt_attention"),
                x_labels=list(words),
                y_labels=names[: attention.shape[0]],
                values=normalised.tolist(),
                value_label=Text("agt_attention_value"),
                value_range=(0.0, 1.0),
            ),
            Table(
                title=Text("agt_selected"),
                columns=[Text("axis_layer"), Text("agt_selected_words"), Text("agt_phrases"), Text("agt_loose")],
                rows=rows,
            ),
            LineCurves(
                title=Text("agt_gates"),
                x_labels=names[1:],
                curves={Text("agt_gate_mean"): gate_means},
                y_label=Text("agt_gate"),
                x_title=Text("axis_layer"),
                y_range=(0.0, 1.0),
            ),
        ]


def _phrases(words: list[str], selected: list[bool]) -> list[str]:
    """§3.1: a phrase is a run of consecutive selected words."""
    phrases, run = [], []
    for word, keep in zip(words, selected):
        if keep:
            run.append(word)
        elif run:
            phrases.append(" ".join(run))
            run = []
    if run:
        phrases.append(" ".join(run))
    return phrases
