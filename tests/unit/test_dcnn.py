"""DCNN (Kalchbrenner et al. 2014): the vectorised layers against loop references of the paper's
equations, on tiny float64 inputs, plus padding invariance and the induced feature graph."""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from core.checkpoints.checkpoint import save_checkpoint
from core.data import load_task
from core.data.vocab import Vocab
from core.models.dcnn import DCNN, DCNNConfig, DCNNLayer, dynamic_k, kmax_pooling
from core.training.recipes import load_recipe
from core.views import KMaxGraph, Table
from core.wire import plain
from tools.research.detectors import main as detectors_main
from tools.research.detectors import markdown_table, top_ngrams

VOCAB = 23  # conftest.py seeds torch before every test


def tiny_model(**overrides) -> DCNN:
    # pairwise-distinct sizes; widths above k_top and above the shortest test sentences
    config = dict(vocab_size=VOCAB, num_classes=3, embed_dim=12, widths=[4, 3], maps=[3, 5], k_top=2)
    model = DCNN(DCNNConfig(**{**config, **overrides})).double().eval()
    with torch.no_grad():  # a non-zero bias, so a missing bias or a bias before pooling would show
        for layer in model.layers:
            layer.bias.normal_()
    return model


def batch(sentences: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(s) for s in sentences])
    ids = torch.zeros(len(sentences), int(lengths.max()), dtype=torch.long)
    for i, s in enumerate(sentences):
        ids[i, : len(s)] = torch.tensor(s)
    return ids, lengths


# -- loop references of the paper's equations ------------------------------------------------------
def ref_kmax(seq: list[float], k: int) -> tuple[list[int], list[float]]:
    """§3.2: the k largest values in their original order (ties: earlier position first)."""
    kept = sorted(sorted(range(len(seq)), key=lambda p: (-seq[p], p))[:k])
    return kept, [seq[p] for p in kept]


def ref_wide_conv(x, weight, m):
    """Eq. 1 (wide) + Eq. 7: x[k][r] is map k, row r (a list over positions); weight[r, j, k, i]."""
    n_in, rows, s = len(x), len(x[0]), len(x[0][0])
    n_out = weight.shape[1]
    return [
        [
            [
                sum(
                    float(weight[r, j, k, i]) * x[k][r][p - m + 1 + i]
                    for k in range(n_in)
                    for i in range(m)
                    if 0 <= p - m + 1 + i < s
                )
                for p in range(s + m - 1)
            ]
            for r in range(rows)
        ]
        for j in range(n_out)
    ]


