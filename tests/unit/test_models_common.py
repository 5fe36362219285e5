"""Checks every registered model must pass (the transformers 'ModelTester' idea, without the mixin):
output shapes, padding invariance, batch-permutation equivariance, eval determinism, save/load
round trip, a per-word curve that matches its declared kind, views that serialise and name the task's
classes, and a smoke overfit. Then, on the trained tiny checkpoints (tests/lab_fixture.py), the
predictor's batched explanations against separate forward calls: occlusion and prefix curves."""

import dataclasses
import json

import pytest
import torch

from core.checkpoints.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from core.data.batching import pad_batch
from core.data.vocab import Vocab
from core.models import MODELS, PAPER_MODELS, model_class
from core.models.base import Dropout, dropout
from core.wire import plain

VOCAB, CLASSES = 23, 3
# tiny configs with pairwise-different sizes, so a wrong transpose fails loudly
TINY = {
    "nbow": dict(embed_dim=5, hidden=7),
    "tensor_cnn": dict(embed_dim=5, hidden=7, num_layers=2),
    "mrnn": dict(embed_dim=5, hidden=7),
    "dcnn": dict(embed_dim=8, widths=[3, 2], maps=[2, 3], k_top=2),
    "adasent": dict(embed_dim=5, hidden_dim=7, classifier_hidden=6),
    "agt": dict(embed_dim=5, hidden=7, num_layers=4, attention_dim=6, fc_hidden=8),
}
SENTENCES = [[3, 4, 5, 6, 7, 8, 9], [10, 11], [12, 13, 14, 15], [16]]


def build(key: str, num_classes: int = CLASSES):
    cls = model_class(key)
    model = cls(cls.config_class(vocab_size=VOCAB, num_classes=num_classes, **TINY[key]))
    return model.eval()


@pytest.fixture(params=sorted(MODELS))
def key(request):
    return request.param


def test_output_shapes_and_probabilities(key):
    model = build(key)
    batch = pad_batch(SENTENCES, [0, 1, 2, 1])
    out = model(batch.ids, batch.lengths, batch.labels)
    assert out.logits.shape == (4, CLASSES)
    assert out.loss is not None and out.loss.ndim == 0 and torch.isfinite(out.loss)
    assert torch.allclose(out.logits.softmax(-1).sum(-1), torch.ones(4))
    assert model.predict_labels(out).shape == (4,)


