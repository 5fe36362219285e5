"""Dynamic Convolutional Neural Network (DCNN): Kalchbrenner, Grefenstette and Blunsom (2014),
"A Convolutional Neural Network for Modelling Sentences", ACL 2014.

Implemented (equation numbers as in the paper):
- Eq. 2: the sentence matrix s in R^{d x s}, one column per word; pad columns are zero.
- Eq. 1, wide (§2.2, §3.1): c_j = m^T s_{j-m+1:j} for j = 1..s+m-1, out-of-range inputs zero, with
  one filter per row (the diagonal M of Eq. 5).
- Eq. 7: F_j = sum_k m_{j,k} * F_k, each output map sums the wide convolutions of all input maps,
  row by row. All rows, maps and positions are one grouped conv1d.
- §3.6 folding: after the convolution, sum every two adjacent rows (r -> r/2); inside that conv1d, whose
  group ρ reads rows 2ρ and 2ρ+1 (groups = r/2).
- §3.2-3.3, Eq. 4: dynamic k-max pooling. Each row keeps its k_l largest values in their original
  order, with k_l = max(k_top, ceil((L - l) / L * s)) where s is the sentence length; the top layer keeps k_top.
- §3.4: one bias per row of each pooled map, then tanh.
- §5.1-5.2: dropout on the flattened top layer, a fully connected softmax layer, cross-entropy.
- §4.2: the induced feature graph (`feature_graph`, `views`), built from the kept positions.

Deviations from the paper:
- Sparse (trained) embeddings get no L2: sparse AdaGrad cannot apply weight decay. The rest of the
  per-layer L2 follows the authors' Matlab code (via Godin); biases are not penalised (§5.1 lists
  embeddings, filters and FC weights).
- Training recipe (configs/recipes/dcnn.toml): the paper names AdaGrad only. lr 0.1 comes from Godin's and
  mwilliammyers' re-implementations (taken from the Matlab code); so does dropout 0.5 (the paper gives no rate).
  Our batch is 32, not their 4 (docs/experiments.md).
- k-max ties go to the earlier position (as a stable sort would rank them), so a sentence keeps the
  same columns whatever its padding or batch (torch.topk's choice among ties changes with the
  padding); the paper does not discuss ties.
- The bias is per (row, map): §3.4 gives one bias per row of a pooled matrix, and each map is its own matrix.
- TREC (§5.3): the paper gives no k_top ("mostly the same hyper-parameters as ... binary"), so we use
  the binary 4. Its 32-d vectors were pretrained (Turian et al.); ours are PCA-reduced to 128-d, not 32-d
  (better on dev: docs/experiments.md).
  On SST (§5.2) the paper's vectors are random. On SST-5 ours start from our vectors PCA-reduced to 48-d
  (better on dev); on SST-2 the same comparison keeps random ones (the recipe's [vectors] random_for).
- Filters and FC layer use PyTorch's default initialisation (`init = "torch"`); the paper does not give one.
  `init = "glorot"` is Godin's re-implementation's (Lasagne's GlorotUniform over each layer's whole filter
  tensor, a zero softmax bias; docs/oracle.md §6.3 rows 4-5).
- There is no native per-word curve (`word_curve` stays None): the predictor computes prefix predictions.
- The induced feature graph (§4.2, `feature_graph`) gets weighted edges: an edge's weight counts the
  (row, map) pairs of the level above whose node at the parent position reaches the child position.
  The paper draws the graph unweighted; the weights, and a second graph for one top-layer map (by default
  the one that adds most to the predicted class's logit, with every map's contribution beside it), are ours.
- Word vectors that start random (every row when no pretrained vectors are used, else the rows they
  lack) are drawn from U(±0.25), Kim (2014)'s range, with the padding row at zero (`build_embedding`,
  core/models/base.py); the paper does not give this initialisation.

Glossary: B batch, T padded length, s sentence length (per sentence), d embedding size (rows of the
sentence matrix), r rows of a layer's maps (d / 2^l after l foldings), n feature maps (n_in, n_out),
m filter width, W = T + m - 1 width of a wide convolution, k per-sentence pool size (Eq. 4),
K = max k in the batch, L number of convolutional layers, C classes.
"""

