"""The Treebank tab's core (core.analysis.treebank, core.analysis.dataset_view), its command (tools.evaluate_all) and
its callbacks and endpoints, on the tiny checkpoints; and the shipped SST-5 checkpoints' stored evaluation
against core.analysis.evaluate."""

import json
import shutil

import pytest

from core.analysis.dataset_view import EVALUATION, length_buckets, read_evaluation
from core.analysis.evaluate import main as evaluate_main
from core.analysis.evaluate import sst_phrases
from core.analysis.metrics import classification_report, predict_examples
from core.analysis.treebank import Treebank, TreebankError, phenomena, tree_view
from core.checkpoints.manifest import read_manifest
from core.data import PROJECT_ROOT, Example, load_task
from core.data.sst import FINE_LABELS, node_examples, parse_tree
from core.predict import Lab
from demo.i18n import t
from demo.svg import esc
from service.lab import ServedLab
from tools.evaluate_all import main as evaluate_all_main
from tools.release.bundle import check

SHIPPED = PROJECT_ROOT / "checkpoints"
TREE = "(3 (2 (2 it) (2 (2 is) (2 not))) (3 (2 bad) (4 (4 fun) (2 .))))"


def test_node_examples_counts_every_labelled_node_with_repeats():
    tree = parse_tree(TREE)
    fine = node_examples([tree, tree], binary=False)
    assert len(fine) == 2 * 11 and sum(not e.is_phrase for e in fine) == 2
    binary = node_examples([tree], binary=True)  # neutral (2) nodes have no binary label
    assert [(" ".join(e.words), e.label) for e in binary] == [
        ("it is not bad fun .", 1),
        ("bad fun .", 1),
        ("fun .", 1),
        ("fun", 1),
    ]


def test_phenomena():
    assert phenomena(("it", "is", "n't", "good", "but", "fun")) == {"negation", "contrast"}
    assert phenomena(("a", "good", "film")) == set()
    assert phenomena(("这个", "不好用"), "zh") == {"negation"} and phenomena(("很好", "但是", "贵"), "zh") == {
        "contrast"
    }


@pytest.fixture(scope="module")
def treebank(tiny_data):
    return Treebank.load(tiny_data)


def test_search_filters(treebank):
    tests = treebank.trees["test"]
    negated = treebank.search("test", phenomenon="negation")
    assert negated and all("not" in tests[h.index].words for h in negated)
    assert len(negated) == sum("not" in t.words for t in tests)
    for hit in treebank.search("test", words="The", min_words=3, max_words=5):
        assert "the" in tests[hit.index].words and 3 <= hit.words <= 5
    label = FINE_LABELS[tests[0].label]
    assert all(tests[h.index].label == tests[0].label for h in treebank.search("test", label=label))
    assert treebank.search("test", words="no such phrase") == []
    assert treebank.random("test", phenomenon="negation").index in {h.index for h in negated}


@pytest.mark.parametrize(
    "call, code",
    [
        (lambda tb: tb.search("train"), "unknown_split"),
        (lambda tb: tb.search("test", label="great"), "unknown_label"),
        (lambda tb: tb.search("test", phenomenon="irony"), "unknown_phenomenon"),
        (lambda tb: tb.tree("test", 10_000), "bad_index"),
        (lambda tb: tb.tree("dev", -1), "bad_index"),
        (lambda tb: tb.random("test", words="no such phrase"), "no_match"),
    ],
)
def test_bad_requests_raise_codes(treebank, call, code):
    with pytest.raises(TreebankError) as err:
        call(treebank)
    assert err.value.notice.code == code


def test_missing_trees_say_where(tmp_path):
    with pytest.raises(TreebankError) as err:
        Treebank.load(tmp_path)
    assert err.value.notice.code == "no_trees" and "sst/trees" in str(err.value)


def test_tree_view_classifies_every_node_alone(lab, treebank):
    index = max(range(len(treebank.trees["test"])), key=lambda i: len(treebank.trees["test"][i].words))
    tree = treebank.tree("test", index)
    view = tree_view(lab.checkpoints, tree, "sst5", "test", index)
    assert len(view.nodes) == 2 * len(tree.words) - 1 and view.models == lab.models("sst5")
    for node in view.nodes:
        assert node.text == " ".join(view.words[node.start : node.end])
        if node.parent is not None:
            parent = view.nodes[node.parent]
            assert parent.start <= node.start < node.end <= parent.end and parent.height > node.height
    for model in view.models:  # each phrase on its own (exact-length batches) gives the same labels
        ckpt = lab.checkpoints[("sst5", model)]
        for node in view.nodes:
            _, predicted = predict_examples(ckpt.model, [Example(tuple(node.text.split()), 0)], ckpt.vocab)
            assert node.predictions[model] == predicted[0]
        right = [n.predictions[model] == n.gold for n in view.nodes]
        assert view.accuracy[model] == pytest.approx(sum(right) / len(right))
    assert all(n.agree == sum(n.predictions[m] == n.gold for m in view.models) for n in view.nodes)
    binary = tree_view(lab.checkpoints, tree, "sst2", "test", index)
    assert all(n.gold is None for n, fine in zip(binary.nodes, tree.nodes()) if fine.label == 2)
    with pytest.raises(TreebankError, match="zh_sentiment"):
        tree_view(lab.checkpoints, tree, "zh_sentiment", "test", index)


