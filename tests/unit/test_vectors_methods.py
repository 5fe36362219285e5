"""tools.vectors --method fasttext|glove|wordllama on the toy corpus of test_word2vec (seconds, tiny
dimensions), GloVe's co-occurrence counts against a brute-force count, and tools.research.vectors_probe end to end
on tiny SST and Chinese data."""

import json
from collections import defaultdict

import numpy as np
from lab_fixture import NEGATIVE, NEGATIVE_ZH, NEUTRAL, NEUTRAL_ZH, POSITIVE, POSITIVE_ZH, write_zh_data
from test_word2vec import _toy_english

from core.data.vectors import Vectors, load_vectors, save_vectors
from tools import vectors as tv
from tools.research import vectors_probe

UNSEEN = "greatness"  # in an SST training sentence, never in the corpus: only subword methods give it a vector


def _data(tmp_path):
    _toy_english(tmp_path / "data")
    train = tmp_path / "data" / "sst" / "trees" / "train.txt"
    train.write_text(train.read_text(encoding="utf-8") + f"(2 (2 pure) (2 {UNSEEN}))\n", encoding="utf-8")


def _run(tmp_path, method: str, *extra: str) -> tuple[dict, Vectors]:
    out = tmp_path / "vectors" / method
    argv = [
        "--lang",
        "en",
        "--tiny",
        "--method",
        method,
        "--data-dir",
        str(tmp_path / "data"),
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path / "corpus"),
        "--workers",
        "1",
        "--dim",
        "20",
        "--epochs",
        "10",
        "--sample",
        "0",
        "--max-lines",
        "0",
        *extra,
    ]
    assert tv.main(argv) == 0
    return json.loads(out.with_suffix(".stats.json").read_text(encoding="utf-8")), load_vectors(out)


def test_fasttext_gives_unseen_task_words_a_subword_vector(tmp_path):
    _data(tmp_path)
    stats, vectors = _run(tmp_path, "fasttext", "--bucket", "5000", "--min-n", "3", "--max-n", "5")
    assert stats["settings"]["method"] == "fasttext" and stats["settings"]["n-grams"] == "3..5 chars, 5000 buckets"
    assert vectors.matrix.shape == (len(vectors.words), 20)
    corpus_words = set(open(stats["corpus"]["file"], encoding="utf-8").read().split())
    assert UNSEEN not in corpus_words and UNSEEN in vectors.words
    added = vectors.words[stats["training"]["vocab"] :]  # the corpus vocabulary first, then the added words
    assert stats["training"]["words_from_subwords"] == len(added) > 0 and UNSEEN in added
    assert not set(added) & set(vectors.words[: stats["training"]["vocab"]])
    assert np.abs(vectors.matrix[vectors.words.index(UNSEEN)]).sum() > 0
    assert stats["coverage"]["sst5"]["train"]["types_covered"] == 1.0
    assert tv.neighbours(vectors, "bad", 1)[0][0] == "awful"


def test_cooccurrences_equal_a_brute_force_count(tmp_path):
    lines = ["a b c a rare b", "c c a", "b", "rare a b c b a"]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = {"a": 0, "b": 1, "c": 2}  # "rare" is out of vocabulary but keeps its position
    expected = defaultdict(float)
    for line in lines:
        words = line.split()
        for i in range(len(words)):
            for j in range(i + 1, min(len(words), i + 3)):
                if words[i] in index and words[j] in index:
                    a, b = sorted((index[words[i]], index[words[j]]))
                    expected[a, b] += 1 / (j - i)
    matrix = tv.cooccurrences(tv.Corpus(path), index, window=2, chunk_tokens=4)  # several chunks
    got = {(int(r), int(c)): float(v) for r, c, v in zip(matrix.row, matrix.col, matrix.data)}
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert abs(got[key] - value) < 1e-12


def test_glove_tiny_run(tmp_path):
    _data(tmp_path)
    stats, vectors = _run(tmp_path, "glove", "--window", "5", "--x-max", "10", "--epochs", "300")
    assert stats["software"]["bicleaner-ai-glove"] == "0.2.1"
    assert vectors.matrix.shape == (stats["training"]["vocab"], 20) and np.isfinite(vectors.matrix).all()
    assert UNSEEN not in vectors.words  # no subwords: a word the corpus lacks has no vector
    assert stats["training"]["cooccurring_pairs"] > 0
    assert tv.neighbours(vectors, "good", 1)[0][0] == "great"
    assert tv.neighbours(vectors, "bad", 1)[0][0] == "awful"


def test_wordllama_vectors_are_piece_means(tmp_path):
    _data(tmp_path)
    stats, vectors = _run(tmp_path, "wordllama")
    table, tokenizer = tv.wordllama_table()
    assert table.shape == (32000, 256) and vectors.dim == 256
    assert stats["training"]["task_words_added"] > 0 and UNSEEN in vectors.words
    for word in ["good", UNSEEN, "disliked"]:
        pieces = tokenizer.encode(word, add_special_tokens=False).ids
        assert len(pieces) >= 1
        np.testing.assert_allclose(vectors.matrix[vectors.words.index(word)], table[pieces].mean(0), rtol=1e-6)
    assert tv.neighbours(vectors, "good", 1)[0][0] == "great"  # the distilled table already knows this


