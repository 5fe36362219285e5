from core.text import detect_language, normalize_sst_token, tokenize


def test_english_follows_sst_conventions():
    tokens = tokenize("It isn't \"Well-made\" (sort of) -- I can't say 1/2.")
    assert [t.text for t in tokens] == [
        "it",
        "is",
        "n't",
        "``",
        "well-made",
        "''",
        "(",
        "sort",
        "of",
        ")",
        "--",
        "i",
        "ca",
        "n't",
        "say",
        "1/2",
        ".",
    ]


def test_offsets_point_into_the_raw_text():
    text = "  The film’s “heart” isn’t there!"
    for token in tokenize(text):
        assert 0 <= token.start < token.end <= len(text)
        assert text[token.start : token.end].strip()
    assert [t.text for t in tokenize(text)][:3] == ["the", "film", "'s"]
    assert "n't" in [t.text for t in tokenize(text)]


def test_ptb_escapes_are_normalized():
    assert [normalize_sst_token(t) for t in ["-LRB-", "-RRB-", "1\\/2", "\\*", "Good"]] == [
        "(",
        ")",
        "1/2",
        "*",
        "good",
    ]


def test_chinese_uses_jieba_with_offsets():
    text = "这部电影不怎么好看，但是演员很棒"
    tokens = tokenize(text)
    assert [t.text for t in tokens][:4] == ["这部", "电影", "不怎么", "好看"]
    assert all(text[t.start : t.end] for t in tokens)


def test_language_detection():
    assert detect_language("a fine movie") == "en"
    assert detect_language("这部电影很好") == "zh"
    assert detect_language("这部 movie 很好看") == "zh"
    assert detect_language("") == "en"


def test_empty_and_odd_input_does_not_crash():
    assert tokenize("") == []
    assert tokenize("   \n\t ") == []
    assert [t.text for t in tokenize("🙂🙂")] != []


def test_traditional_chinese_is_read_as_simplified():
    text = "這部電影很好看"
    tokens = tokenize(text)
    assert "电影" in [t.text for t in tokens]
    assert "".join(text[t.start : t.end] for t in tokens) == text


def test_mixed_chinese_english():
    tokens = tokenize("这部movie很好看, really good")
    assert [t.text for t in tokens][:3] == ["这部", "movie", "很"]
