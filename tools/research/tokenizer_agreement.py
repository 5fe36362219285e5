"""How well our English tokenizer reproduces the treebank's own tokens.

    python -m tools.research.tokenizer_agreement [--split test] [--show 10]

Each SST sentence is detokenized into the text a person would type ("it 's" -> "it's", `` x '' ->
"x", "ca n't" -> "can't", no space before punctuation), re-tokenized with core.text, and compared
with the treebank tokens: agreement = tokens matched by a longest-common-subsequence alignment /
treebank tokens, summed over sentences; we also report the share of sentences matched exactly.
"""

import argparse
import difflib
import json
import sys

from core.data import DataError, data_dir, require_file
from core.data.sst import SOURCE, read_trees
from core.text import tokenize_english

ATTACH_LEFT = {
    ",",
    ".",
    "!",
    "?",
    ";",
    ":",
    ")",
    "]",
    "}",
    "''",
    "%",
    "...",
    "n't",
    "'s",
    "'re",
    "'ve",
    "'m",
    "'ll",
    "'d",
}
ATTACH_RIGHT = {"(", "[", "{", "``", "$"}


def detokenize(words: list[str]) -> str:
    out = ""
    glue_next = True
    for word in words:
        surface = {"``": '"', "''": '"'}.get(word, word)
        if not glue_next and word not in ATTACH_LEFT:
            out += " "
        out += surface
        glue_next = word in ATTACH_RIGHT
    return out


def agreement(sentences: list[list[str]]) -> dict:
    matched = total = exact = 0
    mismatches = []
    for words in sentences:
        ours = [t.text for t in tokenize_english(detokenize(words))]
        blocks = difflib.SequenceMatcher(a=words, b=ours, autojunk=False).get_matching_blocks()
        hits = sum(b.size for b in blocks)
        matched += hits
        total += len(words)
        exact += ours == words
        if ours != words:
            mismatches.append({"treebank": " ".join(words), "ours": " ".join(ours)})
    return {
        "token_agreement": matched / max(1, total),
        "sentence_exact": exact / max(1, len(sentences)),
        "sentences": len(sentences),
        "tokens": total,
        "mismatches": mismatches,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.research.tokenizer_agreement", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--split", default="test", choices=["train", "dev", "test"], help="the SST split whose trees are compared"
    )
    parser.add_argument("--data-dir", default=None, help="where the datasets are (default: the project's data folder)")
    parser.add_argument("--show", type=int, default=10, help="print this many mismatching sentences")
    args = parser.parse_args(argv)
    try:
        trees = read_trees(require_file(data_dir(args.data_dir), f"sst/trees/{args.split}.txt", SOURCE))
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    report = agreement([list(t.words) for t in trees])
    for m in report["mismatches"][: args.show]:
        print(f"  treebank: {m['treebank']}\n  ours:     {m['ours']}\n")
    summary = {k: v for k, v in report.items() if k != "mismatches"}
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
