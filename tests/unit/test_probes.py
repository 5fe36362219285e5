"""Behavioural probes (core/analysis/probes.py, probes/*.toml): the suites expand deterministically into enough cases,
a broken suite names its file and key, a model that always predicts one class fails every directional test,
the runner answers for every loaded model, and the app serves it (the /probes endpoint, the Probes tab)."""

from types import SimpleNamespace

import pytest
import torch

from core.analysis.probes import (
    Case,
    ProbeInputError,
    SuiteError,
    class_probabilities,
    load_suite,
    parse_user_cases,
    polarity_groups,
    read_suite,
    run_cases,
    run_suite,
    suite_names,
)
from core.predict import Lab
from core.text import tokenize

SST5 = ["very negative", "negative", "neutral", "positive", "very positive"]
BINARY = ["negative", "positive"]


@pytest.mark.parametrize("name", ["en", "zh"])
def test_each_language_expands_deterministically_into_enough_cases(name):
    first, again = load_suite(name).expand(), load_suite(name).expand()
    assert first == again
    assert len(first) >= 300 and len(set(first)) == len(first)
    capabilities = {c.capability for c in first}
    assert len(capabilities) >= 6 and {c.type for c in first} == {"mft", "inv", "dir"}
    assert all("{" not in c.text + c.variant for c in first)  # every slot filled
    assert all(c.variant and c.variant != c.text for c in first if c.type != "mft")


def test_the_sample_of_a_capped_test_follows_the_seed():
    suite = load_suite("en")
    capped = [t for t in suite.tests if t["name"] == "strong beats weak (positive)"]
    suite.tests = capped
    sample = suite.expand()
    assert len(sample) == suite.max_cases_per_test  # 10 nouns x 7 x 8 x 16 fillings, sampled
    suite.seed += 1
    assert suite.expand() != sample


def test_both_suites_cover_the_same_capabilities_in_both_languages():
    en, zh = load_suite("en"), load_suite("zh")
    assert set(suite_names()) >= {"en", "zh"}
    assert en.capabilities.keys() == zh.capabilities.keys()
    assert all(wording["en"] and wording["zh"] for wording in en.capabilities.values())


def _write(tmp_path, body: str):
    path = tmp_path / "broken.toml"
    head = 'lang = "en"\ntask = "sst5"\nseed = 1\nmax_cases_per_test = 5\ndir_margin = 0.02\n'
    path.write_text(head + body, encoding="utf-8")
    return path


GOOD_PARTS = '[lexicon]\npos = ["good"]\n[capabilities]\nv = { en = "Vocabulary", zh = "词汇" }\n'


@pytest.mark.parametrize(
    "body, key",
    [
        (
            GOOD_PARTS
            + '[[tests]]\nname = "a"\ncapability = "v"\ntype = "mft"\ntemplate = "{adj}"\nexpect = "positive"\n',
            "tests[0] (a).template",
        ),
        (
            GOOD_PARTS + '[[tests]]\nname = "a"\ncapability = "v"\ntype = "sideways"\ntemplate = "{pos}"\n',
            "tests[0] (a).type",
        ),
        (GOOD_PARTS + '[[tests]]\nname = "a"\ncapability = "nope"\ntype = "mft"\ntemplate = "{pos}"\n', "capability"),
        (
            GOOD_PARTS
            + '[[tests]]\nname = "a"\ncapability = "v"\ntype = "dir"\nbase = "{pos}"\nvariant = "not {pos}"\n'
            'direction = "left"\n',
            "direction",
        ),
        ("[lexicon]\npos = []\n[capabilities]\n[[tests]]\n", "lexicon.pos"),
        ("tests = []\n" + GOOD_PARTS.replace(', zh = "词汇"', ""), "capabilities.v"),
        ("[lexicon\n", "not valid TOML"),
    ],
)
def test_a_broken_suite_names_its_file_and_key(tmp_path, body, key):
    path = _write(tmp_path, body)
    with pytest.raises(SuiteError) as info:
        read_suite(path)
    assert str(path) in str(info.value) and key in str(info.value)


@pytest.mark.parametrize("name", ["../en", "/etc/passwd", "en.toml", "missing", 3])
def test_only_shipped_suites_load_by_name(name):
    with pytest.raises(SuiteError, match="unknown suite"):
        load_suite(name)


def test_polarity_groups_follow_the_task_labels():
    five = polarity_groups(SST5, "sst5")
    assert five["positive"] == {"positive", "very positive"} and five["not_negative"] == {
        "neutral",
        "positive",
        "very positive",
    }
    two = polarity_groups(BINARY, "zh_sentiment")
    assert two["not_positive"] == {"negative"} and "neutral" not in two
    with pytest.raises(ProbeInputError) as info:
        polarity_groups(["DESC", "NUM"], "trec")
    assert info.value.notice.code == "no_sentiment"


