"""A user file's labels get one order in every process (issue 41, item 5): labels that are equal as numbers ("1" and
"01") once tied, and the tie followed the process's string hashing, so a worker resumed in another process trained
with swapped labels."""

import itertools
import json
import os
import subprocess
import sys

from core.data import PROJECT_ROOT
from core.data.user import _label_order, read_rows

TIED = ["1", "01", "001", "2", "02", "10"]  # three numbers, six labels


def _labelled(path, labels):
    lines = [f"review {i} of a film,{labels[i % len(labels)]}" for i in range(10 * len(labels))]
    path.write_text("text,label\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_equal_numbers_are_ordered_by_their_text_and_anything_else_as_text():
    assert _label_order(set(TIED)) == ["001", "01", "1", "02", "2", "10"]
    assert _label_order({"-1", "0", "1.5", "-0"}) == ["-1", "-0", "0", "1.5"]
    assert _label_order({"2", "10", "nan"}) == ["10", "2", "nan"]  # nan is no number to order by
    assert _label_order({"neg", "pos", "1"}) == ["1", "neg", "pos"]
    for labels in itertools.permutations(TIED):  # whatever order the set was built in
        assert _label_order(set(labels)) == ["001", "01", "1", "02", "2", "10"]


def test_every_process_orders_the_labels_alike(tmp_path):
    path = _labelled(tmp_path / "tied.csv", TIED)
    here = read_rows(path).label_names
    script = (
        f"import json; from core.data.user import read_rows; print(json.dumps(read_rows({str(path)!r}).label_names))"
    )
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        out = subprocess.run(
            [sys.executable, "-c", script], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=True
        ).stdout
        assert json.loads(out) == here == ["001", "01", "1", "02", "2", "10"], f"PYTHONHASHSEED={seed}"
