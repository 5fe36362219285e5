"""Vocabulary: word <-> id, built from a training split and saved beside every checkpoint."""

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

PAD, UNK = "<pad>", "<unk>"


class Vocab:
    pad_id = 0
    unk_id = 1

    def __init__(self, itos: list[str]):
        if itos[:2] != [PAD, UNK]:
            raise ValueError(f"a vocabulary starts with {PAD!r}, {UNK!r}; got {itos[:2]!r}")
        if len(set(itos)) != len(itos):
            raise ValueError("a vocabulary must not repeat a word")
        self.itos = list(itos)
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def build(cls, sentences: Iterable[Iterable[str]], min_freq: int = 1, extra: Iterable[str] = ()) -> "Vocab":
        """Words of the training sentences (by frequency, then alphabetically), then `extra` words."""
        counts = Counter(w for s in sentences for w in s)
        words = sorted((w for w, c in counts.items() if c >= min_freq), key=lambda w: (-counts[w], w))
        known = set(words)
        words += [w for w in dict.fromkeys(extra) if w not in known]  # in order, once each
        return cls([PAD, UNK] + [w for w in words if w not in (PAD, UNK)])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, word: str) -> bool:
        return word in self.stoi

    def encode(self, words: Iterable[str]) -> list[int]:
        return [self.stoi.get(w, self.unk_id) for w in words]

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.itos, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "Vocab":
        itos = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(itos, list) or not all(isinstance(w, str) for w in itos):
            raise ValueError(f"{path}: a vocabulary file is a JSON list of strings")
        return cls(itos)