def test_user_cases_parse_and_bad_lines_say_which():
    cases = parse_user_cases("# mine\nA fine film.\tpositive\n\nGood.\tNot good.\tdown\nOk.\tOk!\tsame\n", SST5, "sst5")
    assert [(c.type, c.expect) for c in cases] == [("mft", "positive"), ("dir", "down"), ("inv", "")]
    assert parse_user_cases("Fine.\tvery positive", SST5, "sst5")[0].expect == "very positive"
    for text, code, line in (
        ("only one column", "bad_columns", 1),
        ("a\tpositive\n\tpositive", "bad_columns", 2),
        ("a\tglorious", "bad_expectation", 1),
        ("a\tb\tsideways", "bad_direction", 1),
        ("# nothing\n", "no_cases", None),
    ):
        with pytest.raises(ProbeInputError) as info:
            parse_user_cases(text, SST5, "sst5")
        assert info.value.notice.code == code and info.value.notice.params.get("line") == line


class ConstantNet(torch.nn.Module):
    """A model that predicts the same class with the same probabilities whatever it reads."""

    word_curve_kind = None

    def __init__(self, label: int, num_classes: int):
        super().__init__()
        self.logits = torch.full((num_classes,), -3.0)
        self.logits[label] = 3.0

    def forward(self, ids, lengths, labels=None, explain=0, intervention=None):
        return SimpleNamespace(logits=self.logits.expand(len(ids), -1))

    def predict_labels(self, output):
        return output.logits.argmax(-1)


def _constant_lab(task: str, labels: list[str], lang: str) -> Lab:
    vocab = SimpleNamespace(encode=lambda words: [1] * len(words), unk_id=0)
    checkpoints = {
        (task, f"always {label}"): SimpleNamespace(
            model=ConstantNet(i, len(labels)), vocab=vocab, meta={"labels": labels, "lang": lang, "task": task}
        )
        for i, label in enumerate(labels)
    }
    return Lab(checkpoints)


@pytest.mark.parametrize("name, labels", [("en", SST5), ("zh", BINARY)])
def test_a_model_that_always_predicts_one_class_fails_every_directional_test(name, labels):
    suite = load_suite(name)
    lab = _constant_lab(suite.task, labels, suite.lang)
    report = run_suite(lab, suite)
    assert report.models == lab.models(suite.task) and len(report.models) == len(labels)
    for test in report.tests:
        for model in report.models:
            cell = report.test_cells[test["name"]][model]
            if test["type"] == "dir":
                assert cell.passed == 0 and len(cell.failures) == cell.total > 0, (test, model)
            if test["type"] == "inv":  # the same label on both sides: invariance holds trivially
                assert cell.passed == cell.total
    # a positive-only model passes exactly the positive expectations
    positive = report.test_cells[next(t["name"] for t in suite.tests if t.get("expect") == "positive")]
    assert positive[f"always {labels[-1]}"].rate == 1.0 and positive[f"always {labels[0]}"].rate == 0.0


def test_a_directional_case_passes_only_by_more_than_the_margin():
    lab = _constant_lab("sst5", SST5, "en")
    model = ConstantNet(2, 5)
    lab.checkpoints = {
        ("sst5", "neutral"): SimpleNamespace(
            model=model,
            vocab=SimpleNamespace(encode=lambda words: [len(words)] * len(words), unk_id=0),
            meta={"labels": SST5, "lang": "en"},
        )
    }

    def by_length(ids, lengths, labels=None, explain=0, intervention=None):  # longer sentences read more positive
        logits = torch.zeros(len(ids), 5)
        logits[:, 4] = lengths.float()
        return SimpleNamespace(logits=logits)

    model.forward = by_length
    cases = [
        Case("longer", "c", "dir", "Good.", "Good , good .", "up"),
        Case("shorter", "c", "dir", "Good , good .", "Good.", "up"),
    ]
    report = run_cases(lab, cases, "sst5")
    assert [report.test_cells[t]["neutral"].passed for t in ("longer", "shorter")] == [1, 0]


def test_unknown_task_model_and_expectation_are_input_errors(lab):
    with pytest.raises(ProbeInputError) as info:
        run_suite(lab, "en", "trec")
    assert info.value.notice.code == "unknown_task"
    with pytest.raises(ProbeInputError) as info:
        run_cases(lab, [Case("t", "c", "mft", "good", expect="positive")], "sst5", models=["nbow"])
    assert info.value.notice.code == "unknown_model"
    with pytest.raises(ProbeInputError) as info:  # SST-2 has no neutral class
        run_cases(lab, [Case("t", "c", "mft", "good", expect="neutral")], "sst2")
    assert info.value.notice.code == "unknown_expectation"


