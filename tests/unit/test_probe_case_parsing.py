"""Typed probe cases (core.analysis.probes.parse_user_cases): commas as well as tabs between the columns, CSV
quotes around a sentence that holds commas, and the same one-line refusals for a bad line as before."""

import pytest

from core.analysis.probes import MAX_CASE_CHARS, ProbeInputError, parse_user_cases
from demo.i18n import notice_text

SST5 = ["very negative", "negative", "neutral", "positive", "very positive"]


def _cases(text: str) -> list[tuple]:
    return [(c.type, c.text, c.variant, c.expect) for c in parse_user_cases(text, SST5, "sst5")]


def test_commas_read_as_tabs_do():
    typed = "A fine film.,positive\nGood.,Not good.,down\nOk.,Ok!,same"
    assert (
        _cases(typed)
        == _cases(typed.replace(",", "\t"))
        == [
            ("mft", "A fine film.", "", "positive"),
            ("dir", "Good.", "Not good.", "down"),
            ("inv", "Ok.", "Ok!", ""),
        ]
    )


def test_spaces_after_commas_and_expectations_as_typed():
    assert _cases("A fine film. , Very Positive\nA dull one.,  not positive") == [
        ("mft", "A fine film.", "", "very positive"),
        ("mft", "A dull one.", "", "not_positive"),
    ]


def test_quoted_sentences_keep_their_commas_and_quotes():
    assert _cases('"Slow, but moving",positive\n"Good, really","Bad, really",down\n"He said ""fine""",neutral') == [
        ("mft", "Slow, but moving", "", "positive"),
        ("dir", "Good, really", "Bad, really", "down"),
        ("mft", 'He said "fine"', "", "neutral"),
    ]


def test_an_unquoted_sentence_with_commas_before_an_expectation_needs_no_quotes():
    assert _cases("The acting is great, but the plot is not good.,negative") == [
        ("mft", "The acting is great, but the plot is not good.", "", "negative")
    ]


def test_a_tab_line_splits_at_tabs_only():
    assert _cases("Slow, but moving\tpositive") == [("mft", "Slow, but moving", "", "positive")]


@pytest.mark.parametrize(
    ("text", "code", "params"),
    [
        ("only one column", "bad_columns", {"line": 1, "found": 1}),
        ("fine,positive\n,positive", "bad_columns", {"line": 2, "found": 1}),
        ("a, b, c, d, up", "bad_columns", {"line": 1, "found": 5}),
        ("a,glorious", "bad_expectation", {"line": 1, "value": "glorious"}),
        ('"a, b",glorious', "bad_expectation", {"line": 1, "value": "glorious"}),
        ("a,b,sideways", "bad_direction", {"line": 1, "value": "sideways"}),
        ("# a comment\n\n", "no_cases", {}),
        ("x" * (MAX_CASE_CHARS + 1) + ",positive", "long_sentence", {"line": 1, "chars": MAX_CASE_CHARS + 1}),
        ("x" * (4 * MAX_CASE_CHARS) + ",positive", "long_sentence", {"line": 1}),
    ],
)
def test_a_bad_line_is_one_clear_line_in_english_and_chinese(text, code, params):
    with pytest.raises(ProbeInputError) as info:
        parse_user_cases(text, SST5, "sst5")
    notice = info.value.notice
    assert notice.code == code and params.items() <= notice.params.items()
    for ui in ("en", "zh"):
        words = notice_text(info.value, ui)
        assert words and "\n" not in words and "{" not in words
    if code == "bad_columns":
        assert "commas" in notice_text(info.value, "en") and "逗号" in notice_text(info.value, "zh")


def test_a_line_with_an_unclosed_quote_is_one_column():
    with pytest.raises(ProbeInputError) as info:
        parse_user_cases('"Slow, but moving,positive', SST5, "sst5")
    assert info.value.notice.code == "bad_columns"
