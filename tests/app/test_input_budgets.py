"""Work budgets on what a visitor sends: a training file, their own probe cases, a job id. Each hostile input
is refused early (before the whole of it is parsed) with one clear line in English and in Chinese, never
Gradio's null error or a traceback in the log."""

import json

import pytest
from gradio_client import handle_file

from core.analysis.probes import (
    MAX_CASE_CHARS,
    MAX_CASE_WORDS,
    MAX_USER_CASES,
    ProbeInputError,
    read_cases_file,
    run_text_cases,
)
from core.data.user import MAX_CELL_CHARS, MAX_NAME_CHARS, UserDataError, read_rows
from core.predict import MAX_WORDS
from demo.i18n import CODES, notice_text
from demo.tabs.probes import run_user_cases
from demo.tabs.train import file_summary
from service.jobs import JobError, TrainLimits, TrainRequest, job_status, list_jobs, submit_job

CELL = "x" * (MAX_CELL_CHARS + 10)
GOOD = "".join(f"{'a fine film' if i % 2 else 'a dull film'},{i % 2}\n" for i in range(20))


def hostile_files() -> dict[str, tuple[str, str, str]]:
    """name -> (file name, content, the code it must be refused with)."""
    return {
        "a CSV cell over the csv limit": ("cell.csv", "text,label\n" + GOOD + CELL + ",1\n", "long_cell"),
        "a TSV cell over the csv limit": ("cell.tsv", "text\tlabel\n" + CELL + "\t1\n", "long_cell"),
        "a JSONL line over the cell limit": ("line.jsonl", json.dumps({"text": CELL, "label": 1}) + "\n", "long_cell"),
        "JSONL nested 100,000 deep": ("deep100k.jsonl", "[" * 100_000 + "]" * 100_000 + "\n", "long_cell"),
        "JSONL nested 50,000 deep": ("deep.jsonl", '{"text": ' + "[" * 50_000 + "]" * 50_000 + "}\n", "too_deep"),
        "a 100 KB label": ("label.csv", "text,label\n" + GOOD + "a film," + "L" * 100_000 + "\n", "long_label"),
        "a 100 KB column name": ("name.csv", "text," + "N" * 100_000 + "\n" + GOOD, "long_name"),
        "5,000 columns": ("wide.csv", ",".join(f"c{i}" for i in range(5000)) + "\n" + GOOD, "too_many_columns"),
        "1,000,000 rows": ("big.csv", "text,label\n" + "a,1\n" * 1_000_000, "too_many_rows"),  # 4 MB: within the bytes
    }


def one_line(text: str) -> bool:
    return "\n" not in text.strip() and 0 < len(text) < 400 and "{" not in text and "Traceback" not in text


@pytest.mark.parametrize("name", list(hostile_files()))
def test_each_hostile_training_file_is_one_clear_line_in_both_languages(tmp_path, name):
    file_name, content, code = hostile_files()[name]
    path = tmp_path / file_name
    path.write_text(content, encoding="utf-8")
    limits = TrainLimits()
    with pytest.raises(UserDataError) as err:
        read_rows(path, max_bytes=limits.max_bytes, max_rows=limits.max_rows)
    assert err.value.code == code and code in CODES["zh"]["user_data"]
    english, chinese = str(err.value), notice_text(err.value, "zh")
    assert one_line(english) and one_line(chinese) and english != chinese
    for ui in ("en", "zh"):  # the Train tab's summary of the upload
        summary = file_summary(str(path), "", "", limits, ui)[0]
        assert summary.startswith("❌") and one_line(summary)
    with pytest.raises(UserDataError):
        submit_job(TrainRequest(path, "dcnn"), root=tmp_path / "um", limits=limits)
    assert list_jobs(tmp_path / "um") == []


def test_rows_are_counted_while_reading_and_the_reading_stops_at_the_limit(tmp_path):
    # past the row limit comes something that would be refused for itself: the file is refused for its rows,
    # so what lies past the limit was never read
    csv_path = tmp_path / "many.csv"
    csv_path.write_text("text,label\n" + "a film,1\n" * 101 + "x" * (MAX_CELL_CHARS + 10) + ",1\n", encoding="utf-8")
    jsonl_path = tmp_path / "many.jsonl"
    jsonl_path.write_text('{"text": "a film", "label": "1"}\n' * 101 + "not json\n", encoding="utf-8")
    for path in (csv_path, jsonl_path):
        with pytest.raises(UserDataError) as err:
            read_rows(path, max_rows=100)
        assert err.value.code == "too_many_rows"
        with pytest.raises(UserDataError) as err:
            read_rows(path)  # with no limit the whole file is read, up to its bad row
        assert err.value.code in ("long_cell", "bad_json")


