import pytest

from core.data import DataError, load_task
from core.data.sst import parse_tree, read_trees, tree_examples


def test_tree_parsing_keeps_every_phrase():
    tree = parse_tree("(3 (2 (2 A) (2 film)) (4 (2 is) (4 great)))")
    assert tree.words == ("a", "film", "is", "great")
    assert [(n.label, n.words) for n in tree.nodes()][:3] == [(3, tree.words), (2, ("a", "film")), (2, ("a",))]


def test_leaves_with_spaces_and_escapes():
    assert parse_tree("(2 (2 8 1\\/2) (2 -LRB-))").words == ("8", "1/2", "(")


def test_binary_view_drops_neutral_and_dedupes_phrases():
    trees = [parse_tree("(3 (2 (2 a) (2 film)) (4 (2 is) (4 great)))"), parse_tree("(1 (2 a) (0 bore))")]
    fine = tree_examples(trees, binary=False, phrases=True)
    binary = tree_examples(trees, binary=True, phrases=True)
    assert len([e for e in fine if e.words == ("a",)]) == 1  # "a" occurs twice, kept once
    assert all(e.label in (0, 1) for e in binary)
    assert {e.words for e in binary} == {
        ("a", "film", "is", "great"),
        ("a", "bore"),
        ("is", "great"),
        ("great",),
        ("bore",),
    }
    assert not any(e.is_phrase for e in tree_examples(trees, binary=False, phrases=False))


@pytest.mark.parametrize("line", ["(3 (2 a) (2 b)", "(9 a)", "(2 a) extra", "2 a)", "(2 )"])
def test_malformed_tree_names_file_and_line(tmp_path, line):
    path = tmp_path / "train.txt"
    path.write_text("(2 ok)\n" + line + "\n")
    with pytest.raises(DataError, match=r"train.txt:2: malformed tree"):
        read_trees(path)


def test_missing_data_dir_is_one_clear_error(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_task("sst5", tmp_path / "nowhere")


def test_missing_and_empty_files_name_the_source(tmp_path):
    with pytest.raises(
        DataError, match=r"missing data file .*sst/trees/train.txt; get it from https://nlp.stanford.edu"
    ):
        load_task("sst5", tmp_path, use_cache=False)
    (tmp_path / "trec").mkdir()
    (tmp_path / "trec" / "TREC.train.all").write_text("")
    with pytest.raises(DataError, match="is empty"):
        load_task("trec", tmp_path, use_cache=False)


def test_unknown_task():
    with pytest.raises(ValueError, match="unknown task"):
        load_task("imdb")


def test_tiny_sst_task(tiny_data):
    task = load_task("sst5", tiny_data, phrases=True, use_cache=False)
    assert len(task.dev) == 40 and len(task.test) == 40
    assert len(task.train) > 160 and any(e.is_phrase for e in task.train)
    assert not any(e.is_phrase for e in task.dev + task.test)
