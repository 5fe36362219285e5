"""tools.vectors: the tiny-corpus path end to end (toy sources -> corpus -> gensim -> our format ->
core.data.vectors.load_vectors), and its pieces checked against their slow, obvious versions."""

import csv
import gzip
import json
import random

import numpy as np

from core.data.vectors import load_vectors
from core.text import tokenize_english
from tools import vectors as word2vec


def test_english_words_many_equals_tokenize_english():
    texts = [
        'I didn\'t like it.<br /> "Boring", he said -- and "slow".',
        "A well-made, coming-of-age film (really) that\u2019s \u201cfun\u201d \u2014 8 1/2 out of 10!",
        "It's -LRB- not -RRB- bad ; does n't   matter\u2026 caf\u00e9 na\u00efve <3",
        "",
    ]
    assert word2vec.english_words_many(texts) == [[t.text for t in tokenize_english(x)] for x in texts]


def test_clean_english_strips_html_tags_only():
    text = "Great.<br /><br />Really <i>great</i><BR>acting <3 <sighs> a < b"
    expected = ["Great.", "Really", "great", "acting", "<3", "<sighs>", "a", "<", "b"]
    assert word2vec.clean_english(text).split() == expected


def test_held_out_index_equals_substring_search():
    rng = random.Random(0)

    def noisy(key: str) -> str:  # the same letters with case, spaces and punctuation sprinkled in
        return "".join(c.upper() if rng.random() < 0.2 else c + rng.choice(["", "", " ", ", ", "-"]) for c in key)

    # a two-letter alphabet makes near-misses and partial q-gram hits common
    held = ["".join(rng.choice("ab") for _ in range(rng.randint(30, 70))) for _ in range(40)]
    index = word2vec.HeldOut("en", [noisy(h) for h in held])
    checked = [h for h in held if len(h) >= word2vec.MIN_HELD_OUT_CHARS]
    for _ in range(300):
        line = "".join(rng.choice("ab") for _ in range(rng.randint(0, 200)))
        if rng.random() < 0.5:
            at = rng.randint(0, len(line))
            line = line[:at] + rng.choice(held) + line[at:]
        expected = any(h in line for h in checked)
        assert index.contains(noisy(line)) == expected


def test_held_out_chinese_is_whole_text_identity():
    index = word2vec.HeldOut("zh", ["很好，下次还来"])
    assert index.contains("  很好，下次还来\n")
    assert index.contains("很好，下次還來")  # traditional script, as tokenize_chinese reads it: simplified
    assert not index.contains("很好，下次还来。服务也不错")


# -- the tiny path end to end --------------------------------------------------------------------------

DEV_SENTENCE = "this held out sentence from the dev split must never reach the vectors"


def _tree(words: list[str]) -> str:
    return f"(2 {words[0]})" if len(words) == 1 else f"(2 (2 {words[0]}) {_tree(words[1:])})"


def _toy_english(root):
    """Reviews where good/great share contexts (loved, enjoyed) and bad/awful share others (hated, disliked)."""
    rng = random.Random(1)
    lines = []
    for _ in range(1200):
        adjectives, verbs = rng.choice(
            [(["good", "great"], ["loved", "enjoyed"]), (["bad", "awful"], ["hated", "disliked"])]
        )
        noun = rng.choice(["film", "movie", "plot", "cast", "script"])
        lines.append(
            f"The {noun} was {rng.choice(adjectives)} and I {rng.choice(verbs)} it.<br /><br />"
            f"Truly {rng.choice(adjectives)} {rng.choice(['acting', 'music', 'ending'])}!"
        )
    lines.insert(500, "This held-out sentence from the dev split must never reach the vectors! " + lines[500])
    folder = root / "unlabeled_en" / "toy"
    folder.mkdir(parents=True)
    for part in range(2):
        with gzip.open(folder / f"reviews_{part}.txt.gz", "wt", encoding="utf-8") as f:
            f.write("\n".join(lines[part * 600 : (part + 1) * 600]) + "\n")
    trees = root / "sst" / "trees"
    trees.mkdir(parents=True)
    for split, sentence in (("train", "a good movie"), ("dev", DEV_SENTENCE), ("test", "an awful movie")):
        (trees / f"{split}.txt").write_text(_tree(sentence.split()) + "\n", encoding="utf-8")


def _run(tmp_path, lang: str, workers: int = 1) -> tuple[dict, object]:
    out = tmp_path / "vectors" / lang
    argv = [
        "--lang",
        lang,
        "--tiny",
        "--data-dir",
        str(tmp_path / "data"),
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path / "corpus"),
        # toy sizes: one worker (deterministic; it tokenizes in this process), no down-sampling (every toy word is
        # "frequent"), all lines
        "--workers",
        str(workers),
        "--dim",
        "20",
        "--epochs",
        "10",
        "--sample",
        "0",
        "--max-lines",
        "0",
    ]
    assert word2vec.main(argv) == 0
    stats = json.loads(out.with_suffix(".stats.json").read_text(encoding="utf-8"))
    return stats, load_vectors(out)


def test_tiny_english_run(tmp_path):
    _toy_english(tmp_path / "data")
    stats, vectors = _run(tmp_path, "en")

    assert vectors.matrix.shape == (len(vectors.words), 20) and vectors.matrix.dtype == np.float32
    assert stats["vectors"] == {"rows": len(vectors.words), "dim": 20}
    assert sum(s["held_out"] for s in stats["corpus"]["sources"]) == 1  # the line with the SST dev sentence
    assert stats["corpus"]["held_out"]["texts_per_task"]["sst5"] == 2  # dev + test
    corpus_lines = open(stats["corpus"]["file"], encoding="utf-8").read().splitlines()
    assert stats["corpus"]["tokens"] == sum(len(line.split()) for line in corpus_lines)
    assert "br" not in vectors.words and "dev" not in vectors.words  # markup stripped; "dev" only in the dropped line
    assert word2vec.neighbours(vectors, "good", 1)[0][0] == "great"
    assert word2vec.neighbours(vectors, "bad", 1)[0][0] == "awful"

    again, same = _run(tmp_path, "en")  # a rerun reuses the tokenized corpus; one worker + seed: same vectors
    assert again["corpus"]["reused"] and not stats["corpus"]["reused"]
    assert same.words == vectors.words
    np.testing.assert_array_equal(same.matrix, vectors.matrix)


