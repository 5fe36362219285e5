import numpy as np
import pytest

from core.data.vectors import Vectors, embedding_matrix, load_vectors, reduce_dim, save_vectors
from core.data.vocab import Vocab


def test_vocab_build_encode_roundtrip(tmp_path):
    vocab = Vocab.build([["b", "a", "b"], ["c"]], extra=["z", "a"])
    assert vocab.itos == ["<pad>", "<unk>", "b", "a", "c", "z"]
    assert vocab.encode(["a", "never-seen"]) == [3, vocab.unk_id]
    vocab.save(tmp_path / "v.json")
    assert Vocab.load(tmp_path / "v.json").itos == vocab.itos
    (tmp_path / "bad.json").write_text('{"a": 1}')
    with pytest.raises(ValueError):
        Vocab.load(tmp_path / "bad.json")


def _write_formats(tmp_path, words, matrix):
    glove = tmp_path / "glove.txt"
    glove.write_text("".join(w + " " + " ".join(f"{x:.6f}" for x in row) + "\n" for w, row in zip(words, matrix)))
    w2v_text = tmp_path / "w2v.txt"
    w2v_text.write_text(f"{len(words)} {matrix.shape[1]}\n" + glove.read_text())
    w2v_bin = tmp_path / "w2v.bin"
    with open(w2v_bin, "wb") as f:
        f.write(f"{len(words)} {matrix.shape[1]}\n".encode())
        for w, row in zip(words, matrix):
            f.write(w.encode() + b" " + row.astype(np.float32).tobytes() + b"\n")
    save_vectors(Vectors(words, matrix), tmp_path / "ours", stats={"tokens": 3})
    return [glove, w2v_text, w2v_bin, tmp_path / "ours.safetensors"]


def test_all_vector_formats_agree(tmp_path):
    words = ["good", "bad", "电影"]
    matrix = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    for path in _write_formats(tmp_path, words, matrix):
        vectors = load_vectors(path)
        assert vectors.words == words, path
        np.testing.assert_allclose(vectors.matrix, matrix, atol=1e-5, err_msg=str(path))


def test_embedding_matrix_coverage_and_unit_norm():
    vocab = Vocab.build([["good", "unseen"]])
    vectors = Vectors(["good", "bad"], np.array([[3.0, 4.0], [1.0, 0.0]], dtype=np.float32))
    matrix, coverage = embedding_matrix(vocab, vectors, unit_norm=True)
    assert coverage["found"] == 1 and coverage["vocab"] == 2
    np.testing.assert_allclose(matrix[vocab.stoi["good"]], [0.6, 0.8], atol=1e-6)
    assert not matrix[vocab.pad_id].any()


def test_words_without_a_vector_can_start_as_zero_rows():
    """missing="zero" (Lei et al.'s code, docs/oracle.md step 1): a training word the vectors lack and <unk> add
    nothing; the found words keep their (unit) rows, as with random rows."""
    vocab = Vocab.build([["good", "unseen"]])
    vectors = Vectors(["good", "bad"], np.array([[3.0, 4.0], [1.0, 0.0]], dtype=np.float32))
    random_rows, _ = embedding_matrix(vocab, vectors, unit_norm=True, seed=1)
    zero_rows, coverage = embedding_matrix(vocab, vectors, unit_norm=True, seed=1, missing="zero")
    assert coverage["found"] == 1
    np.testing.assert_array_equal(zero_rows[vocab.stoi["good"]], random_rows[vocab.stoi["good"]])
    assert random_rows[vocab.stoi["unseen"]].any() and random_rows[vocab.unk_id].any()
    assert not zero_rows[vocab.stoi["unseen"]].any() and not zero_rows[vocab.unk_id].any()
    with pytest.raises(ValueError, match="random, zero"):
        embedding_matrix(vocab, vectors, missing="mean")


def test_missing_vectors_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="make vectors"):
        load_vectors(tmp_path / "none.txt")


def test_pca_reduction_keeps_the_main_directions():
    rng = np.random.default_rng(0)
    # 3 strong directions hidden in 10-d, plus small noise
    basis = np.linalg.qr(rng.normal(size=(10, 3)))[0]
    matrix = (rng.normal(size=(400, 3)) * [9.0, 5.0, 3.0]) @ basis.T + 0.01 * rng.normal(size=(400, 10))
    vectors = Vectors([f"w{i}" for i in range(400)], matrix.astype(np.float32))
    reduced = reduce_dim(vectors, 3)
    assert reduced.matrix.shape == (400, 3) and reduced.words == vectors.words
    # distances between words survive the projection (the dropped 7 dimensions were only noise)
    original = np.linalg.norm(matrix[:50, None] - matrix[None, :50], axis=-1)
    projected = np.linalg.norm(reduced.matrix[:50, None] - reduced.matrix[None, :50], axis=-1)
    assert np.abs(original - projected).max() < 0.1
    assert np.var(reduced.matrix, axis=0)[0] > np.var(reduced.matrix, axis=0)[2]  # ordered by variance
    assert np.array_equal(reduce_dim(vectors, 3).matrix, reduced.matrix)  # deterministic, signs included
    with pytest.raises(ValueError, match="cannot reduce"):
        reduce_dim(vectors, 11)


