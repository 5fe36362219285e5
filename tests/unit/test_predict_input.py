"""Hostile and odd input through the Python API (Lab.predict, Lab.compare) and the CLI (issue 13).

One table, CASES, of at least 30 kinds of input. Each case either expects a clear InputError (one line,
no trace, matching `error`) or a sensible Prediction: finite probabilities summing to 1, token offsets
that point into the analysed text, a curve and an occlusion score per token, a JSON form that encodes
as UTF-8, and the expected notice. tests/app/test_api_input.py sends the same table through the Gradio API.

Checkpoints are the tiny one-epoch models of tests/lab_fixture.py (shared with test_app.py).
"""

import json
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import core.predict as predict_module
from core.models import PAPER_MODELS
from core.notices import NOTICE_TEXT, InputError
from core.predict import MAX_WORDS, OCCLUSION_MAX_WORDS, Lab, Request, main
from core.text import MAX_CHARS

ROOT = Path(__file__).resolve().parents[2]
SURROGATE = re.compile("[\ud800-\udfff]")
SECONDS = 120  # a hang guard only (speed is measured by `make bench`, not by tests)


@dataclass(frozen=True)
class Case:
    id: str
    text: object
    error: str = ""  # regex the InputError must match; "" = a Prediction is expected
    notice: str = ""  # a notice every prediction must carry
    lang: str = ""  # the detected language
    either: bool = False  # a clear InputError or a sensible Prediction are both fine


