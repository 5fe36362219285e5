"""The task registry: a task name -> a TaskData with tokenized train/dev/test splits.

Tokenized tasks are cached under `.cache/tasks/` (or `$LAB_CACHE_DIR/tasks/`), keyed by the options,
the data directory and the size and mtime of the task's data files, because jieba-segmenting 60k
Chinese reviews takes a while.
"""

import gzip
import hashlib
import json
import os
from pathlib import Path

from core.data.base import PROJECT_ROOT, Example, TaskData, data_dir
from core.data.chinese import SENTIMENT_LABELS, load_zh_news, load_zh_sentiment
from core.data.classic import CLASSIC, TREC_LABELS, load_classic, load_trec
from core.data.sst import BINARY_LABELS, FINE_LABELS, load_sst

CACHE_VERSION = 3  # bump when a reader or the tokenizer changes what it produces

# task -> (language, data folder, description)
TASKS = {
    "sst5": ("en", "sst", "SST fine-grained, 5 classes (sentences; --phrases adds all labelled phrases)"),
    "sst2": ("en", "sst", "SST binary (neutral dropped; --phrases adds all labelled phrases)"),
    "trec": ("en", "trec", "TREC question type, 6 coarse classes"),
    "mr": ("en", "mr", "MR movie-review polarity (seeded 10-fold split, fold 0 by default)"),
    "cr": ("en", "cr", "CR customer-review polarity (seeded 10-fold split)"),
    "subj": ("en", "subj", "SUBJ subjective vs objective (seeded 10-fold split)"),
    "mpqa": ("en", "mpqa", "MPQA opinion polarity of phrases (seeded 10-fold split)"),
    "zh_sentiment": ("zh", "chinese_sentiment", "online_shopping_10_cats binary sentiment (seeded 80/10/10)"),
    "zh_news": ("zh", "thucnews", "THUCNews titles, 10 classes"),
}


def _build(name: str, root: Path, phrases: bool, fold: int) -> TaskData:
    lang = TASKS[name][0]
    extra: dict[str, list[Example]] = {}
    if name in ("sst5", "sst2"):
        train, dev, test = load_sst(root, binary=name == "sst2", phrases=phrases)
        labels = FINE_LABELS if name == "sst5" else BINARY_LABELS
        note = "official SST splits" + (" + all labelled training phrases" if phrases else " (sentences only)")
    elif name == "trec":
        train, dev, test = load_trec(root)
        labels, note = TREC_LABELS, "official train/test; dev = seeded 10% of train"
    elif name in CLASSIC:
        train, dev, test, labels = load_classic(root, name, fold)
        note = f"seeded 10-fold split (seed 13), test = fold {fold}, dev = 10% of the rest"
    elif name == "zh_sentiment":
        train, dev, test, extra = load_zh_sentiment(root)
        labels, note = SENTIMENT_LABELS, "seeded 80/10/10 split (seed 13); extra test: ChnSentiCorp dev"
    elif name == "zh_news":
        train, dev, test, labels = load_zh_news(root)
        note = "partial THUCNews train minus titles in dev/test; official 10k dev and test"
    else:
        raise KeyError(name)
    return TaskData(name, lang, list(labels), train, dev, test, extra, note)


def cache_root() -> Path:
    """The library's cache (tokenized tasks here; tools keep theirs beside): $LAB_CACHE_DIR, else .cache/. Read by
    core itself, not passed down: the trainer and every CLI reach it through load_task."""
    return Path(os.environ.get("LAB_CACHE_DIR") or PROJECT_ROOT / ".cache")


def _cache_path(name: str, root: Path, phrases: bool, fold: int) -> Path:
    folder = root / TASKS[name][1]
    stats = sorted(
        (str(p.relative_to(root)), p.stat().st_size, int(p.stat().st_mtime)) for p in folder.rglob("*") if p.is_file()
    )
    key = json.dumps([CACHE_VERSION, name, phrases, fold, str(root.resolve()), stats])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_root() / "tasks" / f"{name}-{digest}.json.gz"


def _encode(task: TaskData) -> dict:
    def rows(examples):
        return [[list(e.words), e.label, int(e.is_phrase)] for e in examples]

    return {
        "name": task.name,
        "lang": task.lang,
        "labels": task.labels,
        "split_note": task.split_note,
        "train": rows(task.train),
        "dev": rows(task.dev),
        "test": rows(task.test),
        "extra_tests": {k: rows(v) for k, v in task.extra_tests.items()},
    }


def _decode(blob: dict) -> TaskData:
    def examples(rows):
        return [Example(tuple(words), label, bool(phrase)) for words, label, phrase in rows]

    return TaskData(
        blob["name"],
        blob["lang"],
        blob["labels"],
        examples(blob["train"]),
        examples(blob["dev"]),
        examples(blob["test"]),
        {k: examples(v) for k, v in blob["extra_tests"].items()},
        blob["split_note"],
    )


def load_task(
    name: str, data: str | os.PathLike | None = None, phrases: bool = False, fold: int = 0, use_cache: bool = True
) -> TaskData:
    """Load a task by name (see TASKS). `phrases` only applies to SST; `fold` to MR/CR/SUBJ/MPQA."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")
    root = data_dir(data)
    phrases = phrases and name in ("sst5", "sst2")
    cache = _cache_path(name, root, phrases, fold) if use_cache and (root / TASKS[name][1]).is_dir() else None
    if cache and cache.is_file():
        with gzip.open(cache, "rt", encoding="utf-8") as f:
            return _decode(json.load(f))
    task = _build(name, root, phrases, fold)
    if cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".tmp{os.getpid()}")
        with gzip.open(tmp, "wt", encoding="utf-8") as f:
            json.dump(_encode(task), f, ensure_ascii=False)
        os.replace(tmp, cache)
    return task