def test_labels_and_column_names_at_the_cap_are_taken(tmp_path):
    path = tmp_path / "ok.csv"
    label = "L" * MAX_NAME_CHARS
    rows = "".join(f"film {i},{label if i % 2 else 'b'}\n" for i in range(20))
    path.write_text("text," + "N" * MAX_NAME_CHARS + "\n" + rows, encoding="utf-8")
    assert sorted(read_rows(path).label_names) == sorted([label, "b"])


def test_a_long_job_id_is_refused_before_it_reaches_the_disk_or_a_message(tmp_path):
    for job_id in ("2" * 300, "x" * 900_000, "../jobs", "a/b", ".hidden", ""):
        with pytest.raises(JobError) as err:
            job_status(job_id, tmp_path)
        assert err.value.code == "unknown_job" and len(str(err.value)) < 100


def test_hostile_inputs_through_the_api_answer_one_line_and_log_no_traceback(client, tmp_path, capfd):
    for name, (file_name, content, _code) in hostile_files().items():
        path = tmp_path / file_name
        path.write_text(content, encoding="utf-8")
        with pytest.raises(Exception) as err:
            client.predict(handle_file(str(path)), "dcnn", "", "", 1, api_name="/train")
        assert one_line(str(err.value)) and "None" not in str(err.value), (name, str(err.value))
    long_id = "7" * 300
    for endpoint in ("/train_status", "/train_cancel"):
        with pytest.raises(Exception) as err:
            client.predict(long_id, api_name=endpoint)
        assert "there is no training job" in str(err.value) and long_id not in str(err.value)
    log = capfd.readouterr()
    assert "Traceback" not in log.out + log.err and long_id not in log.out + log.err


# -- own probe cases ---------------------------------------------------------------------------------------


def probe_case_inputs(tmp_path) -> dict[str, tuple[str, str | None, str]]:
    """name -> (typed cases, an uploaded file or None, the code they must be refused with)."""
    cell = tmp_path / "cell.csv"
    cell.write_text("a good film,positive\n" + '"' + "w" * (MAX_CELL_CHARS + 10) + '",positive\n', encoding="utf-8")
    large = tmp_path / "large.tsv"
    large.write_text("a good film\tpositive\n" * 100_000, encoding="utf-8")
    long_words = " ".join(["good"] * 3000)
    return {
        "8 cases of 3,000 words": ("\n".join(f"{long_words}\tpositive" for _ in range(8)), None, "long_sentence"),
        f"a sentence of {MAX_WORDS + 1} words": (" ".join(["ok"] * (MAX_WORDS + 1)) + "\tpositive", None, "long_case"),
        "more words than the budget": (
            "\n".join(
                f"{i} " + " ".join(["fine"] * (MAX_WORDS - 1)) + "\tpositive"
                for i in range(MAX_CASE_WORDS // MAX_WORDS + 1)
            ),
            None,
            "too_many_words",
        ),
        "too many cases": ("\n".join(f"film {i}\tpositive" for i in range(MAX_USER_CASES + 1)), None, "too_many_cases"),
        "a CSV upload with a cell over the csv limit": ("", str(cell), "long_cell"),
        "an upload larger than any allowed cases": ("", str(large), "file_too_large"),
    }


def test_each_hostile_probe_input_is_one_clear_line_in_both_languages(lab, tmp_path):
    assert MAX_CASE_CHARS < len(" ".join(["good"] * 3000))
    for name, (text, upload, code) in probe_case_inputs(tmp_path).items():
        with pytest.raises(ProbeInputError) as err:
            run_text_cases(lab, text + (read_cases_file(upload) if upload else ""), "sst5")
        assert err.value.code == code and code in CODES["zh"]["probes"], name
        english, chinese = notice_text(err.value, "en"), notice_text(err.value, "zh")
        assert one_line(english) and one_line(chinese) and english != chinese
        for ui in ("en", "zh"):  # the Probes tab's "Run my cases"
            summary = run_user_cases(lab, text, upload, "en", "sst5", ui)[0]
            assert summary.startswith("⚠️") and one_line(summary), (name, summary)