def test_tiny_chinese_run(tmp_path):
    rng = random.Random(2)
    folder = tmp_path / "data" / "chinese_sentiment"
    folder.mkdir(parents=True)
    reviews = [
        rng.choice(["味道", "米饭", "汤"])
        + rng.choice(["很好", "不错", "很差"])
        + "，"
        + rng.choice(["送餐很快", "送餐太慢", "下次还点"])
        for _ in range(300)
    ]
    with open(folder / "waimai_10k.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["label", "review"])
        writer.writerows([rng.randint(0, 1), review] for review in reviews)
    # the other Chinese sources are absent: skipped with a warning; two workers: the tokenizers' spawned processes
    stats, vectors = _run(tmp_path, "zh", workers=2)
    assert vectors.matrix.shape == (len(vectors.words), 20)
    assert {"味道", "送餐"} <= set(vectors.words)
    assert [s["name"] for s in stats["corpus"]["sources"]] == ["chinese_sentiment/waimai_10k.csv"]
    assert stats["corpus"]["sources"][0]["duplicate"] == len(reviews) - len(set(reviews))


def test_max_tokens_stops_reading_sources(tmp_path, monkeypatch):
    def no_process(method):
        raise AssertionError(f"one worker started a {method} process")

    monkeypatch.setattr(word2vec.multiprocessing, "get_context", no_process)  # one worker tokenizes in this process
    sources = [
        word2vec.Source(f"toy{i}", [], lambda i=i: [f"review {i} number {n} ." for n in range(300)]) for i in range(3)
    ]
    cfg = word2vec.Word2VecConfig(workers=1, max_tokens=2000)
    corpus = word2vec.build_corpus("en", sources, word2vec.HeldOut("en", []), cfg, tmp_path)
    assert corpus.capped and [s.name for s in corpus.sources] == ["toy0", "toy1"]
    assert 2000 <= corpus.tokens < 2000 + word2vec.CHUNK_LINES * 5  # stops within one chunk past the cap
    assert corpus.tokens == sum(len(line.split()) for line in corpus.path.read_text(encoding="utf-8").splitlines())


def test_from_shared_writes_the_sets_rows_and_a_missing_set_is_one_line(tmp_path, caplog):
    """--from-shared: the shipped set back in our format, the very float16 rows as float32, so a run trained on
    it links to that set (tools.release.bundle.link_problem compares these rows)."""
    from core.data.vectors import Vectors, load_shared_vectors, save_shared_vectors

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    save_shared_vectors(Vectors(words, rng.normal(size=(30, 8)).astype(np.float32)), tmp_path / "set", 4096 + 160)
    shared = load_shared_vectors(tmp_path / "set")
    assert word2vec.main(["--lang", "en", "--from-shared", str(tmp_path / "set"), "--out", str(tmp_path / "en")]) == 0
    written = load_vectors(tmp_path / "en.safetensors")
    assert written.words == words and np.array_equal(written.matrix, shared.matrix)
    assert json.loads((tmp_path / "en.stats.json").read_text())["from_shared"] == str(tmp_path / "set")
    assert word2vec.main(["--lang", "en", "--from-shared", str(tmp_path / "none"), "--out", str(tmp_path / "x")]) == 2
    assert "none" in caplog.text and not (tmp_path / "x.safetensors").exists()


def test_from_wink_writes_the_packages_glove_rows_and_a_bad_file_is_one_line(tmp_path, caplog):
    """--from-wink: the npm package's JSON (rows carry wink's norm and index after the d values) in our format,
    rows in the file's word order, the method recorded for the probe's provenance; a file of another shape is
    refused by name and writes nothing."""
    rows = {"the": [0.5, -1.0, 2.0], "film": [1.5, 0.25, -0.5]}
    wink = {
        "precision": 8,
        "l2NormIndex": 3,
        "wordIndex": 4,
        "size": 2,
        "dimensions": 3,
        "words": ["the", "film"],
        "vectors": {w: v + [float(np.linalg.norm(v)), i] for i, (w, v) in enumerate(rows.items())},
        "unkVector": [0.0] * 5,
    }
    (tmp_path / "wink.json").write_text(json.dumps(wink))
    assert (
        word2vec.main(["--lang", "en", "--from-wink", str(tmp_path / "wink.json"), "--out", str(tmp_path / "g")]) == 0
    )
    written = load_vectors(tmp_path / "g.safetensors")
    assert written.words == ["the", "film"] and np.array_equal(
        written.matrix, np.array(list(rows.values()), np.float32)
    )
    assert json.loads((tmp_path / "g.stats.json").read_text())["settings"]["method"] == word2vec.WINK_METHOD
    (tmp_path / "bad.json").write_text(json.dumps({"dimensions": 3, "words": ["the"], "vectors": {}}))
    assert word2vec.main(["--lang", "en", "--from-wink", str(tmp_path / "bad.json"), "--out", str(tmp_path / "x")]) == 2
    assert "bad.json" in caplog.text and "not a wink embeddings file" in caplog.text
    assert not (tmp_path / "x.safetensors").exists()
