"""tools/research/oracle/dcnn: Godin's Theano/Lasagne DCNN (FredericGodin/DynamicCNN) as the oracle for our DCNN.

The row map between his folding and ours is checked everywhere; the test marked `oracle` runs his code from
LAB_DCNN_ORACLE_DIR and LAB_LASAGNE_DIR (`make test-oracle`), which CI's selections leave out."""

from pathlib import Path

import numpy as np
import pytest

from core.data import PROJECT_ROOT, Example, TaskData
from tools.research.oracle.dcnn import godin_rows, write_godin_files
from tools.research.oracle.same_inputs import parse_godin_log, report


def fold_ours(x: np.ndarray) -> np.ndarray:
    return x[0::2] + x[1::2]  # rows 2p and 2p + 1


def fold_his(x: np.ndarray) -> np.ndarray:
    half = len(x) // 2
    return x[:half] + x[half:]  # rows f and f + r/2 (DCNN/folding.py's reshape)


@pytest.mark.parametrize("rows, folds", [(48, 2), (48, 1), (16, 3), (8, 0)])
def test_his_rows_fold_into_ours(rows: int, folds: int):
    # our row o holds what his row godin_rows(...)[o] holds: after every folding the two still agree, row for row
    perm = godin_rows(rows, folds)
    assert sorted(perm) == list(range(rows))
    his = np.random.default_rng(0).normal(size=(rows, 3))
    ours = his[perm]
    for level in range(folds):
        ours, his = fold_ours(ours), fold_his(his)
        assert np.array_equal(ours, his[godin_rows(rows // 2 ** (level + 1), folds - level - 1)])


@pytest.mark.oracle
def test_shipped_dcnn_in_godins_graph_gives_our_probabilities():
    """His Lasagne graph with our shipped SST-5 DCNN's weights (our k from the convolution's width, as his)."""
    from tools.research.oracle.dcnn import compare, folders

    repo, lasagne_dir = folders()
    result = compare(PROJECT_ROOT / "checkpoints" / "sst5" / "dcnn", repo, lasagne_dir, "float64", "width", 60)
    assert result["sentences"] == 60
    assert result["max_abs_dp"] < 1e-5
    assert result["argmax_agree"] == 60


def test_his_files_hold_our_examples_as_his_reader_reads_them(tmp_path: Path):
    """Ids padded with the vocabulary size (his zero row), `class + 1,length` labels, one vocabulary for all splits."""
    train = [Example(("a", "good", "film"), 1), Example(("bad",), 0)]
    data = TaskData("sst2", "en", ["negative", "positive"], train, [Example(("good",), 1)], [Example(("new", "a"), 0)])
    sizes = write_godin_files(tmp_path, data)
    assert sizes == {"vocab_size": 5, "classes": 2, "width": 3, "train": 2, "valid": 1, "test": 1}
    folder = tmp_path / "data" / "binarySentiment"
    assert (folder / "train.txt").read_text().splitlines() == ["0,1,2", "3,5,5"]
    assert (folder / "train_lbl.txt").read_text().splitlines() == ["2,3", "1,1"]
    assert (folder / "valid.txt").read_text().splitlines() == ["1,5,5"]
    assert (folder / "test.txt").read_text().splitlines() == ["4,0,5"]
    assert write_godin_files(tmp_path, TaskData("sst2", "en", [], [], [], [])) == sizes  # written once


GODIN_LOG = """Started training
Train loss, 0.69, validation accuracy: 55.5%
Test accuracy: 54.25%
Train loss, 0.52, validation accuracy: 80.0%
Test accuracy: 79.5%
Epoch 1 finished.
Train loss, 0.41, validation accuracy: 81.25%
Test accuracy: 82.0%
Epoch 2 finished.
stopped after 1.0 minutes (--max-minutes)
"""


def test_his_log_gives_the_test_at_his_best_dev():
    result = parse_godin_log(GODIN_LOG)
    assert (result["dev"], result["test"], result["epochs"]) == (81.25, 82.0, 2)
    assert result["dev_curve"] == [55.5, 80.0, 81.25] and not result["nan"]
    cut = GODIN_LOG.split("Test accuracy: 82.0%")[0]  # killed between his dev and his test line
    assert (parse_godin_log(cut)["dev"], parse_godin_log(cut)["test"]) == (80.0, 79.5)


def test_a_killed_dcnn_run_is_salvaged_from_his_log(tmp_path: Path):
    run = tmp_path / "dcnn-authors-sst2-phrases-s2"
    run.mkdir()
    (run / "log.txt").write_text(GODIN_LOG)
    [row] = report([tmp_path])
    assert row["model"] == "dcnn" and row["implementation"] == "authors" and row["phrases"] and row["seed"] == 2
    assert (row["dev"], row["test"], row["killed"]) == (81.25, 82.0, True)
