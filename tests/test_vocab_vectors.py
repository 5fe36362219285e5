import numpy as np
import pytest

from core.vectors import Vectors, embedding_matrix, load_vectors, reduce_dim, save_vectors
from core.vocab import Vocab


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