def test_padding_invariance_and_batch_equivariance(key):
    model = build(key)
    batch = pad_batch(SENTENCES)
    with torch.no_grad():
        together = model(batch.ids, batch.lengths).logits
        for i, sentence in enumerate(SENTENCES):
            alone = pad_batch([sentence])
            torch.testing.assert_close(model(alone.ids, alone.lengths).logits[0], together[i], atol=1e-5, rtol=1e-4)
        order = [2, 0, 3, 1]
        permuted = pad_batch([SENTENCES[i] for i in order])
        torch.testing.assert_close(model(permuted.ids, permuted.lengths).logits, together[order], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(model(batch.ids, batch.lengths).logits, together)  # eval is deterministic


def test_native_curve_and_views(key):
    model = build(key)
    batch = pad_batch(SENTENCES)
    with torch.no_grad():
        out = model(batch.ids, batch.lengths, explain=len(SENTENCES))
    for i, sentence in enumerate(SENTENCES):
        curve = model.word_curve(out, i)
        assert (curve is not None) == (model.word_curve_kind is not None)  # the predictor trusts the kind
        assert model.word_curve_kind in (None, "native", "probe")
        if curve is not None:
            assert curve.shape == (len(sentence), CLASSES)
            torch.testing.assert_close(curve.sum(-1), torch.ones(len(sentence)))
        words = [f"w{t}" for t in sentence]
        for view in model.views(out, i, words):
            # plain data only, and the same as dataclasses.asdict would give (plain skips its copies)
            as_json = json.dumps(plain(view), sort_keys=True)
            assert as_json == json.dumps({"type": type(view).__name__, **dataclasses.asdict(view)}, sort_keys=True)


def test_two_class_scores_name_the_task_class(key):
    """A 2-class score is P(class 1) named by the task's own label: SUBJ's class 1 is 'objective'."""
    model = build(key, num_classes=2)
    batch = pad_batch(SENTENCES)
    with torch.no_grad():
        out = model(batch.ids, batch.lengths, explain=1)
    words = [f"w{t}" for t in SENTENCES[0]]
    shown = json.dumps([plain(v) for v in model.views(out, 0, words, ["subjective", "objective"])])
    assert "P(positive)" not in shown and "P(class 1)" not in shown
    assert ("P(objective)" in shown) == (key in ("tensor_cnn", "mrnn", "adasent"))  # the views with a score


def test_save_load_roundtrip(key, tmp_path):
    model = build(key)
    vocab = Vocab(["<pad>", "<unk>"] + [f"w{i}" for i in range(2, VOCAB)])
    save_checkpoint(tmp_path, model, vocab, {"task": "sst5", "lang": "en", "labels": ["a", "b", "c"]})
    loaded = load_checkpoint(tmp_path)
    batch = pad_batch(SENTENCES)
    with torch.no_grad():
        assert torch.equal(model(batch.ids, batch.lengths).logits, loaded.model(batch.ids, batch.lengths).logits)


def test_hub_mixin_round_trip_carries_vocabulary_and_labels(key, tmp_path):
    """save_pretrained / from_pretrained (huggingface_hub's PyTorchModelHubMixin, local folder): the same
    class, logits, vocabulary and labels, in eval mode; another model class refuses the folder."""
    model = build(key)
    with pytest.raises(ValueError, match="vocabulary and labels"):
        model.save_pretrained(tmp_path / "bare")
    model.vocab = Vocab(["<pad>", "<unk>"] + [f"w{i}" for i in range(2, VOCAB)])
    model.meta = {"task": "sst5", "lang": "en", "labels": ["a", "b", "c"]}
    model.save_pretrained(tmp_path / "saved")
    cls = model_class(key)
    loaded = cls.from_pretrained(tmp_path / "saved")
    assert type(loaded) is cls and not loaded.training
    assert loaded.vocab.itos == model.vocab.itos and loaded.labels == ["a", "b", "c"]
    assert loaded.config == model.config
    batch = pad_batch(SENTENCES)
    with torch.no_grad():
        assert torch.equal(model(batch.ids, batch.lengths).logits, loaded(batch.ids, batch.lengths).logits)
    assert load_checkpoint(tmp_path / "saved").meta["model"] == key  # the lab's own format
    other = model_class("nbow" if key != "nbow" else "dcnn")
    with pytest.raises(CheckpointError, match=f"holds a {key} model"):
        other.from_pretrained(tmp_path / "saved")


def test_hub_mixin_loads_strictly(tmp_path):
    """A weights file with a tensor the model lacks is refused; strict=False is refused too."""
    from safetensors.torch import load_file, save_file

    model = build("dcnn")
    model.vocab = Vocab(["<pad>", "<unk>"] + [f"w{i}" for i in range(2, VOCAB)])
    model.meta = {"task": "sst5", "lang": "en", "labels": ["a", "b", "c"]}
    model.save_pretrained(tmp_path)
    weights = load_file(str(tmp_path / "model.safetensors"))
    save_file({**weights, "extra.weight": torch.zeros(2)}, str(tmp_path / "model.safetensors"))
    config = json.loads((tmp_path / "config.json").read_text())
    config["files"].pop("model.safetensors")  # the sha256 check would refuse it first
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="unexpected"):
        model_class("dcnn").from_pretrained(tmp_path, strict=True)
    with pytest.raises(ValueError, match="always strict"):
        model_class("dcnn").from_pretrained(tmp_path, strict=False)


def test_hub_mixin_push_uploads_what_from_pretrained_reads(tmp_path, monkeypatch):
    """push_to_hub uploads the save_pretrained folder (HfApi stubbed: no network); it loads back."""
    import huggingface_hub

    uploaded = tmp_path / "uploaded"

    def upload_folder(self, *, folder_path, **kwargs):
        __import__("shutil").copytree(folder_path, uploaded)

    monkeypatch.setattr(
        huggingface_hub.HfApi,
        "create_repo",
        lambda self, repo_id, **kwargs: huggingface_hub.RepoUrl(f"https://huggingface.co/{repo_id}"),
    )
    monkeypatch.setattr(huggingface_hub.HfApi, "upload_folder", upload_folder)
    model = build("agt")
    model.vocab = Vocab(["<pad>", "<unk>"] + [f"w{i}" for i in range(2, VOCAB)])
    model.meta = {"task": "sst5", "lang": "en", "labels": ["a", "b", "c"]}
    model.push_to_hub("someone/agt-tiny", token="hf_dummy")
    assert {"model.safetensors", "config.json", "vocab.json", "README.md"} <= {p.name for p in uploaded.iterdir()}
    batch = pad_batch(SENTENCES)
    with torch.no_grad():
        assert torch.equal(
            model(batch.ids, batch.lengths).logits,
            model_class("agt").from_pretrained(uploaded)(batch.ids, batch.lengths).logits,
        )