from dataclasses import dataclass, field

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from core.models.base import (
    DIM,
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
from core.views import KMaxGraph, Table, Text

# bounds on a filter's width and a layer's feature maps (the paper: widths 5-10, 4-14 maps); a layer holds
# maps_in x maps_out x rows x width weights and its activations grow with maps x rows x length
FILTER_WIDTH = (1, 64)
FEATURE_MAPS = (1, 256)


@dataclass
class DCNNConfig:
    vocab_size: int
    num_classes: int = 5
    embed_dim: int = 48  # §5.2: randomly initialised 48-d word vectors
    widths: list[int] = field(default_factory=lambda: [10, 7])  # §5.2 fine-grained filter widths per layer
    maps: list[int] = field(default_factory=lambda: [6, 12])  # §5.2 fine-grained feature maps per layer
    k_top: int = 5  # §5.2 fine-grained: k of the top k-max pooling (Eq. 4)
    dropout: float = 0.5  # §5.2 dropout on the penultimate layer; rate from Godin's code
    freeze_embeddings: bool = False  # §5.2: the word vectors are trained parameters
    # Eq. 4's s: "sentence" is the paper's sentence length; "width" is the layer's convolution width (its input
    # width + m - 1), as Godin's and mwilliammyers' re-implementations compute it
    k_from: str = "sentence"
    embed_init_std: float = 0.0  # random vectors: 0 draws U(±0.25); Godin's re-implementation draws Normal(0, 0.01)
    init: str = "torch"  # filters and softmax layer: PyTorch's defaults, or "glorot" (Godin's Lasagne)
    # §5.1 L2 of each conv layer as a fraction of the softmax layer's (authors' Matlab code via Godin)
    conv_l2_scale: list[float] = field(default_factory=lambda: [0.3, 0.03])

    def __post_init__(self):
        check_config(
            self,
            {
                "vocab_size": VOCAB_SIZE,
                "num_classes": NUM_CLASSES,
                "embed_dim": DIM,
                "widths": FILTER_WIDTH,
                "maps": FEATURE_MAPS,
                "k_top": FILTER_WIDTH,
            },
        )
        if not self.widths or len(self.widths) != len(self.maps) or len(self.conv_l2_scale) != len(self.widths):
            raise ValueError(
                f"widths {self.widths}, maps {self.maps} and conv_l2_scale {self.conv_l2_scale} "
                "need one entry per convolutional layer"
            )
        if min(self.widths) < 1 or min(self.maps) < 1 or min(self.conv_l2_scale) < 0:
            raise ValueError(f"widths {self.widths} and maps {self.maps} must be >= 1, conv_l2_scale >= 0")
        if self.embed_dim % 2 ** len(self.widths):
            raise ValueError(
                f"embed_dim {self.embed_dim} must be divisible by 2^{len(self.widths)} "
                "(each layer folds its rows in pairs)"
            )
        if not 1 <= self.k_top <= self.widths[0]:
            # a one-word sentence gives widths[0] columns at layer 1, and k_top of them must exist
            raise ValueError(f"k_top {self.k_top} must be in [1, widths[0] = {self.widths[0]}]")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.k_from not in ("sentence", "width"):
            raise ValueError(f"k_from must be 'sentence' or 'width', got {self.k_from!r}")
        if self.embed_init_std < 0:
            raise ValueError(f"embed_init_std must be >= 0, got {self.embed_init_std}")
        if self.init not in ("torch", "glorot"):
            raise ValueError(f"init must be 'torch' or 'glorot', got {self.init!r}")


@dataclass
class DCNNOutput(ModelOutput):
    # Explanation only (explain > 0, for the whole batch but conv1; empty / None otherwise).
    # Per level: 0 is the words (r_0 = d rows, n_0 = 1 map), l = 1..L the nodes kept by layer l's k-max.
    # positions: kept positions in layer l's convolution output (level 0: word index), ascending, -1 past k.
    positions: list[Tensor] = field(default_factory=list)  # level l: (B, r_l, n_l, K_l) long
    # activations: tanh(pooled + bias) of those nodes (level 0: the sentence matrix), 0 past k.
    activations: list[Tensor] = field(default_factory=list)  # level l: (B, r_l, n_l, K_l)
    k: Tensor | None = None  # (B, L + 1) long: valid nodes per level; k[:, 0] = s
    conv1: Tensor | None = None  # (explain, d, n_1, T + m_1 - 1): layer 1's convolution before folding (Fig. 4)


def dynamic_k(s: Tensor, layer: int, num_layers: int, k_top: int) -> Tensor:
    """Eq. 4: k_l = max(k_top, ceil((L - l) / L * s)), in integers so the ceiling is exact."""
    return ((num_layers - layer) * s + num_layers - 1).div(num_layers, rounding_mode="floor").clamp_min(k_top)


def kmax_pooling(x: Tensor, k: Tensor, width: Tensor) -> tuple[Tensor, Tensor]:
    """§3.2: for sentence b, keep the k[b] largest of the first width[b] columns of every row of
    x (B, r, n, W), in their original order. Returns the values and their positions, both
    (B, r, n, K) with K = max(k), and value 0 / position -1 at ranks >= k[b]. Ties go to the
    earlier position (a stable ranking), so padding never changes which columns are kept."""
    W, K = x.shape[-1], int(k.max())
    k = k[:, None, None, None]  # (B, 1, 1, 1)
    scores = (
        x
        if int(width.min()) == W
        else x.masked_fill(torch.arange(W, device=x.device) >= width[:, None, None, None], float("-inf"))
    )  # (B, r, n, W) pads never win
    # a top-k instead of a full sort (half the forward at 50 words); with one k for the batch (the trainer's
    # exact-length buckets) its ranks need no order: the k-th largest value is the smallest of them
    same_k = K == int(k.min())
    top = scores.topk(K, dim=-1, sorted=not same_k)  # (B, r, n, K) each
    kth = top.values.amin(-1, keepdim=True) if same_k else top.values.gather(-1, (k - 1).expand(*x.shape[:-1], 1))
    if bool(((scores >= kth).sum(-1, keepdim=True) == k).all()):
        ranked = top.indices  # (B, r, n, K): no value outside the top k equals the k-th, so they are the stable ones
    else:  # a tie across the k-th value, where torch.topk's choice would change with the padding: rank stably
        ranked = scores.sort(dim=-1, descending=True, stable=True).indices[..., :K]  # (B, r, n, K) largest first
    if same_k:
        positions = ranked.sort(-1).values  # (B, r, n, K) original order
        return x.gather(-1, positions), positions
    keep = torch.arange(K, device=x.device) < k  # (B, 1, 1, K)
    positions = ranked.masked_fill(~keep, W).sort(-1).values  # (B, r, n, K) original order; dropped ranks last
    values = x.gather(-1, positions.clamp_max(W - 1)).masked_fill(~keep, 0.0)  # (B, r, n, K)
    return values, positions.masked_fill(~keep, -1)


class DCNNLayer(nn.Module):
    """Wide convolution (Eq. 1, 7) -> folding (§3.6) -> dynamic k-max pooling (Eq. 4) -> bias, tanh (§3.4)."""

    def __init__(self, rows: int, in_maps: int, out_maps: int, width: int):
        super().__init__()
        self.width = width
        # groups=rows: the out_maps filters of row ρ read row ρ of every input map only (Eq. 5's diagonal M)
        self.conv = nn.Conv1d(rows * in_maps, rows * out_maps, width, padding=width - 1, groups=rows, bias=False)
        self.bias = nn.Parameter(torch.zeros(rows // 2, out_maps))  # §3.4: one per row of each pooled map

    def forward(
        self, x: Tensor, width: Tensor, k: Tensor, unfolded: int = 0, fold: bool = True
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """(pooled output, kept positions, and the convolution before folding of the first `unfolded` sentences
        (unfolded, r, n, W), None without).
        Without `fold` (an intervention) folded row ρ is twice row 2ρ: the same scale, no row 2ρ+1."""
        B, r, n_in, T = x.shape
        m, n = self.width, self.bias.shape[1]
        # Eq. 7 with wide Eq. 1, per row ρ: F_j[ρ] = sum_k m_{j,k}[ρ] * F_k[ρ], zero margins of m - 1 each side;
        # §3.6 folding adds rows 2ρ and 2ρ+1, so folded row ρ is one group that reads both rows' maps with both
        # rows' filters: one convolution with half the outputs and no separate sum (2-3x faster than conv + fold)
        pairs = self.conv.weight.view(r // 2, 2, n, n_in, m)  # (r/2, 2, n, n_in, m)
        if not fold:
            pairs = torch.stack([2 * pairs[:, 0], torch.zeros_like(pairs[:, 1])], 1)
        weight = pairs.transpose(1, 2).reshape(r // 2 * n, 2 * n_in, m)
        folded = F.conv1d(x.reshape(B, r * n_in, T), weight, padding=m - 1, groups=r // 2)  # (B, r/2 * n, W)
        folded = folded.view(B, r // 2, n, T + m - 1)  # (B, r/2, n, W)
        # §3.2-3.3: keep k of the s + m - 1 valid columns (past them the input was all zero padding)
        pooled, kept = kmax_pooling(folded, k, width + m - 1)  # (B, r/2, n, K) each
        # §3.4 bias and tanh; ranks past k are zeroed: they are the next wide convolution's zero margin
        out = torch.tanh(pooled + self.bias[:, :, None]).masked_fill(kept < 0, 0.0)  # (B, r/2, n, K)
        # before folding, of the `unfolded` leading sentences only (what `views` reads): (unfolded, r, n, W)
        conv = self.conv(x[:unfolded].reshape(-1, r * n_in, T)).view(-1, r, n, T + m - 1) if unfolded else None
        return out, kept, conv


class DCNN(SentenceClassifier[DCNNOutput]):
    key = "dcnn"
    card = ModelCard(
        name="DCNN",
        cited="Kalchbrenner et al. 2014",
        citation=(
            'Nal Kalchbrenner, Edward Grefenstette, Phil Blunsom (2014), "A Convolutional Neural Network for '
            'Modelling Sentences", ACL'
        ),
        view_text={
            "dcnn_graph_all": "Induced feature graph (§4.2), all maps",
            "dcnn_graph_map": "Induced feature graph (§4.2), top-layer map {map}",
            "dcnn_detectors": "Strongest first-layer feature detectors in this sentence (width {width}, §5.5)",
            "dcnn_map": "map",
            "dcnn_row": "row",
            "dcnn_activation": "activation",
            "dcnn_ngram": "n-gram",
        },
        view_text_zh={
            "dcnn_graph_all": "诱导特征图（§4.2），全部特征映射",
            "dcnn_graph_map": "诱导特征图（§4.2），顶层特征映射 {map}",
            "dcnn_detectors": "本句中最强的第一层特征检测器（窗口宽度 {width}，§5.5）",
            "dcnn_map": "特征映射",
            "dcnn_row": "行",
            "dcnn_activation": "激活值",
            "dcnn_ngram": "n 元组",
        },
        interventions_zh={
            "map_off": "§4.2：顶层某个特征映射对预测的贡献（把它置零）",
            "max_pool": "§3.2 式 4：动态 k-max 池化（换成 k = 1 的最大池化）",
            "no_folding": "§3.6：折叠把相邻两行相加（改为每行单独读取）",
        },
    )
    config_class = DCNNConfig
    interventions = {
        "map_off": InterventionSpec("§4.2: a top-layer feature map's share of the prediction (the map zeroed)", "map"),
        "max_pool": InterventionSpec("§3.2 Eq. 4: dynamic k-max pooling (replaced by max pooling, k = 1)"),
        "no_folding": InterventionSpec("§3.6: folding sums pairs of rows (each row read alone instead)"),
    }

    def __init__(self, config: DCNNConfig):
        super().__init__(config)
        self.embedding = self.build_embedding(
            config.vocab_size, config.embed_dim, config.freeze_embeddings, config.embed_init_std
        )
        layers, rows, maps = [], config.embed_dim, 1
        for width, out_maps in zip(config.widths, config.maps):
            layers.append(DCNNLayer(rows, maps, out_maps, width))
            rows, maps = rows // 2, out_maps
        self.layers = nn.ModuleList(layers)
        self.dropout = Dropout(config.dropout)
        self.out = nn.Linear(rows * maps * config.k_top, config.num_classes)  # §5.1 fully connected softmax layer
        if config.init == "glorot":
            for layer in layers:
                # Lasagne's fans for his (F, C, rows, m) filter tensor, (C + F) * rows * m: ours has rows * C
                # input and rows * F output channels
                fans = (layer.conv.in_channels + layer.conv.out_channels) * layer.width
                nn.init.uniform_(layer.conv.weight, -((6 / fans) ** 0.5), (6 / fans) ** 0.5)
            nn.init.xavier_uniform_(self.out.weight)
            nn.init.zeros_(self.out.bias)

    def forward(
        self,
        ids: Tensor,
        lengths: Tensor,
        labels: Tensor | None = None,
        explain: int = 0,
        intervention: Intervention | None = None,
    ) -> DCNNOutput:
        B, T = ids.shape
        mask = length_mask(lengths, T)  # (B, T)
        # Eq. 2: sentence matrix, rows = embedding dimensions, one input map; pads are zero columns
        x = self.embedding(ids).masked_fill(~mask[..., None], 0.0).transpose(1, 2).unsqueeze(2)  # (B, d, 1, T)
        positions, activations, conv1 = [], [], None
        if explain:  # the kept nodes of every level and layer 1's convolution, for `views` (§4.2, Fig. 4)
            words = torch.where(mask, torch.arange(T, device=ids.device), -1)  # (B, T)
            positions, activations = [words[:, None, None, :].expand_as(x)], [x.detach()]
        act = intervention
        max_pool = act is not None and act.key == "max_pool"
        ks, width = [lengths], lengths  # width: valid columns of each sentence at the current level
        for layer_index, layer in enumerate(self.layers, start=1):
            # Eq. 4: k from the sentence length s (or the convolution's width); the top layer gets k_top
            s = lengths if self.config.k_from == "sentence" else width + self.config.widths[layer_index - 1] - 1
            k = torch.ones_like(lengths) if max_pool else dynamic_k(s, layer_index, len(self.layers), self.config.k_top)
            # (B,)
            x, kept, conv = layer(
                x,
                width,
                k,
                unfolded=explain if layer_index == 1 else 0,
                fold=not (act is not None and act.key == "no_folding"),
            )  # (B, r/2, n, K) x 2
            if explain:
                conv1 = conv.detach() if layer_index == 1 else conv1  # (B, r, n, W)
                positions.append(kept)
                activations.append(x.detach())
            ks.append(k)
            width = k
        if max_pool:  # the softmax layer reads k_top columns: the max in the first, the rest empty
            x = F.pad(x, (0, self.config.k_top - x.shape[-1]))
            if explain:
                positions[-1] = F.pad(positions[-1], (0, self.config.k_top - positions[-1].shape[-1]), value=-1)
                activations[-1] = x.detach()
        if act is not None and act.key == "map_off":
            x = x.index_fill(2, torch.tensor([act.index], device=x.device), 0.0)
            if explain:
                activations[-1] = x.detach()
        # §5.1-5.2: every sentence has exactly k_top columns at the top; dropout, then the softmax layer
        logits = self.out(self.dropout(x.flatten(1)))  # (B, C)
        return DCNNOutput(
            logits=logits,
            loss=classification_loss(logits, labels),
            positions=positions,
            activations=activations,
            k=torch.stack(ks, 1) if explain else None,
            conv1=conv1,
        )

    def conv_layers(self) -> list[DCNNLayer]:
        """`self.layers` as their own class: nn.ModuleList's items type as Module."""
        return [layer for layer in self.layers if isinstance(layer, DCNNLayer)]

    def intervention_range(self, key: str) -> tuple[int, int]:
        return 0, self.config.maps[-1] - 1  # maps are numbered from 0, as in the map menu

    def view_option_values(self, key: str) -> range:
        return range(self.config.maps[-1]) if key == "top_map" else range(0)  # the one-map graph's map (§4.2)

    def intervention_start(self, key: str, ids: Tensor, lengths: Tensor) -> int:
        # map_off: the map the panel names first, the one that adds most to the predicted class (views)
        return int(self.map_contributions(self(ids, lengths, explain=1), 0).argmax())

    def param_groups(self, weight_decay: float) -> list[dict]:
        """§5.1 L2 per layer, as in the authors' Matlab code (via Godin): conv layer l gets
        conv_l2_scale[l] * weight_decay (Godin's penalties 1.5e-5 and 1.5e-6 against 5e-5), the
        softmax weights weight_decay; biases none. The sparse embedding gets none (a deviation):
        sparse AdaGrad cannot apply weight decay."""
        groups = [
            {"params": [layer.conv.weight], "weight_decay": weight_decay * scale}
            for layer, scale in zip(self.conv_layers(), self.config.conv_l2_scale)
        ]
        groups.append({"params": [self.out.weight], "weight_decay": weight_decay})
        groups.append({"params": [layer.bias for layer in self.conv_layers()] + [self.out.bias], "weight_decay": 0.0})
        if self.embedding.weight.requires_grad:
            groups.append({"params": [self.embedding.weight], "weight_decay": 0.0})
        return groups

    # -- explanation ----------------------------------------------------------------------------
    def views(
        self,
        output: DCNNOutput,
        index: int,
        words: list[str],
        class_names: list[str] | None = None,
        top_map: int | None = None,
    ) -> list:
        """The feature graph over all maps; the one of `top_map` (default: the top-layer map that adds most
        to the predicted class's logit), with every map's contribution to that logit; the strongest detectors."""
        contributions = self.map_contributions(output, index)
        if top_map is None:
            top_map = int(contributions.argmax())
        elif top_map not in self.view_option_values("top_map"):
            raise ValueError(f"top_map {top_map} is not a top-layer map (0..{len(contributions) - 1})")
        chosen = self.feature_graph(output, index, words, top_map=top_map)
        chosen.contributions = contributions.tolist()
        return [self.feature_graph(output, index, words), chosen, self.strongest_detectors(output, index, words)]

    def map_contributions(self, output: DCNNOutput, index: int) -> Tensor:
        """(n_L,) each top-layer map's share of the predicted class's logit: its output weights times its k-max
        values (with the bias they sum to the logit)."""
        top = output.activations[-1][index]  # (r_L, n_L, k_top)
        predicted = int(output.logits[index].argmax())
        weight = self.out.weight.detach()[predicted].view_as(top)  # (r_L, n_L, k_top)
        return (weight * top).sum((0, 2))

    def strongest_detectors(self, output: DCNNOutput, index: int, words: list[str], top: int = 8) -> Table:
        """§5.5 / Fig. 4 for one sentence: the first-layer feature detectors (map, row) that respond most
        strongly anywhere in it, each with the n-gram under its filter window at that position."""
        s, m = int(explained(output.k)[index, 0]), self.conv_layers()[0].width
        conv = explained(output.conv1)[index, :, :, : s + m - 1]  # (d, n_1, s+m-1): only the sentence's own columns
        best, where = conv.max(-1)  # (d, n_1) each
        order = best.flatten().argsort(descending=True)[:top]  # (top,)
        rows = []
        for flat in order.tolist():
            row, fmap = divmod(flat, best.shape[1])
            p = int(where[row, fmap])  # Eq. 1: column p covers words p-m+1..p
            ngram = " ".join(words[max(0, p - m + 1) : min(s, p + 1)])
            rows.append([fmap, row, round(float(best[row, fmap]), 4), ngram])
        return Table(
            title=Text("dcnn_detectors", width=m),
            columns=[Text("dcnn_map"), Text("dcnn_row"), Text("dcnn_activation"), Text("dcnn_ngram")],
            rows=rows,
        )

    def feature_graph(self, output: DCNNOutput, index: int, words: list[str], top_map: int | None = None) -> KMaxGraph:
        """§4.2 induced feature graph of sentence `index`, from the top kept nodes (of all maps, or of
        `top_map` only) down to the words. A kept node at position p in row ρ of layer l joins every
        node of level l-1 at pooled index p-m+1..p (Eq. 1), in rows 2ρ and 2ρ+1 (folding) and in every
        map (Eq. 7). Kept nodes that no node above reaches are dropped; level 0 lists every
        word. Edge weight = number of (row, map) pairs of level l whose node at the parent position
        reaches the child position."""
        layers = self.conv_layers()
        num_layers = len(layers)
        positions = [p[index].cpu() for p in output.positions]  # level l: (r_l, n_l, K_l)
        activations = [a[index].cpu() for a in output.activations]  # level l: (r_l, n_l, K_l)
        k = explained(output.k)[index].tolist()  # valid nodes per level
        levels: list[list[int]] = [[] for _ in range(num_layers + 1)]
        values: list[list[float]] = [[] for _ in range(num_layers + 1)]
        weights: dict[int, Tensor] = {}  # level l: (span, span) edge weights by (parent, child) position
        active = positions[num_layers] >= 0  # (r_L, n_L, k_top)
        if top_map is not None:
            active[:, torch.arange(active.shape[1]) != top_map] = False
        for level in range(num_layers, 0, -1):
            pos, below = positions[level], positions[level - 1]  # (r, n, K), (2r, n_below, K_below)
            r, n, K = pos.shape
            levels[level], values[level] = _mean_by_position(pos[active], activations[level][active])
            # Eq. 1: the node at position p reads pooled indices p-m+1..p of the level below
            window = pos[..., None] - torch.arange(layers[level - 1].width)  # (r, n, K, m)
            used = active[..., None] & (window >= 0) & (window < k[level - 1])  # (r, n, K, m)
            # folding and Eq. 7: row ρ reads rows 2ρ and 2ρ+1 of every map below, S = 2 * n_below sources
            sources = below.view(r, -1, below.shape[-1])  # (r, S, K_below)
            reads = window.clamp(0, below.shape[-1] - 1).view(r, 1, -1).expand(-1, sources.shape[1], -1)
            child = sources.gather(2, reads).view(r, -1, n, K, window.shape[-1])  # (r, S, n, K, m) positions
            span = max(int(pos.max()), int(below.max())) + 1  # every position at both levels is < span
            child = child.masked_fill(~used[:, None], span).permute(0, 2, 3, 1, 4).reshape(r, n, K, -1)
            reaches = torch.zeros(r, n, K, span + 1).scatter_(-1, child, 1.0)[..., :span]  # (r, n, K, span)
            parent = torch.zeros(r, n, K, span + 1).scatter_(-1, pos.masked_fill(~active, span)[..., None], 1.0)
            # weight of edge (p, c): the (row, map) pairs whose node at p reaches c (one node per pair at p)
            weights[level] = torch.einsum("rnkp,rnkc->pc", parent[..., :span], reaches)  # (span, span)
            marked = torch.zeros(r, below.shape[-1] + 1, dtype=torch.bool)  # (r, K_below + 1) read indices
            marked.scatter_(1, window.masked_fill(~used, below.shape[-1]).view(r, -1), True)
            active = marked[:, None, None, :-1].expand(r, 2, below.shape[1], -1).reshape(below.shape)
        levels[0] = list(range(k[0]))
        values[0] = activations[0][:, 0, : k[0]].mean(0).tolist()  # mean over the d rows
        # the nodes reached from level l are exactly level l-1's kept nodes
        links = [
            weights[level][levels[level]][:, levels[level - 1]].int().tolist() for level in range(1, num_layers + 1)
        ]
        title = Text("dcnn_graph_all") if top_map is None else Text("dcnn_graph_map", map=top_map)
        return KMaxGraph(title=title, words=list(words), levels=levels, values=values, links=links, top_map=top_map)


def _mean_by_position(positions: Tensor, values: Tensor) -> tuple[list[int], list[float]]:
    """Distinct positions (ascending) and the mean of the values found at each."""
    unique, inverse = positions.unique(return_inverse=True)  # (U,), (N,)
    sums = torch.zeros(len(unique), dtype=values.dtype).index_add_(0, inverse, values)  # (U,)
    counts = torch.zeros(len(unique), dtype=values.dtype).index_add_(0, inverse, torch.ones_like(values))  # (U,)
    return unique.tolist(), (sums / counts).tolist()
