"""Chinese tasks, tokenized with jieba (see core.text).

zh_sentiment: online_shopping_10_cats (SophonPlus/ChineseNlpCorpus), binary, a fixed seeded 80/10/10
split; ChnSentiCorp dev (LUGE/PaddleNLP release) is a second test set. Most ChnSentiCorp texts also
occur in online_shopping_10_cats, so they are removed from our train split.
zh_news: THUCNews titles, 10 classes (649453932/Chinese-Text-Classification-Pytorch); only a partial
train split (33,590 titles) is available here, and titles that also occur in dev/test are removed.
"""

import csv
import io
import random
import zipfile
from pathlib import Path

from core.data.base import DataError, Example, read_lines, require_file
from core.text import tokenize_chinese

SHOPPING_SOURCE = "https://github.com/SophonPlus/ChineseNlpCorpus (online_shopping_10_cats.zip)"
CHNSENTI_SOURCE = "https://www.luge.ai/ (ChnSentiCorp; dev.tsv)"
THUC_SOURCE = "https://github.com/649453932/Chinese-Text-Classification-Pytorch (THUCNews/data)"
SENTIMENT_LABELS = ["negative", "positive"]
SPLIT_SEED = 13
MAX_CHARS = 400  # reviews are truncated to their first 400 characters (a few run to thousands)


def _example(text: str, label: int) -> Example | None:
    words = tuple(t.text for t in tokenize_chinese(text.strip()[:MAX_CHARS]))
    return Example(words, label) if words else None


def load_zh_sentiment(root: Path):
    path = require_file(root, "chinese_sentiment/online_shopping_10_cats.zip", SHOPPING_SOURCE)
    try:
        with zipfile.ZipFile(path) as archive:
            raw = archive.read("online_shopping_10_cats.csv").decode("utf-8-sig")
    except (zipfile.BadZipFile, KeyError) as err:
        raise DataError(f"{path}: not the expected archive ({err}); get it again from {SHOPPING_SOURCE}") from None
    rows = list(csv.DictReader(io.StringIO(raw)))
    examples = []
    for number, row in enumerate(rows, 2):
        if row.get("label") not in ("0", "1") or row.get("review") is None:
            raise DataError(f"{path}:online_shopping_10_cats.csv:{number}: expected cat,label(0/1),review")
        example = _example(row["review"].lstrip("\ufeff"), int(row["label"]))
        if example:
            examples.append(example)
    order = list(range(len(examples)))
    random.Random(SPLIT_SEED).shuffle(order)
    n = len(order) // 10
    test = [examples[i] for i in order[:n]]
    dev = [examples[i] for i in order[n : 2 * n]]
    train = [examples[i] for i in order[2 * n :]]

    chnsenti = []
    senti_path = require_file(root, "chinese_sentiment/ChnSentiCorp/dev.tsv", CHNSENTI_SOURCE)
    for number, line in enumerate(read_lines(senti_path), 1):
        text, _, label = line.rpartition("\t")
        if label not in SENTIMENT_LABELS:
            raise DataError(f"{senti_path}:{number}: expected '<text>\\t<positive|negative>'")
        example = _example(text, SENTIMENT_LABELS.index(label))
        if example:
            chnsenti.append(example)
    # ChnSentiCorp shares most of its reviews with online_shopping_10_cats: drop them from train so
    # that it stays an unseen test set (measured: 911 of its 1,200 texts were in our train split)
    held_out = {e.words for e in chnsenti}
    train = [e for e in train if e.words not in held_out]
    return train, dev, test, {"chnsenticorp_dev": chnsenti}


def _read_thuc(path: Path) -> list[tuple[str, int]]:
    rows = []
    for number, line in enumerate(read_lines(path), 1):
        title, _, label = line.rpartition("\t")
        if not label.isdigit() or not 0 <= int(label) < 10:
            raise DataError(f"{path}:{number}: expected '<title>\\t<label 0-9>'")
        rows.append((title, int(label)))
    return rows


def load_zh_news(root: Path):
    labels = read_lines(require_file(root, "thucnews/class.txt", THUC_SOURCE))
    train = _read_thuc(require_file(root, "thucnews/partial_train/train.txt", THUC_SOURCE))
    dev = _read_thuc(require_file(root, "thucnews/dev.txt", THUC_SOURCE))
    test = _read_thuc(require_file(root, "thucnews/test.txt", THUC_SOURCE))
    held_out = {title for title, _ in dev + test}
    train = [row for row in train if row[0] not in held_out]
    splits = [[e for e in (_example(*row) for row in rows) if e] for rows in (train, dev, test)]
    return (*splits, [label.strip() for label in labels])
