"""tools/research/oracle: the authors' code (taolei87/text_convnet) as the oracle for our tensor CNN.

The tests marked `oracle` run their code from LAB_ORACLE_DIR (`make test-oracle ORACLE_DIR=...`); CI's
selections leave them out (`not oracle`), since CI has no such folder. The log parser runs everywhere."""

from pathlib import Path

import pytest

from core.data import PROJECT_ROOT
from tools.research.oracle.same_inputs import parse_authors_log

LOG = """Epoch 0.5\tloss=1.5\t|p|=['1.0']  [0.50m]
\tdev accuracy=0.3000\tbest=0.3000

\ttest accuracy=0.3100

Epoch 1.0\tloss=1.4\t|p|=['1.0']  [0.50m]
\tdev accuracy=0.4000\tbest=0.4000

\ttest accuracy=0.4100

Epoch 2.0\tloss=1.3\t|p|=['1.0']  [0.50m]
\tdev accuracy=0.4500\tbest=0.4500

\ttest accuracy=0.4400

Epoch 3.0\tloss=1.2\t|p|=['1.0']  [0.50m]
\tdev accuracy=0.4500\tbest=0.4500

\ttest accuracy=0.4800

Epoch 4.0\tloss=1.1\t|p|=['1.0']  [0.50m]
\tdev accuracy=0.4300\tbest=0.4500
"""


def test_authors_log_keeps_the_test_of_the_saved_model():
    # their code saves on a strictly better dev but prints test on a tie too: the tie's 48.0 is not the model kept
    result = parse_authors_log(LOG)
    assert (result["dev"], result["test"], result["epochs"]) == (45.0, 44.0, 4)
    assert result["dev_curve"] == [30.0, 40.0, 45.0, 45.0, 43.0] and not result["nan"]
    assert result["epoch_end_dev"] == [40.0, 45.0, 45.0, 43.0]  # the mid-epoch evaluation (0.5) is not an epoch's end


def test_authors_log_without_an_evaluation_has_no_result():
    assert parse_authors_log("seed: 1\n0\n100\n") == {
        "dev": None,
        "test": None,
        "dev_curve": [],
        "epoch_end_dev": [],
        "epochs": 0,
        "nan": False,
    }


@pytest.mark.oracle
def test_shipped_tensor_cnn_in_the_authors_graph_gives_our_probabilities(tmp_path: Path):
    """The strongest evidence that our model is the paper's: their graph with our weights, SST-5 dev."""
    from tools.research.oracle.files import default_dir, write_inputs
    from tools.research.oracle.same_weights import compare
    from tools.research.oracle.shim import oracle_dir

    inputs = default_dir()
    if not (inputs / "stsa.fine.dev").is_file():
        write_inputs(inputs)
    result = compare(PROJECT_ROOT / "checkpoints" / "sst5" / "tensor_cnn", oracle_dir(), inputs, "float64")
    assert result["sentences"] == 1101
    assert result["max_abs_dp"] < 1e-5
    assert result["argmax_agree"] == 1101


@pytest.mark.oracle
def test_shim_softmax_is_row_wise_as_theano_s():
    import numpy as np
    import pytensor

    from tools.research.oracle.shim import theano_modules

    T = theano_modules()["theano.tensor"]
    x = T.dmatrix()
    p = pytensor.function([x], T.nnet.softmax(x))(np.array([[0.0, 1.0], [2.0, 2.0]]))
    assert np.allclose(p.sum(1), 1.0) and np.allclose(p[1], 0.5)


def test_authors_log_counts_an_epoch_once_when_a_late_evaluation_rounds_to_its_end():
    # --eval-period: an evaluation in an epoch's last 5% prints "Epoch 1.0" (%.1f of 0.97) before the real end
    log = LOG.replace("Epoch 0.5", "Epoch 1.0").replace("dev accuracy=0.3000\tbest=0.3000", "dev accuracy=0.3900")
    result = parse_authors_log(log)
    assert result["epochs"] == 4 and result["epoch_end_dev"] == [40.0, 45.0, 45.0, 43.0]
    assert result["dev_curve"][:2] == [39.0, 40.0]