UNKNOWN = "vocabulary|unknown"
CUT = "cut to its first"
CASES = [
    Case("empty", "", error="empty"),
    Case("whitespace", " \t\n\r\v\f ", error="empty"),
    Case("unicode-spaces", "\u00a0\u2003\u3000\u2028", error="empty"),
    Case("only-nul", "\x00\x00\x00", error="empty"),
    Case("nul-inside", "good\x00 film\x00", lang="en"),
    Case("control-chars", "good\x01\x02\x1b[31m film\x7f\x9b", lang="en"),
    Case("zero-width-only", "\u200b\u200c\u200d\u2060\ufeff", notice=UNKNOWN),
    Case("zero-width-inside", "go\u200bod fi\u200dlm\ufeff", lang="en"),
    Case("punctuation", "?!... ,,, ;; -- ()", notice=UNKNOWN, lang="en"),
    Case("emoji", "😀👍🎬🔥", notice=UNKNOWN, lang="en"),
    Case("emoji-sequences", "👨‍👩‍👧‍👦 🇨🇳🇺🇸 👍🏽 good", lang="en"),
    Case("arabic-rtl", "هذا فيلم جيد جدا", notice=UNKNOWN, lang="en"),
    Case("bidi-override", "\u202egood film\u202c \u2067not bad\u2069", lang="en"),
    Case("hebrew-mixed", "the film שלום is good", lang="en"),
    Case("html", "<b>good</b> <br />film <a href='javascript:alert(1)'>x</a>", lang="en"),
    Case("script", "<script>alert(document.cookie)</script>", lang="en"),
    Case("img-onerror", '"><img src=x onerror=alert(1)> good', lang="en"),
    Case("markdown-link", "[good](javascript:alert(1)) **film** `x` ![i](http://x/y.png)", lang="en"),
    Case("mixed-zh-en", "这部movie很好 but the plot is dull", lang="en"),
    Case("mixed-mostly-zh", "这部电影很好看，演员很棒 but dull", lang="zh"),
    Case("traditional-zh", "這部電影不怎麼好看，但是演員很棒", lang="zh"),
    Case("full-width", "ｇｏｏｄ　ｆｉｌｍ！ＡＢＣ１２３", lang="en"),
    Case("full-width-zh", "很好！ＡＢＣ１２３电影", lang="zh"),
    Case("cjk-extension-b", "𠀀𠀁𠂉", notice=UNKNOWN, lang="zh"),
    Case("korean", "좋은 영화", notice=UNKNOWN, lang="en"),
    Case("combining-marks", "g\u0301o\u0302o\u0303d f\u0336i\u0336l\u0336m", lang="en"),
    Case("math-alphanumerics", "𝐠𝐨𝐨𝐝 𝕗𝕚𝕝𝕞", lang="en"),
    Case("integer", "42", notice=UNKNOWN, lang="en"),
    Case("float", "-3.14e10", lang="en"),
    Case("url", "https://example.com/a/b?q=good&x=<y>#frag", lang="en"),
    Case("email", "someone+tag@example.com", lang="en"),
    Case("path-traversal-text", "../../etc/passwd", lang="en"),
    Case("sql", "'; DROP TABLE reviews; --", lang="en"),
    Case("format-strings", "%s %d %n {0} {text} ${HOME} $(id) \\N{BULLET}", lang="en"),
    Case("crlf", "good\r\n\r\nfilm\n", lang="en"),
    Case("quotes-only", "\"\"\"'''``", lang="en"),
    Case("100kB", "the film is good but the plot is dull . " * 2500, notice=CUT, lang="en"),
    Case("5MB", "good film " * 500_000, notice=CUT, lang="en"),
    Case("word-x10000", "good " * 10_000, notice=f"first {MAX_WORDS} words", lang="en"),
    Case("at-occlusion-cap", "the film is not bad " * (OCCLUSION_MAX_WORDS // 5), lang="en"),
    Case(
        "past-occlusion-cap",
        "the film is not bad " * (OCCLUSION_MAX_WORDS // 5 + 1),
        notice="leave-one-word-out",
        lang="en",
    ),
    Case("zh-char-x10000", "好" * 10_000, notice=CUT, lang="zh"),
    Case("one-100k-word", "a" * 100_000, notice=CUT, lang="en"),
    Case("lone-surrogate-en", "good \ud800 film", either=True),
    Case("lone-low-surrogate", "\udcff", either=True),
    Case("lone-surrogate-zh", "很好\ud83d电影", either=True),
]
NOT_STRINGS = [None, 42, 3.5, True, b"good film", ["good", "film"], {"text": "good"}]
BAD_NAMES = [  # (model, task, lang, the InputError must match)
    ("no_such_model", None, None, "no_such_model.*not available"),
    ("../../etc/passwd", None, None, "etc/passwd.*not available"),
    ("DCNN", None, None, "not available"),
    ("", None, None, "not available"),
    ("dcnn", "no_such_task", None, "no model is loaded for task 'no_such_task'; available: sst2, sst5, zh_sentiment"),
    ("dcnn", "../sst5", None, "no model is loaded for task '../sst5'"),
    ("dcnn", "sst5/../../zh_sentiment", None, "no model is loaded"),
    ("dcnn", None, "fr", "unknown language 'fr'"),
    ("dcnn", None, "../en", "unknown language"),
    ("dcnn", 5, None, "task must be a string"),
    ("dcnn", ["sst5"], None, "task must be a string"),
    ("dcnn", None, ["en"], "lang must be a string"),
    ("all", None, None, "'all' is every model, not one: use compare"),
]


def cleaned(text: str) -> str:
    """What the predictor analyses: NULs read as spaces, then cut to MAX_CHARS (lone surrogates may become U+FFFD)."""
    return text.replace("\x00", " ")[:MAX_CHARS]


def check_prediction(p: dict, text: str, case: Case | None = None) -> None:
    """A sensible prediction, in its JSON form (Prediction.to_dict(), or the API's answer)."""
    p = json.loads(json.dumps(p, ensure_ascii=False).encode("utf-8"))  # as the CLI prints it, the API sends it
    probs, labels = p["probs"], p["labels"]
    assert len(probs) == len(labels) >= 2 and p["label"] in labels
    assert all(math.isfinite(q) and 0 <= q <= 1 for q in probs) and abs(sum(probs) - 1) < 1e-4
    analysed = p["text"]
    expected = cleaned(text)
    assert len(analysed) <= MAX_CHARS
    assert analysed in (expected[: len(analysed)], SURROGATE.sub("\ufffd", expected)[: len(analysed)])
    tokens = p["tokens"]
    assert 1 <= len(tokens) <= MAX_WORDS
    previous_end = 0
    for t in tokens:
        assert previous_end <= t["start"] < t["end"] <= len(analysed), (t, previous_end)
        assert analysed[t["start"] : t["end"]] == t["surface"] and t["text"]
        previous_end = t["end"]
    words = [t["text"] for t in tokens]
    curve = p["curve"]
    assert curve["words"] == words and curve["kind"] in ("native", "probe", "prefix")
    assert len(curve["probs"]) == len(curve["scores"]) == len(words)
    assert all(abs(sum(row) - 1) < 1e-4 for row in curve["probs"])
    assert all(math.isfinite(s) for s in curve["scores"])
    if len(words) > OCCLUSION_MAX_WORDS:  # leave-one-word-out is skipped for long texts, with a notice
        assert p["occlusion"] == [] and any("leave-one-word-out" in n for n in p["notices"])
    else:
        assert len(p["occlusion"]) == len(words) and all(math.isfinite(s) for s in p["occlusion"])
    assert all(isinstance(v, dict) and v.get("type") for v in p["views"])
    assert len(p["notice_codes"]) == len(p["notices"]) and all(n["code"] in NOTICE_TEXT for n in p["notice_codes"])
    if case is not None:
        if case.notice:
            assert any(re.search(case.notice, n) for n in p["notices"]), p["notices"]
        if case.lang:
            assert p["lang"] == case.lang


def check_message(message: str, pattern: str) -> None:
    """A clear message: one line of text, no stack trace, saying what was wrong."""
    assert message and "\n" not in message.strip() and "Traceback" not in message and 'File "' not in message
    assert re.search(pattern, message), message


def params(cases=CASES) -> list:
    return [pytest.param(c, id=c.id) for c in cases]


# -- the Python API -----------------------------------------------------------------------------------


def test_the_table_is_big_enough():
    assert len(CASES) >= 30 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", params())
def test_python_api(lab, case):
    start = time.perf_counter()
    if case.error:
        with pytest.raises(InputError) as info:
            lab.compare(case.text)
        check_message(str(info.value), case.error)
        with pytest.raises(InputError):
            lab.predict(case.text, "dcnn")
        return
    try:
        result = lab.compare(case.text)
    except InputError as err:
        assert case.either, f"unexpected InputError: {err}"
        check_message(str(err), ".")
        return
    assert [p.model for p in result.predictions] == PAPER_MODELS and not result.failures
    for p in result.predictions:
        check_prediction(p.to_dict(), case.text, case)
    assert time.perf_counter() - start < SECONDS


@pytest.mark.parametrize("value", NOT_STRINGS, ids=lambda v: type(v).__name__)
def test_non_string_text_is_refused(lab, value):
    for call in (lambda: lab.predict(value, "dcnn"), lambda: lab.compare(value)):
        with pytest.raises(InputError) as info:
            call()
        check_message(str(info.value), f"must be a string, got {type(value).__name__}")


@pytest.mark.parametrize("model,task,lang,error", BAD_NAMES)
def test_unknown_or_malicious_names_are_refused(lab, model, task, lang, error):
    with pytest.raises(InputError) as info:
        lab.predict("a good film", model, task=task, lang=lang)
    check_message(str(info.value), error)
    with pytest.raises(InputError) as info:
        lab.compare("a good film", task=task, lang=lang, models=[model])
    check_message(str(info.value), error)


@pytest.mark.parametrize("model", [["dcnn"], {"model": "dcnn"}], ids=["list", "dict"])
def test_unhashable_model_name_is_refused(lab, model):
    with pytest.raises(InputError, match="model must be a string"):
        lab.predict("a good film", model)


def test_language_and_task_mismatch_is_a_notice(lab):
    p = lab.predict("a good film", "dcnn", task="zh_sentiment")
    assert p.task == "zh_sentiment" and p.lang == "en" and p.task_lang == "zh"
    assert [n.code for n in p.notices][0] == "language_mismatch" and "looks English" in p.notices[0].format()
    p = lab.predict("这部电影很好", "dcnn", task=None, lang="en")  # the user forces English: analysed as English
    assert p.task == "sst5" and p.task_lang == "en" and p.lang == "zh"
    assert [n.code for n in p.notices][0] == "language_mismatch" and "looks Chinese" in p.notices[0].format()
    p = lab.predict("这部电影很好", "dcnn", task="auto", lang="auto")  # "auto" is the same as None
    assert p.task == "zh_sentiment" and p.lang == "zh"


def test_one_request_names_what_predict_compare_and_their_plans_take(lab):
    asked = Request("a good film", models=("dcnn",), task="sst5", methods="occlusion")
    one = lab.plan_predict(asked).run_here().predictions[0].to_dict()
    assert one == lab.plan_compare(asked).run_here().predictions[0].to_dict()
    assert one == lab.predict("a good film", "dcnn", task="sst5", methods="occlusion").to_dict()
    with pytest.raises(InputError, match="not one"):  # every model of the task: compare's
        lab.plan_predict(Request("a good film", task="sst5"))


def test_compare_runs_the_intervention_on_each_model_that_has_it(lab):
    compared = lab.compare("the film is not good", task="sst5", models=["dcnn"], intervention="max_pool")
    assert [p.intervention for p in compared.predictions] == ["max_pool"]
    with pytest.raises(InputError, match="has no intervention 'max_pool'"):  # the other models lack it
        lab.compare("the film is not good", task="sst5", intervention="max_pool")


def test_5mb_is_truncated_before_any_other_work(lab, monkeypatch):
    """The tokenizer and the language detector never see more than MAX_CHARS characters."""
    seen = []
    for name in ("tokenize", "detect_language"):
        original = getattr(predict_module, name)
        monkeypatch.setattr(
            predict_module, name, lambda text, *a, _f=original, **k: seen.append(len(text)) or _f(text, *a, **k)
        )
    text = ("good film \x00" * 500_000)[:5_000_000]
    start = time.perf_counter()
    p = lab.predict(text, "tensor_cnn")
    assert time.perf_counter() - start < SECONDS
    assert seen and max(seen) <= MAX_CHARS and any(CUT in n.format() for n in p.notices)
    check_prediction(p.to_dict(), text)


@pytest.mark.parametrize("model", PAPER_MODELS)
@pytest.mark.parametrize("words", [OCCLUSION_MAX_WORDS, 10_000])
def test_long_input_is_bounded_for_every_model(lab, model, words):
    """The costliest requests: occlusion at its cap (AdaSent's pyramid is cubic in it), and the word cap."""
    start = time.perf_counter()
    p = lab.predict("good " * words, model)
    assert len(p.tokens) == min(words, MAX_WORDS) and time.perf_counter() - start < SECONDS / 2


def test_the_lab_still_answers_after_the_table(lab):
    for text in ("It is not a bad film.", "这部电影不怎么好看"):
        for p in lab.compare(text).predictions:
            check_prediction(p.to_dict(), text)


# -- the CLI (python -m core.predict) -----------------------------------------------------------------


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse
        code = exit_.code
    out, err = capsys.readouterr()
    out.encode("utf-8"), err.encode("utf-8")  # a real terminal or pipe would have to take it
    return code, out, err


def use_loaded_lab(monkeypatch, lab: Lab, lab_root: Path) -> None:
    """main() loads its checkpoints on every call; hand it the module's Lab for `lab_root` instead."""
    load = Lab.load
    monkeypatch.setattr(
        Lab,
        "load",
        classmethod(lambda cls, root=None, *a, **k: lab if root and Path(root) == lab_root else load(root, *a, **k)),
    )


@pytest.mark.parametrize("case", params())
def test_cli(lab, lab_root, case, monkeypatch, capsys):
    """main() in-process (argv cannot carry NUL or 5 MB); the checkpoints are loaded once."""
    use_loaded_lab(monkeypatch, lab, lab_root)
    options = ["--model", "dcnn", "--checkpoints", str(lab_root), "--"]  # "--": a text may start with "-"
    code, out, err = run_cli(["--json", *options, case.text], capsys)
    if case.error or code == 2:
        assert code == 2 and err.startswith("error: ") and not out, (code, err)
        check_message(err[len("error: ") :], case.error or ".")
        assert case.error or case.either
        return
    assert code == 0 and not err, err
    (p,) = json.loads(out)
    check_prediction(p, case.text, case)
    code, out, err = run_cli([*options, case.text], capsys)  # the plain-text output too
    assert code == 0 and p["label"] in out


def test_cli_names(lab, lab_root, monkeypatch, capsys):
    use_loaded_lab(monkeypatch, lab, lab_root)
    for args, error in (
        (["--model", "../../etc/passwd"], "not available"),
        (["--task", "../sst5"], "no model is loaded"),
        (["--checkpoints", "/nonexistent/../etc"], "/nonexistent/../etc does not exist"),
    ):
        argv = ["a good film", "--checkpoints", str(lab_root), *args]
        code, out, err = run_cli(argv, capsys)
        assert code == 2 and not out
        check_message(err, error)
    code, out, err = run_cli(["a good film", "--lang", "fr", "--checkpoints", str(lab_root)], capsys)
    assert code == 2 and "invalid choice" in err and "Traceback" not in err


def test_cli_all_models_is_compare(lab, lab_root, monkeypatch, capsys):
    use_loaded_lab(monkeypatch, lab, lab_root)
    code, out, err = run_cli(["这部电影不怎么好看", "--model", "all", "--json", "--checkpoints", str(lab_root)], capsys)
    assert code == 0 and not err
    assert (
        [p["model"] for p in json.loads(out)]
        == [p.model for p in lab.compare("这部电影不怎么好看").predictions]
        == PAPER_MODELS
    )


def test_cli_process_with_bytes_that_are_not_utf8(lab_root):
    """A real process: the shell passes bytes, Python decodes them with surrogateescape."""
    argv = [
        sys.executable,
        "-m",
        "core.predict",
        b"good \xff\xfe film",
        "--model",
        "dcnn",
        "--json",
        "--checkpoints",
        lab_root,
    ]
    done = subprocess.run(argv, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, cwd=ROOT, timeout=120)
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-400:]
    assert done.returncode in (0, 2)