def ref_logits(model: DCNN, words: list[int]) -> list[float]:
    """The whole DCNN for one unpadded sentence, one scalar at a time."""
    cfg, s, num_layers = model.config, len(words), len(model.layers)
    emb = model.embedding.weight.detach()
    x = [[[float(emb[w, r]) for w in words] for r in range(cfg.embed_dim)]]  # Eq. 2: one map, d rows
    for l, layer in enumerate(model.layers, start=1):
        rows, n_in, m = len(x[0]), len(x), layer.width
        weight = layer.conv.weight.detach().view(rows, -1, n_in, m)  # (r, n_out, n_in, m)
        conv = ref_wide_conv(x, weight, m)
        folded = [[[a + b for a, b in zip(fmap[2 * r], fmap[2 * r + 1])] for r in range(rows // 2)] for fmap in conv]
        k = max(cfg.k_top, math.ceil(Fraction(num_layers - l, num_layers) * s))  # Eq. 4
        bias = layer.bias.detach()
        x = [
            [[math.tanh(v + float(bias[r, j])) for v in ref_kmax(seq, k)[1]] for r, seq in enumerate(fmap)]
            for j, fmap in enumerate(folded)
        ]
    features = [x[j][r][q] for r in range(len(x[0])) for j in range(len(x)) for q in range(cfg.k_top)]
    W, b = model.out.weight.detach(), model.out.bias.detach()
    return [sum(float(W[c, f]) * v for f, v in enumerate(features)) + float(b[c]) for c in range(cfg.num_classes)]


# -- Eq. 4 ----------------------------------------------------------------------------------------
def test_dynamic_k_paper_example():
    s = torch.tensor([18])
    assert [int(dynamic_k(s, l, 3, 3)) for l in (1, 2, 3)] == [12, 6, 3]


def test_dynamic_k_formula():
    s = torch.arange(1, 41)
    for num_layers in range(1, 5):
        for l in range(1, num_layers + 1):
            for k_top in range(1, 6):
                expected = [max(k_top, math.ceil(Fraction(num_layers - l, num_layers) * n)) for n in s.tolist()]
                assert dynamic_k(s, l, num_layers, k_top).tolist() == expected


# -- §3.2 k-max pooling ---------------------------------------------------------------------------
@pytest.mark.parametrize("ties", [False, True])
def test_kmax_keeps_k_largest_in_order(ties):
    B, r, n, W = 4, 3, 2, 9
    x = torch.randint(0, 3, (B, r, n, W)).double() if ties else torch.randn(B, r, n, W, dtype=torch.float64)
    width, k = torch.tensor([9, 4, 7, 1]), torch.tensor([5, 4, 2, 1])
    values, positions = kmax_pooling(x, k, width)
    assert values.shape == positions.shape == (B, r, n, 5)
    for b in range(B):
        for i in range(r):
            for j in range(n):
                kept, vals = ref_kmax(x[b, i, j, : width[b]].tolist(), int(k[b]))
                pad = 5 - len(kept)
                assert positions[b, i, j].tolist() == kept + [-1] * pad
                assert values[b, i, j].tolist() == vals + [0.0] * pad


def test_kmax_gradient_reaches_kept_columns_only():
    x = torch.tensor([[[[1.0, 5.0, 3.0, 4.0]]]], requires_grad=True)
    values, positions = kmax_pooling(x, torch.tensor([2]), torch.tensor([4]))
    assert positions.tolist() == [[[[1, 3]]]] and values.tolist() == [[[[5.0, 4.0]]]]
    values.sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.0, 0.0, 1.0]]]]