@pytest.fixture(scope="module")
def evaluated(lab_root, tiny_data, tmp_path_factory):
    """A copy of the tiny checkpoints with evaluation.json written by the command, and its data folder."""
    base = tmp_path_factory.mktemp("evaluated")
    root, data = base / "checkpoints", base / "data"
    shutil.copytree(lab_root, root)
    shutil.copytree(tiny_data / "sst", data / "sst")
    shutil.copytree(lab_root.parent / "zh_data" / "chinese_sentiment", data / "chinese_sentiment")
    assert evaluate_all_main(["--checkpoints", str(root), "--data-dir", str(data), "--docs", str(base / "docs")]) == 0
    return root, data, base / "docs"


def test_evaluate_all_writes_every_checkpoint_and_the_manifest(evaluated):
    root, _, docs = evaluated
    files = read_manifest(root)
    lab = Lab.load(root)
    for task, model in lab.checkpoints:
        assert f"{task}/{model}/{EVALUATION}" in files
        view = read_evaluation(lab.checkpoints, task, model)
        assert view.status == "ok" and not view.disagreement_stale
        assert set(view.evaluation["disagreement"]["models"]) == set(lab.models(task))
    assert check(root) == []
    assert (docs / "treebank.md").is_file() and "switching sentence" in (docs / "treebank.md").read_text()
    mtimes = {p: p.stat().st_mtime_ns for p in root.glob(f"*/*/{EVALUATION}")}
    assert evaluate_all_main(["--checkpoints", str(root), "--data-dir", str(evaluated[1]), "--docs", ""]) == 0
    assert mtimes == {p: p.stat().st_mtime_ns for p in root.glob(f"*/*/{EVALUATION}")}  # current: not recomputed


@pytest.mark.parametrize("task", ["sst5", "sst2", "zh_sentiment"])
def test_stored_numbers_equal_core_evaluate(evaluated, task, capsys):
    root, data, _ = evaluated
    lab = Lab.load(root)
    for model in lab.models(task):
        assert evaluate_main(["--checkpoint", str(root / task / model), "--data-dir", str(data)]) == 0
        report = json.loads(capsys.readouterr().out)
        e = read_evaluation(lab.checkpoints, task, model).evaluation
        assert e["sentences"]["accuracy"] == report["test"]["accuracy"]
        assert e["sentences"]["confusion"] == report["test"]["confusion"]
        if task == "zh_sentiment":
            assert e["phrases"] is None and e["length_unit"] == "sentence"
        else:
            assert e["phrases"]["accuracy"] == report["test_all_phrases"]["accuracy"]
            assert e["phrases"]["n"] == report["test_all_phrases"]["n"] == sum(n for _, n, _ in e["by_length"])
        assert e["slices"]["all"]["n"] == report["test"]["n"]


def test_stale_missing_and_invalid_files_are_detected(evaluated, tmp_path):
    root = tmp_path / "checkpoints"
    shutil.copytree(evaluated[0], root)
    lab = Lab.load(root)
    path = root / "sst5" / "dcnn" / EVALUATION
    stored = json.loads(path.read_text())
    path.write_text(json.dumps({**stored, "weights_sha256": "0" * 64}))
    assert read_evaluation(lab.checkpoints, "sst5", "dcnn").status == "stale"
    other = read_evaluation(lab.checkpoints, "sst5", "mrnn")  # its list names dcnn's weights, still the same
    assert other.status == "ok" and not other.disagreement_stale
    mrnn = root / "sst5" / "mrnn" / EVALUATION
    blob = json.loads(mrnn.read_text())
    blob["disagreement"]["models"]["dcnn"] = "1" * 64
    mrnn.write_text(json.dumps(blob))
    assert read_evaluation(lab.checkpoints, "sst5", "mrnn").disagreement_stale
    path.write_text("{not json")
    assert read_evaluation(lab.checkpoints, "sst5", "dcnn").status == "invalid"
    path.unlink()
    missing = read_evaluation(lab.checkpoints, "sst5", "dcnn")
    assert missing.status == "missing" and missing.to_dict()["command"] == "make evaluate-all"
    with pytest.raises(TreebankError):
        read_evaluation(lab.checkpoints, "sst5", "nbow")


def test_length_buckets():
    rows = length_buckets([[1, 10, 9], [2, 4, 2], [12, 2, 1], [14, 2, 2], [50, 1, 0]])
    assert [(r["bucket"], r["n"], r["correct"]) for r in rows] == [
        ("1", 10, 9),
        ("2", 4, 2),
        ("11-15", 4, 3),
        ("41+", 1, 0),
    ]


