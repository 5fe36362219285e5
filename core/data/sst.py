"""Stanford Sentiment Treebank (Socher et al., EMNLP 2013) from its PTB trees.

Every node of a tree is `(label child...)` or `(label word)`; labels are 0..4 (very negative ..
very positive). The fine-grained view keeps all five labels; the binary view drops neutral (2) and maps
0,1 -> 0 and 3,4 -> 1, for sentences and phrases alike. Public source:
https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip (the `trees/` folder).
"""

from dataclasses import dataclass
from pathlib import Path

from core.data.base import DataError, Example, require_file
from core.text import normalize_sst_token

SOURCE = "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip (trees/*.txt)"
FINE_LABELS = ["very negative", "negative", "neutral", "positive", "very positive"]
BINARY_LABELS = ["negative", "positive"]


@dataclass
class Tree:
    label: int
    words: tuple[str, ...]  # leaves of this subtree, normalized
    children: list["Tree"]

    def nodes(self):
        yield self
        for child in self.children:
            yield from child.nodes()


def parse_tree(line: str) -> Tree:
    """Parse one PTB tree line; raises ValueError on malformed input."""
    tokens = line.replace("(", " ( ").replace(")", " ) ").split()
    pos = 0

    def node() -> Tree:
        nonlocal pos
        if pos >= len(tokens) or tokens[pos] != "(":
            raise ValueError(f"expected '(' at token {pos}")
        pos += 1
        if pos >= len(tokens) or not tokens[pos].isdigit() or not 0 <= int(tokens[pos]) <= 4:
            raise ValueError(f"expected a label 0-4 at token {pos}")
        label = int(tokens[pos])
        pos += 1
        children: list[Tree] = []
        words: tuple[str, ...] = ()
        if pos < len(tokens) and tokens[pos] not in "()":
            # a leaf; a few leaves hold a space ("8 1\/2"), which become separate words
            while pos < len(tokens) and tokens[pos] not in "()":
                words += (normalize_sst_token(tokens[pos]),)
                pos += 1
        else:
            while pos < len(tokens) and tokens[pos] == "(":
                children.append(node())
            words = tuple(w for c in children for w in c.words)
        if pos >= len(tokens) or tokens[pos] != ")":
            raise ValueError(f"expected ')' at token {pos}")
        pos += 1
        if not words:
            raise ValueError("empty node")
        return Tree(label, words, children)

    tree = node()
    if pos != len(tokens):
        raise ValueError(f"trailing tokens after the tree at token {pos}")
    return tree


def read_trees(path: Path) -> list[Tree]:
    trees = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                trees.append(parse_tree(line))
            except ValueError as err:
                raise DataError(f"{path}:{number}: malformed tree ({err})") from None
    if not trees:
        raise DataError(f"{path} holds no trees; get it again from {SOURCE}")
    return trees


def load_sst_trees(root: Path, split: str) -> list[Tree]:
    """The trees of one split ("train", "dev" or "test") from the data directory `root`."""
    return read_trees(require_file(root, f"sst/trees/{split}.txt", SOURCE))


def relabel(label: int, binary: bool) -> int | None:
    """A fine label 0..4 in the task's classes: itself (SST-5), or 0/1 with neutral dropped (None; SST-2)."""
    if not binary:
        return label
    return None if label == 2 else int(label > 2)


def tree_examples(trees: list[Tree], binary: bool, phrases: bool) -> list[Example]:
    """Sentences (roots) and, with `phrases`, every distinct labelled sub-phrase once.

    A phrase that occurs in several trees (e.g. "the movie") is kept once, with its first label:
    the treebank labelled each distinct phrase once, so repeats would only re-weight them.
    """
    examples = []
    seen: set[tuple[str, ...]] = set()
    for tree in trees:
        label = relabel(tree.label, binary)
        if label is not None:
            examples.append(Example(tree.words, label))
        seen.add(tree.words)
    if phrases:
        for tree in trees:
            for node in tree.nodes():
                if node.words in seen:
                    continue
                seen.add(node.words)
                label = relabel(node.label, binary)
                if label is not None:
                    examples.append(Example(node.words, label, is_phrase=True))
    return examples


def node_examples(trees: list[Tree], binary: bool) -> list[Example]:
    """Every labelled node of every tree, repeats included: Socher et al. (2013)'s "all phrases" test
    set (Table 1, Fig. 4), whose accuracy counts each occurrence of a phrase in a sentence."""
    return [
        Example(node.words, label, is_phrase=node is not tree)
        for tree in trees
        for node in tree.nodes()
        if (label := relabel(node.label, binary)) is not None
    ]


def load_sst(root: Path, binary: bool, phrases: bool):
    """(train, dev, test) examples; dev and test are always whole sentences."""
    splits = {}
    for split in ("train", "dev", "test"):
        trees = load_sst_trees(root, split)
        splits[split] = tree_examples(trees, binary, phrases and split == "train")
    return splits["train"], splits["dev"], splits["test"]