@pytest.mark.parametrize("name, task", [("en", "sst5"), ("en", "sst2"), ("zh", "zh_sentiment")])
def test_the_runner_answers_for_every_loaded_model(lab, name, task):
    report = run_suite(lab, name, task)
    suite = load_suite(name)
    assert report.models == lab.models(task) and report.cases == len(suite.expand())
    assert list(report.cells) == list(dict.fromkeys(t["capability"] for t in suite.tests))
    for capability, row in report.cells.items():
        assert set(row) == set(report.models)
        for cell in row.values():
            assert 0 <= cell.passed <= cell.total and len(cell.failures) == cell.total - cell.passed
            assert all(not f.passed and f.case.capability == capability for f in cell.failures)
    data = report.to_dict()
    assert data["pass_rates"][report.tests[0]["capability"]].keys() == set(report.models)
    assert report.seconds > 0 and report.sentences <= 2 * report.cases


def test_the_batched_forward_agrees_with_the_explained_prediction(lab):
    """Sorted and padded, the runner's batches must give what Lab.predict gives one sentence at a time."""
    texts = ["The plot is not good.", "A good, fun film that is never dull.", "Bad."]
    words = [[t.text for t in tokenize(text, "en")] for text in texts]
    for model in lab.models("sst5"):
        probs, label_ids = class_probabilities(lab.checkpoints[("sst5", model)], words)
        for text, row, label_id in zip(texts, probs, label_ids):
            one = lab.predict(text, model, task="sst5")
            assert one.labels[label_id] == one.label and row == pytest.approx(one.probs, abs=1e-5), model


# -- the app -------------------------------------------------------------------------------------------------


def test_the_probes_tab_shows_the_table_and_a_cells_failures(lab):
    from demo.i18n import model_name
    from demo.tabs.probes import failure_table, run_probe_suite, run_user_cases

    summary, table, _, _, head, failures, failure_choices, report = run_probe_suite(lab, "zh", "auto", "zh")
    assert "zh_sentiment" not in summary and "个用例" in summary  # worded in Chinese, the task by its name
    assert summary.startswith("中文用例") and "测试集 zh" not in summary  # the suite by its language
    assert list(table.columns) == ["能力"] + [model_name(m, cited=False) for m in lab.models("zh_sentiment")]
    assert len(table) == len(report.cells)
    first_cell = report.cells[next(iter(report.cells))][report.models[0]]
    assert len(failure_choices["choices"]) == len(failures) == len(first_cell.failures)  # one choice per row
    capability, model = next((c, m) for c, row in report.cells.items() for m, cell in row.items() if cell.failures)
    head, failures = failure_table(report, capability, model, "en")
    assert len(failures) == len(report.cells[capability][model].failures) and "passed" in head
    summary, *_ = run_user_cases(lab, "a good film\tsideways", None, "en", "sst5", "zh")
    assert "第 1 行" in summary
    summary, table, *_, report = run_user_cases(
        lab, "a good film\tpositive\nGood.\tNot good.\tdown", None, "en", "auto", "en"
    )
    assert report.task == "sst5" and report.cases == 2 and len(table) == 1
    assert not summary.startswith("⚠️")  # English cases on an English task


def test_own_cases_in_the_other_language_are_run_with_a_warning(lab):
    from demo.tabs.probes import run_user_cases

    summary, table, *_, report = run_user_cases(lab, "这个手机很好\tpositive", None, "en", "sst5", "zh")
    assert report.cases == 1 and summary.startswith("⚠️ 你的用例是中文，而任务")
    summary, *_ = run_user_cases(lab, "这个手机很好\tpositive", None, "zh", "auto", "en")
    assert not summary.startswith("⚠️")  # Chinese cases on the Chinese task


def test_the_probes_endpoint_answers(lab, client):
    from gradio_client.exceptions import AppError

    answer = client.predict("en", "auto", api_name="/probes")
    expected = run_suite(lab, "en").to_dict(failures=False)
    assert answer["pass_rates"] == expected["pass_rates"] and answer["models"] == lab.models("sst5")
    assert client.predict("zh", "zh_sentiment", api_name="/probes")["task"] == "zh_sentiment"
    for args in (("../en", "auto"), ("en", "trec")):
        with pytest.raises(AppError) as info:
            client.predict(*args, api_name="/probes")
        assert "Traceback" not in str(info.value)