def test_callbacks_draw_and_word_in_both_languages(evaluated, treebank):
    from demo.treebank_outputs import Filters, dataset_outputs, open_node, search_choices, tree_outputs

    root, _, _ = evaluated
    lab = ServedLab.load(root)
    for ui in ("en", "zh"):
        choices, count = search_choices(treebank, Filters("test", phenomenon="negation"), ui)
        assert choices["choices"] and count
        summary, figure, nodes, node_choices, _, _, view = tree_outputs(
            lab, treebank, "test", choices["value"], "sst5", ui
        )
        rows = nodes.count("<tr data-row=")  # a row per node, each picking it
        assert figure.count('class="tree-node"') == len(view.nodes) == rows == len(node_choices["choices"])
        assert nodes.count(f'aria-label="{t("tb_pick_node", ui, node=1)}"') == 1
        opened = open_node(view, 2, ui)
        assert (opened.text, opened.task, opened.b, opened.model) == (view.nodes[2].text, "sst5", "", None)
        for task in ("sst5", "zh_sentiment"):
            out = dataset_outputs(lab, task, "dcnn", ui)
            assert "<svg" in out[1] and "<svg" in out[2]
            for table, key in zip(out[3:6], ("tb_per_class", "tb_slices", "tb_disagree")):  # HTML tables, captioned
                assert table.startswith(f'<table tabindex="0"><caption>{esc(t(key, ui))}</caption>')
                assert '<th scope="col">' in table and '<th scope="row">' in table
            assert out[5].count("<tr data-row=") == len(out[6]["choices"])
    (root / "sst5" / "agt" / EVALUATION).rename(root / "agt.json")
    try:
        message = dataset_outputs(lab, "sst5", "agt", "zh")[0]
        assert "make evaluate-all" in message and "运行" in message
    finally:
        (root / "agt.json").rename(root / "sst5" / "agt" / EVALUATION)


def test_endpoints(client):
    tree = client.predict(0, "test", "sst5", api_name="/treebank")
    assert tree["task"] == "sst5" and len(tree["nodes"]) == 2 * len(tree["words"]) - 1
    assert set(tree["nodes"][0]["predictions"]) == set(tree["models"])
    data = client.predict("sst5", "dcnn", api_name="/dataset")  # the shared fixture has no evaluation.json
    assert data["status"] == "missing" and data["command"] == "make evaluate-all"
    for args, message in (
        ((10**6, "test", "sst5"), "does not exist"),
        ((0, "../train", "sst5"), "unknown split"),
        ((0, "test", "zh_sentiment"), "has no trees"),
        ((0, "test", "<b>x</b>"), "has no trees"),
    ):
        with pytest.raises(Exception, match=message):
            client.predict(*args, api_name="/treebank")
    with pytest.raises(Exception, match="not loaded for task 'sst5'"):
        client.predict("sst5", "nbow", api_name="/dataset")


# -- the shipped checkpoints ---------------------------------------------------------------------------

SHIPPED_SST5 = sorted(p.name for p in (SHIPPED / "sst5").iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def shipped():
    return Lab.load(SHIPPED, prefer="bundled")


@pytest.mark.parametrize("model", SHIPPED_SST5)
def test_shipped_evaluation_is_current(shipped, model):
    """Every shipped checkpoint has its evaluation, computed from its weights (`make evaluate-all`), and
    the root accuracy equals the one the bundle measured with core.analysis.metrics.evaluate (metrics.json)."""
    view = read_evaluation(shipped.checkpoints, "sst5", model)
    assert view.status == "ok" and not view.disagreement_stale, f"run make evaluate-all ({view.status})"
    metrics = json.loads((SHIPPED / "sst5" / model / "metrics.json").read_text())
    assert view.evaluation["sentences"]["accuracy"] == metrics["test"]["accuracy"]


@pytest.mark.slow
@pytest.mark.parametrize("model", SHIPPED_SST5)
def test_shipped_numbers_are_what_the_weights_and_the_code_give_now(shipped, model):
    """The stored numbers recomputed from the shipped weights by today's model code (a change to a model's forward
    leaves the weights' hash as it was): every test sentence, to its confusion matrix, and every test phrase of up to
    3 words, to its per-length counts (58,266 of the 82,600 nodes; the stored numbers' own computation over all of
    them equals core.analysis.evaluate's: test_stored_numbers_equal_core_evaluate)."""
    ckpt, e = shipped.checkpoints[("sst5", model)], read_evaluation(shipped.checkpoints, "sst5", model).evaluation
    sentences = load_task("sst5").test
    assert classification_report(*predict_examples(ckpt.model, sentences, ckpt.vocab), e["labels"]) == e["sentences"]
    phrases = [p for p in sst_phrases("sst5", "test") if len(p.words) <= 3]
    gold, predicted = predict_examples(ckpt.model, phrases, ckpt.vocab)
    counts = {length: [0, 0] for length in (1, 2, 3)}
    for phrase, label, guess in zip(phrases, gold, predicted):
        counts[len(phrase.words)][0] += 1
        counts[len(phrase.words)][1] += label == guess
    assert [[length, *counts[length]] for length in (1, 2, 3)] == e["by_length"][:3]