# -- the shared vectors set and checkpoints linked to it (core.data.vectors, core.checkpoints.checkpoint) ----------


def _linked_model(words, dim=8, unit_norm=False):
    """A frozen-embedding NBoW whose rows for the set's words are the set's (float16) rows."""
    import torch

    from core.checkpoints.checkpoint import shared_rows
    from core.models.nbow import NBoW, NBoWConfig

    rng = np.random.default_rng(0)
    vectors = Vectors(words, rng.normal(size=(len(words), dim)).astype(np.float16).astype(np.float32))
    vocab = Vocab.build([["good", "film", "zzrare"], ["bad", "film"]])  # zzrare: not in the set
    model = NBoW(NBoWConfig(vocab_size=len(vocab), num_classes=2, embed_dim=dim, hidden=4, freeze_embeddings=True))
    index, rows = vectors.index(), shared_rows(vectors, unit_norm)
    with torch.no_grad():
        for i, w in enumerate(vocab.itos):
            if w in index:
                model.embedding.weight[i] = rows[index[w]]
    model.meta = {"task": "sst2", "lang": "en", "labels": ["negative", "positive"]}
    return model.eval(), vocab, vectors


def test_shared_vectors_shard_within_the_limit_and_load_once(tmp_path):
    from core.data.vectors import load_shared_vectors, save_shared_vectors

    words = [f"w{i}" for i in range(50)]
    vectors = Vectors(words, np.random.default_rng(1).normal(size=(50, 16)).astype(np.float32))
    digest = save_shared_vectors(vectors, tmp_path / "en", max_shard_bytes=4096 + 20 * 16 * 2)
    shards = sorted((tmp_path / "en").glob("vectors-*.safetensors"))
    assert len(shards) == 3 and all(p.stat().st_size <= 4096 + 20 * 16 * 2 for p in shards)
    loaded = load_shared_vectors(tmp_path / "en", digest)
    assert loaded.words == words and np.allclose(loaded.matrix, vectors.matrix, atol=2e-3)
    assert load_shared_vectors(tmp_path / "en", digest) is loaded  # one copy per process
    with pytest.raises(ValueError, match="not the ones"):
        load_shared_vectors(tmp_path / "en", "0" * 64)
    shards[1].write_bytes(shards[1].read_bytes()[:-2] + b"\0\0")
    from core.data.vectors import _load_shared

    _load_shared.cache_clear()
    with pytest.raises(ValueError, match="does not match its sha256"):
        load_shared_vectors(tmp_path / "en", digest)


@pytest.mark.parametrize("unit_norm", [False, True])
def test_a_linked_checkpoint_reads_every_word_of_the_set_and_predicts_as_before(tmp_path, unit_norm):
    import torch
    from safetensors import safe_open

    from core.checkpoints.checkpoint import OWN_ROWS, CheckpointError, load_checkpoint, save_checkpoint
    from core.data.vectors import save_shared_vectors

    model, vocab, vectors = _linked_model(["film", "good", "bad", "superb", "dreadful"], unit_norm=unit_norm)
    model.config.unit_norm_vectors = unit_norm  # NBoW has no such field; the link records what it reads
    digest = save_shared_vectors(vectors, tmp_path / "vectors" / "en", max_shard_bytes=1 << 20)
    folder = save_checkpoint(
        tmp_path / "sst2" / "nbow", model, vocab, dict(model.meta), shared_vectors=("en", digest, vectors)
    )
    with safe_open(str(folder / "model.safetensors"), framework="pt") as f:
        assert "embedding.weight" not in f.keys()
        assert f.get_slice(OWN_ROWS).get_shape() == [3, 8]  # <pad>, <unk>, zzrare
    ckpt = load_checkpoint(folder)
    assert ckpt.vocab.itos == vocab.itos + ["superb", "dreadful"]  # training words keep their ids
    ids = torch.tensor([vocab.encode(["good", "film", "zzrare"])])
    with torch.no_grad():
        before = model(ids, torch.tensor([3])).logits
        after = ckpt.model(ids, torch.tensor([3])).logits
        assert torch.allclose(before, after, atol=1e-6)
        superb = ckpt.model.embedding.weight[ckpt.vocab.stoi["superb"]]
    expected = torch.from_numpy(vectors.matrix[3])
    assert torch.allclose(superb, expected / expected.norm() if unit_norm else expected, atol=1e-6)
    # a set that is not the one the checkpoint was saved with is refused, by name
    other = Vectors(vectors.words, vectors.matrix + 1)
    save_shared_vectors(other, tmp_path / "vectors" / "en", max_shard_bytes=1 << 20)
    with pytest.raises(CheckpointError, match="not the ones the checkpoint was built with"):
        load_checkpoint(folder)
