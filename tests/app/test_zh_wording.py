"""Words the Chinese page used to show in English, worded per language by the front end: where a checkpoint came
from (the Checkpoints tab, the Lab), a treebank split, a probe's test name and a "not positive" expectation."""

import re
from types import SimpleNamespace

import pytest

from core.analysis.probes import Case, load_suite, read_suite, suite_names
from core.analysis.treebank import TreebankError
from demo.i18n import CODES, TRADITIONAL, notice_text, source_text, t
from demo.tabs.checkpoints import tables
from demo.tabs.probes import expectation, probe_test_name

CHINESE = re.compile("[\u4e00-\u9fff]")


@pytest.mark.parametrize(
    ("source", "zh"),
    [
        ("bundled: checkpoints/sst5/dcnn", "随应用附带：checkpoints/sst5/dcnn"),
        ("directory: /data/ckpt/sst5/dcnn", "目录：/data/ckpt/sst5/dcnn"),
        ("trained here: job 3f2a9c", "在此训练：训练作业 3f2a9c"),  # web.training, a job just done
        ("trained here: user_reviews_27ff62/dcnn", "在此训练：user_reviews_27ff62/dcnn"),  # after a restart
        ("somewhere: else", "somewhere: else"),  # no wording: as it is
    ],
)
def test_a_checkpoint_source_is_worded_in_chinese_and_kept_in_english(source, zh):
    assert source_text(source, "zh") == zh
    assert source_text(source, "en") == source
    assert source_text(source, "zh-TW") == TRADITIONAL["zh-TW"](zh)


def test_the_checkpoints_table_words_each_source(lab):
    loaded, _ = tables(lab, "zh")
    sources = [row[loaded["headers"].index(t("col_source", "zh"))] for row in loaded["data"]]
    assert len(sources) == len(lab.checkpoints) and all(s.startswith("目录：") for s in sources)


def test_a_treebank_split_is_named_in_the_ui_language():
    assert "测试集" in notice_text(TreebankError("no_match", split="test"), "zh")
    assert "test" in notice_text(TreebankError("no_match", split="test"), "en")
    assert "../train" in notice_text(TreebankError("unknown_split", split="../train", available="dev, test"), "zh")


def test_every_shipped_probe_test_has_a_chinese_name():
    for suite in suite_names():
        names = [test.get("zh", "") for test in load_suite(suite).tests]
        assert all(CHINESE.search(name) for name in names), suite
        assert len(set(names)) == len(names), suite


def test_a_probes_test_is_named_in_the_ui_language():
    report = SimpleNamespace(suite="en")
    case = Case("positive adjective", "vocabulary", "mft", "The film is good.", expect="positive")
    assert (probe_test_name(report, case, "zh"), probe_test_name(report, case, "en")) == (
        "褒义形容词",
        "positive adjective",
    )
    user = Case("user 3", "user", "mft", "good", expect="positive")
    assert (probe_test_name(report, user, "zh"), probe_test_name(report, user, "en")) == ("你的第 3 行", "your line 3")
    other = Case("a test of a file run from the command line", "c", "mft", "x")
    assert probe_test_name(SimpleNamespace(suite="mine"), other, "zh") == other.test


def test_a_not_expectation_is_worded():
    assert (expectation("not_positive", "zh"), expectation("not_negative", "en")) == ("非正面", "not negative")
    assert (expectation("positive", "zh"), expectation("very positive", "en")) == ("正面", "very positive")


def test_a_suite_test_name_in_chinese_must_be_text(tmp_path):
    suite = (tmp_path / "s.toml").open("w", encoding="utf-8")
    suite.write(
        'lang = "en"\ntask = "sst5"\nseed = 1\nmax_cases_per_test = 2\ndir_margin = 0.02\n[lexicon]\npos = ["good"]\n'
        '[capabilities]\nv = { en = "V", zh = "词" }\n'
        '[[tests]]\nname = "a"\nzh = 3\ncapability = "v"\ntype = "mft"\ntemplate = "{pos}"\nexpect = "positive"\n'
    )
    suite.close()
    with pytest.raises(ValueError, match=r"tests\[0\] \(a\)\.zh"):
        read_suite(tmp_path / "s.toml")


def test_a_job_and_a_task_are_two_words():
    """A training job (作业) is not the task a model is trained for (任务), in either script."""
    assert t("train_job", "zh") == "作业" and t("task", "zh") == "任务"
    assert "作业" in CODES["zh"]["jobs"]["too_many_jobs"] and "任务" not in CODES["zh"]["jobs"]["too_many_jobs"]
    assert t("train_job", "zh-TW") != t("task", "zh-TW")


def test_the_lab_summary_in_chinese_has_full_width_colons_and_brackets(lab):
    from demo.lab_text import summary_text

    said = summary_text([lab.predict("这部电影很好看", "dcnn", task="zh_sentiment")], "zh")
    assert "语言：中文（自动识别）" in said and "任务：" in said and "模型：" in said
    assert not re.search(r"[\u4e00-\u9fff][:(]|[:)][\u4e00-\u9fff]", said), said


def test_taiwan_chinese_names_the_prefix_curve_without_a_word_prefix():
    assert "字首" not in t("curve_prefix", "zh-TW") and "前綴" in t("curve_prefix", "zh-TW")