def sorted_kmax(x, k, width):
    """k-max pooling by a full stable sort of every row (the implementation before top-k): the brute force."""
    W, K = x.shape[-1], int(k.max())
    scores = x.masked_fill(torch.arange(W) >= width[:, None, None, None], float("-inf"))
    ranked = scores.sort(dim=-1, descending=True, stable=True).indices[..., :K]  # largest first, ties: earlier first
    keep = torch.arange(K) < k[:, None, None, None]
    positions = ranked.masked_fill(~keep, W).sort(-1).values
    values = x.gather(-1, positions.clamp_max(W - 1)).masked_fill(~keep, 0.0)
    return values, positions.masked_fill(~keep, -1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("same_k", [False, True])  # one k for the batch: the unsorted top-k
@pytest.mark.parametrize("ties", [False, True])  # True: a few distinct values, ties across the k-th everywhere
def test_kmax_equals_a_stable_sort(dtype, same_k, ties):
    generator = torch.Generator().manual_seed(5)
    for trial in range(40):
        B, r, n, W = 6, 3, 4, int(torch.randint(1, 40, (1,), generator=generator))
        if ties:
            levels = int(torch.randint(1, 6, (1,), generator=generator))
            x = (torch.randint(0, levels, (B, r, n, W), generator=generator) - levels // 2).to(dtype)
        else:
            x = torch.randn(B, r, n, W, generator=generator, dtype=dtype)
        width = torch.randint(1, W + 1, (B,), generator=generator)
        k = torch.full((B,), int(width.min())) if same_k else (torch.rand(B, generator=generator) * width).long() + 1
        expected = sorted_kmax(x, k, width)
        values, positions = kmax_pooling(x, k, width)
        assert torch.equal(positions, expected[1]), trial
        assert torch.equal(values, expected[0]), trial


def test_kmax_tie_across_the_kth_value_goes_to_the_earlier_column():
    x = torch.tensor([[[[1.0, 3.0, 2.0, 3.0, 3.0]]], [[[3.0, 3.0, 0.0, 0.0, 0.0]]]])  # (2, 1, 1, 5)
    for width in (torch.tensor([5, 5]), torch.tensor([5, 2])):  # the second sentence with or without padding
        values, positions = kmax_pooling(x, torch.tensor([2, 1]), width)
        assert positions.tolist() == [[[[1, 3]]], [[[0, -1]]]]
        values, positions = kmax_pooling(x, torch.tensor([2, 2]), width)
        assert positions.tolist() == [[[[1, 3]]], [[[0, 1]]]] and values.tolist() == [[[[3.0, 3.0]]], [[[3.0, 3.0]]]]


# -- §3.1 wide convolution (Eq. 1, 7) and §3.6 folding --------------------------------------------
@pytest.mark.parametrize("T", [2, 6])  # 2: a sentence shorter than the filter
def test_wide_convolution_and_folding(T):
    rows, n_in, n_out, m, B = 6, 3, 4, 5, 2
    layer = DCNNLayer(rows, n_in, n_out, m).double()
    x = torch.randn(B, rows, n_in, T, dtype=torch.float64)
    width, k = torch.full((B,), T), torch.full((B,), 2)
    out, kept, conv = layer(x, width, k, unfolded=B)
    assert conv.shape == (B, rows, n_out, T + m - 1)  # wide: s + m - 1
    weight = layer.conv.weight.detach().view(rows, n_out, n_in, m)
    for b in range(B):
        expected = ref_wide_conv(x[b].transpose(0, 1).tolist(), weight, m)  # [map][row][position]
        torch.testing.assert_close(conv[b].transpose(0, 1), torch.tensor(expected, dtype=torch.float64))
    # §3.6 folding (done inside the layer's convolution): adjacent rows summed, then k-max, bias and tanh
    values, positions = kmax_pooling(conv[:, 0::2] + conv[:, 1::2], k, width + m - 1)
    assert out.shape == kept.shape == (B, rows // 2, n_out, 2)  # folding halves the rows
    assert torch.equal(kept, positions)
    torch.testing.assert_close(out, torch.tanh(values + layer.bias[:, :, None]))
    assert layer(x, width, k)[2] is None  # the unfolded convolution only when asked (explanations)


def test_wide_convolution_is_a_full_convolution():
    layer = DCNNLayer(rows=4, in_maps=1, out_maps=1, width=3).double()
    x = torch.randn(1, 4, 1, 5, dtype=torch.float64)
    conv = layer(x, torch.tensor([5]), torch.tensor([2]), unfolded=1)[2]
    for r in range(4):  # Eq. 1 is a correlation: numpy's full convolution with the filter reversed
        expected = np.convolve(x[0, r, 0].numpy(), layer.conv.weight[r, 0].detach().numpy()[::-1], mode="full")
        np.testing.assert_allclose(conv[0, r, 0].detach().numpy(), expected)


# -- the whole network ----------------------------------------------------------------------------
SENTENCES = [[3, 7, 1, 9, 22, 4, 8, 15], [5], [2, 11, 6], [12, 12, 12, 12, 12, 12, 12], [19, 4, 17, 4, 20]]


def test_forward_matches_loop_reference():
    model = tiny_model()
    ids, lengths = batch(SENTENCES)
    out = model(ids, lengths, explain=len(SENTENCES))
    expected = torch.tensor([ref_logits(model, s) for s in SENTENCES], dtype=torch.float64)
    torch.testing.assert_close(out.logits, expected)
    assert out.k.tolist() == [[8, 4, 2], [1, 2, 2], [3, 2, 2], [7, 4, 2], [5, 3, 2]]
    assert out.conv1.shape == (5, 12, 3, 8 + 4 - 1)


def test_one_layer_trec_shape_matches_reference():
    model = tiny_model(widths=[5], maps=[4], k_top=3, conv_l2_scale=[0.3])
    ids, lengths = batch(SENTENCES)
    expected = torch.tensor([ref_logits(model, s) for s in SENTENCES], dtype=torch.float64)
    torch.testing.assert_close(model(ids, lengths).logits, expected)


def test_same_prediction_alone_and_in_a_batch():
    model = tiny_model()
    ids, lengths = batch(SENTENCES)
    together = model(ids, lengths, explain=len(SENTENCES))
    for i, sentence in enumerate(SENTENCES):  # alone, and last in a permuted batch with longer sentences
        alone = model(*batch([sentence]), explain=1)
        order = [j for j in range(len(SENTENCES)) if j != i] + [i]
        permuted = model(*batch([SENTENCES[j] for j in order]), explain=len(SENTENCES))
        for other, index in ((together, i), (permuted, len(SENTENCES) - 1)):
            torch.testing.assert_close(other.logits[index], alone.logits[0])
            for level, (pos, act) in enumerate(zip(other.positions, other.activations)):
                n = int(alone.k[0, level])
                assert torch.equal(pos[index, ..., :n], alone.positions[level][0, ..., :n])
                assert (pos[index, ..., n:] == -1).all()
                torch.testing.assert_close(act[index, ..., :n], alone.activations[level][0, ..., :n])


def test_explanation_tensors_only_when_asked():
    model = tiny_model()
    ids, lengths = batch(SENTENCES)
    plain, explained = model(ids, lengths), model(ids, lengths, explain=1)
    assert plain.positions == plain.activations == [] and plain.k is None and plain.conv1 is None
    assert len(explained.positions) == len(explained.activations) == 3 and explained.conv1 is not None
    assert torch.equal(plain.logits, explained.logits)
    # layer 1's unfolded convolution of the explained sentences alone: the same as of the whole batch
    every = model(ids, lengths, explain=len(SENTENCES)).conv1
    assert explained.conv1.shape[0] == 1 and every.shape[0] == len(SENTENCES)
    torch.testing.assert_close(model(ids, lengths, explain=2).conv1, every[:2])


def test_loss_and_gradients():
    model = tiny_model().train()
    ids, lengths = batch(SENTENCES)
    labels = torch.tensor([0, 1, 2, 1, 0])
    out = model(ids, lengths, labels)
    torch.testing.assert_close(out.loss, torch.nn.functional.cross_entropy(out.logits, labels))
    out.loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, name
    assert model.embedding.weight.grad.is_sparse


# -- §4.2 induced feature graph -------------------------------------------------------------------
def ref_graph(model: DCNN, out, index: int, top_map: int | None):
    """Walk down from the top kept nodes with explicit loops: edges -> set of parent (row, map)."""
    num_layers = len(model.layers)
    top = out.positions[num_layers][index]
    active = {
        (r, c, q)
        for r in range(top.shape[0])
        for c in range(top.shape[1])
        for q in range(top.shape[2])
        if top_map in (None, c)
    }
    edges, levels = {}, {}
    for level in range(num_layers, 0, -1):
        pos, below = out.positions[level][index], out.positions[level - 1][index]
        k_below, m = int(out.k[index, level - 1]), model.layers[level - 1].width
        levels[level] = sorted({int(pos[node]) for node in active})
        next_active = set()
        for r, c, q in active:
            p = int(pos[r, c, q])
            for child_q in range(p - m + 1, p + 1):
                if not 0 <= child_q < k_below:
                    continue
                for child_r in (2 * r, 2 * r + 1):
                    for child_c in range(below.shape[1]):
                        child = int(below[child_r, child_c, child_q])
                        edges.setdefault((level, p, child), set()).add((r, c))
                        next_active.add((child_r, child_c, child_q))
        active = next_active
    return {key: len(pairs) for key, pairs in edges.items()}, levels


@pytest.mark.parametrize("top_map", [None, 3])
def test_feature_graph_matches_loop_reference(top_map):
    model = tiny_model()
    ids, lengths = batch(SENTENCES)
    out = model(ids, lengths, explain=len(SENTENCES))
    for index, sentence in enumerate(SENTENCES):
        words = [f"w{t}" for t in sentence]
        graph = model.feature_graph(out, index, words, top_map=top_map)
        edges, levels = ref_graph(model, out, index, top_map)
        assert {(l, p, c): w for l, p, c, w in graph.edges()} == edges
        assert graph.levels[0] == list(range(len(sentence)))
        assert {l: graph.levels[l] for l in levels} == levels


def test_every_edge_lies_in_the_convolution_window_of_a_kept_node():
    model = tiny_model()
    ids, lengths = batch(SENTENCES)
    out = model(ids, lengths, explain=len(SENTENCES))
    for index in range(len(SENTENCES)):
        graph = model.feature_graph(out, index, ["w"] * len(SENTENCES[index]))
        assert graph.edges()
        for level, parent, child, weight in graph.edges():
            m, kept, below = model.layers[level - 1].width, out.positions[level][index], out.positions[level - 1][index]
            assert parent in graph.levels[level] and child in graph.levels[level - 1] and weight >= 1
            rows, maps, _ = torch.nonzero(kept == parent, as_tuple=True)  # the kept nodes at `parent`
            window = [q for q in range(parent - m + 1, parent + 1) if 0 <= q < int(out.k[index, level - 1])]
            assert any(
                int(below[2 * r + t, c, q]) == child
                for r in rows.tolist()
                for t in (0, 1)
                for c in range(below.shape[1])
                for q in window
            )


def test_views_are_plain_python_graphs():
    model = tiny_model()
    ids, lengths = batch(SENTENCES)
    out = model(ids, lengths, explain=len(SENTENCES))
    views = model.views(out, 2, ["a", "b", "c"])
    assert [type(v) for v in views] == [KMaxGraph, KMaxGraph, Table]
    everything, one_map, detectors = views
    # the strongest detector's activation is the largest first-layer value inside the sentence's columns
    s, m = 3, model.layers[0].width
    assert detectors.rows[0][2] == pytest.approx(float(out.conv1[2, :, :, : s + m - 1].max()), abs=1e-4)
    assert all(set(row[3].split()) <= {"a", "b", "c"} and row[3] for row in detectors.rows)
    json.dumps([plain(v) for v in views])
    assert everything.words == ["a", "b", "c"] and len(everything.values[0]) == 3
    assert all(len(lv) == len(vv) for lv, vv in zip(everything.levels, everything.values))
    weights = {(l, p, c): w for l, p, c, w in everything.edges()}
    assert all(w <= weights[(l, p, c)] for l, p, c, w in one_map.edges())
    assert [len(m) for m in everything.links] == [len(level) for level in everything.levels[1:]]
    assert all(len(row) == len(below) for m, below in zip(everything.links, everything.levels) for row in m)
    assert model.word_curve(out, 2) is None


# -- configuration and optimisation ---------------------------------------------------------------
@pytest.mark.parametrize(
    "overrides, bad",
    [
        ({"embed_dim": 50}, "50"),  # not divisible by 2^2
        ({"widths": [7], "maps": [6, 14]}, "[7]"),
        ({"k_top": 8, "widths": [7, 5]}, "8"),
        ({"dropout": 1.0}, "1.0"),
        ({"conv_l2_scale": [0.3]}, "[0.3]"),
        ({"maps": [0, 4]}, "[0, 4]"),
    ],
)
def test_config_rejects_bad_values(overrides, bad):
    with pytest.raises(ValueError, match=bad.replace("[", r"\[").replace("]", r"\]")):
        DCNNConfig(vocab_size=VOCAB, **overrides)


def test_presets_are_the_papers():
    presets = load_recipe("dcnn").presets
    assert presets["sst2"] == {"widths": [7, 5], "maps": [6, 14], "k_top": 4}
    defaults = DCNNConfig(vocab_size=VOCAB)
    assert (defaults.widths, defaults.maps, defaults.k_top, defaults.embed_dim) == ([10, 7], [6, 12], 5, 48)
    assert not defaults.freeze_embeddings
    for name, preset in presets.items():
        model = DCNN(DCNNConfig(vocab_size=VOCAB, **preset)).eval()
        assert model(*batch([[4]])).logits.shape == (1, 5), name  # one word: shorter than every filter
    trec = DCNNConfig(vocab_size=VOCAB, **presets["trec"])
    assert (trec.widths, trec.maps, trec.embed_dim) == ([8], [5], 128)


def test_param_groups_per_layer_l2():
    model = tiny_model()
    groups = model.param_groups(1e-4)
    params = [p for g in groups for p in g["params"]]
    assert len(params) == len({id(p) for p in params}) == len(list(model.parameters()))
    decay = {id(p): g["weight_decay"] for g in groups for p in g["params"]}
    assert decay[id(model.layers[0].conv.weight)] == pytest.approx(3e-5)
    assert decay[id(model.layers[1].conv.weight)] == pytest.approx(3e-6)
    assert decay[id(model.out.weight)] == 1e-4
    assert decay[id(model.embedding.weight)] == decay[id(model.layers[0].bias)] == decay[id(model.out.bias)] == 0.0
    optimizer = torch.optim.Adagrad(groups, lr=0.1)  # sparse embedding gradients need weight_decay 0
    model.train()(*batch(SENTENCES), torch.tensor([0, 1, 2, 1, 0])).loss.backward()
    optimizer.step()


# -- §5.5 first-layer feature detectors -----------------------------------------------------------
def test_top_ngrams_ranks_detector_windows():
    model = tiny_model()
    vocab = Vocab(["<pad>", "<unk>"] + [f"w{i}" for i in range(2, VOCAB)])
    sentences = [[vocab.itos[t] for t in s] for s in SENTENCES]
    fmap, row, m = 1, 5, model.config.widths[0]
    expected = {}
    for words in sentences:  # every window of the detector, scored through the loop reference
        weight, emb = model.layers[0].conv.weight.detach().view(12, 3, 1, m), model.embedding.weight.detach()
        x = [[[float(emb[vocab.stoi[w], r]) for w in words] for r in range(12)]]
        for p, score in enumerate(ref_wide_conv(x, weight, m)[fmap][row]):
            gram = " ".join(words[max(0, p - m + 1) : p + 1])
            expected[gram] = max(score, expected.get(gram, -math.inf))
    best = sorted(expected.items(), key=lambda item: -item[1])[:4]
    got = top_ngrams(model, vocab, sentences, fmap, row, top=4, batch_size=2)
    assert [g for g, _ in got] == [g for g, _ in best]
    assert [s for _, s in got] == pytest.approx([s for _, s in best])
    table = markdown_table(got, "detector")
    assert table.count("\n| ") == 5 and got[0][0] in table
    with pytest.raises(ValueError, match="map 3"):
        top_ngrams(model, vocab, sentences, 3, 0)


def test_detectors_command_writes_a_table(tiny_data, tmp_path, capsys):
    vocab = Vocab.build(e.words for e in load_task("sst5", tiny_data).train)
    model = tiny_model(vocab_size=len(vocab), num_classes=5)
    save_checkpoint(tmp_path / "ckpt", model, vocab, {"task": "sst5", "lang": "en", "labels": list("abcde")})
    out = tmp_path / "table.md"
    args = ["--checkpoint", str(tmp_path / "ckpt"), "--data-dir", str(tiny_data), "--map", "2", "--row", "7"]
    detectors_main(args + ["--top", "3", "--out", str(out)])
    table = out.read_text()
    assert table.startswith("### DCNN layer-1 detector map 2, row 7: top 3 n-grams of sst5 dev+test")
    assert table.count("\n| ") == 4  # header and three n-grams
    with pytest.raises(SystemExit):
        detectors_main(args[:-4] + ["--map", "9", "--row", "0"])
    assert "map 9" in capsys.readouterr().err