@pytest.mark.parametrize("model", PAPER_MODELS)
def test_from_pretrained_gives_the_labs_logits(lab, lab_root, model):
    """`<Model>.from_pretrained(<checkpoint folder>)` is the model the lab serves."""
    ckpt = lab.checkpoints[("sst5", model)]
    loaded = model_class(model).from_pretrained(ckpt.path)
    assert loaded.labels == ckpt.meta["labels"] and loaded.vocab.itos == ckpt.vocab.itos
    batch = pad_batch([ckpt.vocab.encode("the film is not good".split())])
    with torch.no_grad():
        assert torch.equal(loaded(batch.ids, batch.lengths).logits, ckpt.model(batch.ids, batch.lengths).logits)


def test_overfits_a_few_sentences(key):
    torch.manual_seed(0)
    model = build(key).train()
    batch = pad_batch(SENTENCES, [0, 1, 2, 1])
    params = [
        p
        for p in model.parameters()
        if p.requires_grad and not (p is model.embedding.weight and model.embedding.sparse)
    ]
    optimizer = torch.optim.Adam(params, lr=0.02)
    first = None
    for _ in range(150):
        loss = model(batch.ids, batch.lengths, batch.labels).loss
        first = first if first is not None else loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        out = model(batch.ids, batch.lengths, batch.labels)
    assert out.loss.item() < 0.5 * first
    assert model.predict_labels(out).tolist() == [0, 1, 2, 1]


@pytest.mark.parametrize("sqrt_scale", [False, True])
def test_shared_dropout_is_inverted_dropout(sqrt_scale):
    torch.manual_seed(0)
    x, p = torch.ones(200_000), 0.3
    dropped = dropout(x, p, training=True, sqrt_scale=sqrt_scale)
    kept = dropped != 0
    assert abs(kept.float().mean().item() - (1 - p)) < 0.01  # each entry kept with probability 1-p
    scale = (1 - p) ** (-0.5 if sqrt_scale else -1)
    torch.testing.assert_close(dropped[kept], torch.full_like(dropped[kept], scale))
    assert dropout(x, p, training=False) is x and dropout(x, 0.0, training=True) is x
    module = Dropout(p)
    assert (module.train()(x) == 0).any() and module.eval()(x) is x


# -- the predictor's batched explanations, against one forward call each ---------------------------------


@pytest.mark.parametrize("model", PAPER_MODELS)
def test_occlusion_and_prefix_curve_equal_separate_forward_calls(lab, model):
    """occlusion[i] = P(label | s) - P(label | s without word i), and row i of a prefix curve is
    P(. | w_1..w_i), each from its own forward call (the predictor runs them all as one batch)."""
    p = lab.predict("the film is not good , but the plot is dull", model)
    ckpt = lab.checkpoints[("sst5", model)]
    ids = ckpt.vocab.encode([t.text for t in p.tokens])

    def probs(sentence: list[int]) -> list[float]:
        batch = pad_batch([sentence])
        with torch.no_grad():
            return ckpt.model(batch.ids, batch.lengths).logits.softmax(-1)[0].tolist()

    label = p.labels.index(p.label)
    full = probs(ids)
    assert p.probs == pytest.approx(full, abs=1e-5)
    without = [probs(ids[:i] + ids[i + 1 :]) for i in range(len(ids))]
    assert len(p.occlusion) == len(ids) > 1
    assert p.occlusion == pytest.approx([full[label] - w[label] for w in without], abs=1e-5)
    if p.curve.kind == "prefix":
        assert p.curve.probs == [pytest.approx(probs(ids[: i + 1]), abs=1e-5) for i in range(len(ids))]
    else:
        assert p.curve.kind == {"tensor_cnn": "native", "mrnn": "native", "adasent": "probe"}[model]
