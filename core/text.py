"""Tokenization: raw text -> tokens in the conventions our models were trained on.

English goes through spaCy's blank English tokenizer, then each token is normalized to the Stanford
Sentiment Treebank's conventions (lower case, ``n't`` split off, ``(``/``)`` brackets, ````/``''``
quotes, hyphenated words kept whole), so that a sentence a user types maps onto the SST vocabulary.
Chinese goes through jieba. Every token keeps its character span in the raw text, which the front
end uses to highlight words.
"""

import logging
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

MAX_CHARS = 5000  # longer input is truncated (with a notice from the caller); models see <= this


@dataclass(frozen=True)
class Token:
    text: str  # normalized form, the vocabulary key
    start: int  # character offsets of the raw surface form in the input text
    end: int


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df]")
_LATIN = re.compile(r"[A-Za-z]")


def detect_language(text: str) -> str:
    """'zh' when CJK ideographs make up at least a third of the letters, else 'en'."""
    cjk = len(_CJK.findall(text))
    latin_words = len(re.findall(r"[A-Za-z]+", text))
    if cjk == 0:
        return "en"
    # a Chinese character carries about a word; compare characters with English words
    return "zh" if cjk >= latin_words else "en"


# -- English ----------------------------------------------------------------------------------------

# SST (PTB) writes brackets as -LRB-/-RRB-; the stsa files (and our vocabulary) use ( ) after un-escaping.
_PTB_ESCAPES = {"-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]", "-lcb-": "{", "-rcb-": "}"}
_QUOTES = {"\u201c": "``", "\u201d": "''", "\u2018": "`", "\u2019": "'", "\u00ab": "``", "\u00bb": "''"}
_FULL_WIDTH = re.compile("[\uff01-\uff5e]")
_DASHES = {"\u2014": "--", "\u2013": "--"}


def normalize_sst_token(token: str) -> str:
    """Map a treebank leaf (or a raw token) to the project's canonical SST form."""
    t = token.lower()
    t = _PTB_ESCAPES.get(t, t)
    return t.replace("\\/", "/").replace("\\*", "*")


@lru_cache(maxsize=1)
def english_tokenizer():
    """spaCy's blank English tokenizer with SST's infix rules, built once. Its raw tokens still need
    `normalize_english_token`; `tokenize_english` does both (batch tools call `.pipe` on it directly)."""
    import spacy

    nlp = spacy.blank("en")
    # SST keeps hyphenated compounds ("well-made", "coming-of-age") and slashes ("1/2") whole:
    # drop spaCy's infix rules that split on hyphens and slashes between letters/digits.
    infixes = [p for p in nlp.Defaults.infixes if "-" not in p and "/" not in p]
    from spacy.util import compile_infix_regex

    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    return nlp.tokenizer


def normalize_english_token(t: str) -> str:
    """One raw English token in SST's form: full-width letters, curly quotes and dashes mapped to the
    treebank's ASCII conventions, then `normalize_sst_token`. (Straight double quotes alternate between
    `` and '' by position, which only `tokenize_english` can tell.)"""
    if _FULL_WIDTH.search(t):  # full-width "ｇｏｏｄ" -> "good" (NFKC, only there: it would also split "´")
        t = unicodedata.normalize("NFKC", t)
    t = "".join(_QUOTES.get(c, c) for c in t)
    t = _DASHES.get(t, t)
    if t.lower() in {"n’t", "n‘t"}:
        t = "n't"
    return normalize_sst_token(t)


def tokenize_english(text: str) -> list[Token]:
    doc = english_tokenizer()(text)
    tokens: list[Token] = []
    quote_open = False
    for tok in doc:
        if tok.is_space:
            continue
        start, end = tok.idx, tok.idx + len(tok.text)
        if tok.text == '"':  # straight double quotes alternate open/close, as PTB writes them
            quote_open = not quote_open
            norm = "``" if quote_open else "''"
        else:
            norm = normalize_english_token(tok.text)
        tokens.append(Token(norm, start, end))
    return tokens


# -- Chinese ----------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def to_simplified(text: str) -> str:
    """Traditional -> simplified characters, one character for one, so offsets stay valid
    (our Chinese training text is simplified; jieba's dictionary is too)."""
    import zhconv

    converted = zhconv.convert(text, "zh-cn")
    if len(converted) == len(text):
        return converted
    return "".join(c if len(c) == 1 else o for o, c in ((o, zhconv.convert(o, "zh-cn")) for o in text))


def tokenize_chinese(text: str) -> list[Token]:
    # NFKC folds full-width Latin letters and digits to ASCII without moving offsets (1:1 for them).
    tokens = []
    for word, start, end in _jieba().tokenize(to_simplified(text)):
        norm = unicodedata.normalize("NFKC", word).strip().lower()
        if norm:
            tokens.append(Token(norm, start, end))
    return tokens


def tokenize(text: str, lang: str | None = None) -> list[Token]:
    """Tokens of `text` in language `lang` ('en', 'zh', or None to detect)."""
    lang = lang or detect_language(text)
    if lang == "en":
        return tokenize_english(text)
    if lang == "zh":
        return tokenize_chinese(text)
    raise ValueError(f"unknown language {lang!r}; expected 'en' or 'zh'")


def words(text: str, lang: str | None = None) -> list[str]:
    return [t.text for t in tokenize(text, lang)]
