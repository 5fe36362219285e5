import numpy as np
import pytest

from core.vectors import Vectors, embedding_matrix, load_vectors, save_vectors
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
