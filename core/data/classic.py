"""The classic English sentence sets in `<label> <tokenized text>` form (harvardnlp/sent-conv-torch).

TREC has an official train/test split; MR, CR, SUBJ and MPQA ship as one file and the papers used
10-fold cross-validation. We use a fixed, seeded split (see `split_folds`): by default fold 0 of 10
is the test set, and 10% of the rest (seeded) is dev. `fold=k` selects another fold for CV.
"""

import random
from pathlib import Path

from core.data.base import DataError, Example, read_lines, require_file
from core.text import normalize_sst_token

SOURCE = "https://github.com/harvardnlp/sent-conv-torch (data/)"
SPLIT_SEED = 13  # fixed: the folds must be the same for every model and every run
TREC_LABELS = ["description", "entity", "abbreviation", "human", "location", "number"]

CLASSIC = {
    # task: (file, class names, public source)
    "mr": (
        "mr/rt-polarity.all",
        ["negative", "positive"],
        "https://www.cs.cornell.edu/people/pabo/movie-review-data/ (rt-polaritydata)",
    ),
    "cr": (
        "cr/custrev.all",
        ["negative", "positive"],
        "https://www.cs.uic.edu/~liub/FBS/sentiment-analysis.html (Hu & Liu 2004)",
    ),
    "subj": (
        "subj/subj.all",
        ["subjective", "objective"],
        "https://www.cs.cornell.edu/people/pabo/movie-review-data/ (subjectivity v1.0)",
    ),
    "mpqa": (
        "mpqa/mpqa.all",
        ["negative", "positive"],
        "https://mpqa.cs.pitt.edu/ (opinion polarity, via " + SOURCE + ")",
    ),
}


def read_labelled(path: Path, num_classes: int) -> list[Example]:
    examples = []
    for number, line in enumerate(read_lines(path), 1):
        head, _, text = line.strip().partition(" ")
        if not head.isdigit() or not 0 <= int(head) < num_classes:
            raise DataError(f"{path}:{number}: expected '<label 0-{num_classes - 1}> <text>', got {line[:60]!r}")
        words = tuple(normalize_sst_token(w) for w in text.split())
        if words:
            examples.append(Example(words, int(head)))
    return examples


def split_folds(examples: list[Example], fold: int, folds: int = 10, dev_fraction: float = 0.1):
    """Seeded shuffle, test = fold `fold` of `folds`, dev = `dev_fraction` of the rest."""
    if not 0 <= fold < folds:
        raise ValueError(f"fold must be in 0..{folds - 1}, got {fold}")
    order = list(range(len(examples)))
    random.Random(SPLIT_SEED).shuffle(order)
    test_ids = set(order[fold::folds])
    rest = [i for i in order if i not in test_ids]
    n_dev = int(len(rest) * dev_fraction)
    dev = [examples[i] for i in rest[:n_dev]]
    train = [examples[i] for i in rest[n_dev:]]
    return train, dev, [examples[i] for i in sorted(test_ids)]


def load_classic(root: Path, task: str, fold: int = 0):
    relative, labels, source = CLASSIC[task]
    examples = read_labelled(require_file(root, relative, source), len(labels))
    return (*split_folds(examples, fold), labels)


def load_trec(root: Path):
    """TREC 6-class: official 5452/500 split; dev = a seeded 10% of train (as Kim 2014)."""
    train = read_labelled(require_file(root, "trec/TREC.train.all", SOURCE), len(TREC_LABELS))
    test = read_labelled(require_file(root, "trec/TREC.test.all", SOURCE), len(TREC_LABELS))
    order = list(range(len(train)))
    random.Random(SPLIT_SEED).shuffle(order)
    n_dev = len(train) // 10
    dev = [train[i] for i in order[:n_dev]]
    train = [train[i] for i in order[n_dev:]]
    return train, dev, test
