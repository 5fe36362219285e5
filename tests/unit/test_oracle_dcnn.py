"""tools/oracle/dcnn: Godin's Theano/Lasagne DCNN (FredericGodin/DynamicCNN) as the oracle for our DCNN.

The row map between his folding and ours is checked everywhere; the test marked `oracle` runs his code from
LAB_DCNN_ORACLE_DIR and LAB_LASAGNE_DIR (`make test-oracle`), which CI's selections leave out."""

import numpy as np
import pytest

from core.data import PROJECT_ROOT
from tools.oracle.dcnn import godin_rows


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
    from tools.oracle.dcnn import compare, folders

    repo, lasagne_dir = folders()
    result = compare(PROJECT_ROOT / "checkpoints" / "sst5" / "dcnn", repo, lasagne_dir, "float64", "width", 60)
    assert result["sentences"] == 60
    assert result["max_abs_dp"] < 1e-5
    assert result["argmax_agree"] == 60