def test_probe_tiny(tiny_data, tmp_path):
    rng = np.random.default_rng(0)
    words = [*POSITIVE, *NEGATIVE, *NEUTRAL, "not"]  # every word of the tiny SST data
    save_vectors(Vectors(words, rng.normal(size=(len(words), 8)).astype(np.float32)), tmp_path / "v" / "random8")
    save_vectors(
        Vectors(words[:4], rng.normal(size=(4, 6)).astype(np.float32)),
        tmp_path / "v" / "half6",
        {"settings": {"method": "fasttext"}, "seconds": {"train": 60.0, "train_cpu": 120.0}},
    )
    doc = tmp_path / "vectors.md"
    doc.write_text("# Word vectors\n\nBefore.\n", encoding="utf-8")
    argv = [
        "--vectors",
        f"random8={tmp_path / 'v' / 'random8'}",
        "--vectors",
        f"half6={tmp_path / 'v' / 'half6'}",
        "--runs",
        str(tmp_path / "runs"),
        "--json",
        str(tmp_path / "probe.json"),
        "--doc",
        str(doc),
        "--data-dir",
        str(tiny_data),
        "--max-train",
        "60",
    ]
    assert vectors_probe.main(argv) == 0
    report = json.loads((tmp_path / "probe.json").read_text(encoding="utf-8"))
    by_name = {s["name"]: s for s in report["sets"]}
    assert by_name["half6"]["method"] == "fasttext" and by_name["random8"]["method"] == "file"
    assert by_name["half6"]["dim"] == 6 and by_name["random8"]["coverage"]["train"]["types_covered"] == 1.0
    devs = {name: s["results"]["nbow"]["dev"] for name, s in by_name.items()}
    assert report["best_by_dev"]["nbow"] == max(devs, key=devs.get)
    metrics = json.loads((tmp_path / "runs" / "half6" / "nbow-s1" / "metrics.json").read_text(encoding="utf-8"))
    assert (
        metrics["train_config"]["epochs"] == vectors_probe.BUDGETS["nbow"][0]
        and metrics["model_config"]["embed_dim"] == 6
    )
    assert by_name["half6"]["results"]["nbow"]["test"] == metrics["test"]["accuracy"]

    assert vectors_probe.main(argv) == 0  # the finished runs are reused; the section is replaced, not repeated
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Word vectors\n\nBefore.\n") and text.count(vectors_probe.markers("sst5")[0]) == 1
    assert "| `half6` | fasttext | 6 | 4 |" in text and "1.0 min (2.0 CPU-min)" in text
    assert json.loads((tmp_path / "probe.json").read_text(encoding="utf-8"))["sets"] == report["sets"]
    assert vectors_probe.main([*argv[:2], "--models", "nbow,lstm"]) == 2


def test_probe_chinese_has_its_own_section_and_runs(tiny_data, tmp_path):
    """--task zh_sentiment: the Chinese probe writes its own json and section beside the SST-5 one."""
    data = write_zh_data(tmp_path / "data")
    words = [*POSITIVE_ZH, *NEGATIVE_ZH, *NEUTRAL_ZH]
    save_vectors(
        Vectors(words, np.random.default_rng(0).normal(size=(len(words), 8)).astype(np.float32)), tmp_path / "v" / "zh8"
    )
    doc = tmp_path / "vectors.md"
    sst_start, sst_end = vectors_probe.markers("sst5")
    doc.write_text(f"# Word vectors\n\n{sst_start}\nSST-5 table\n{sst_end}\n", encoding="utf-8")
    argv = [
        "--task",
        "zh_sentiment",
        "--vectors",
        f"zh8={tmp_path / 'v' / 'zh8'}",
        "--runs",
        str(tmp_path / "runs"),
        "--json",
        str(tmp_path / "zh.json"),
        "--doc",
        str(doc),
        "--data-dir",
        str(data),
        "--max-train",
        "60",
    ]
    assert vectors_probe.main(argv) == 0
    report = json.loads((tmp_path / "zh.json").read_text(encoding="utf-8"))
    assert report["probe"]["task"] == "zh_sentiment" and report["probe"]["phrases"] is False
    (zh8,) = report["sets"]
    assert zh8["coverage"]["train"]["types_covered"] > 0.5 and 0 <= zh8["results"]["nbow"]["dev"] <= 1
    metrics = json.loads(
        (tmp_path / "runs" / "zh_sentiment" / "zh8" / "nbow-s1" / "metrics.json").read_text(encoding="utf-8")
    )
    assert metrics["task"] == "zh_sentiment" and metrics["vectors"]["found"] > 0
    text = doc.read_text(encoding="utf-8")
    zh_start, zh_end = vectors_probe.markers("zh_sentiment")
    assert "SST-5 table" in text and text.count(zh_start) == 1 and text.count(zh_end) == 1
    assert "Probe: zh_sentiment, seed 1" in text and "| `zh8` | file | 8 |" in text
