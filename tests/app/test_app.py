"""The Gradio lab through its API (gradio_client against a launched app) and its callbacks.

Checkpoints are tiny models trained here for one epoch (tests/lab_fixture.py): sst5 and zh_sentiment
with every paper model, sst2 with two.
"""

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from gradio_client.exceptions import AppError

from core.models import PAPER_MODELS
from core.notices import InputError, Notice
from core.predict import Lab
from demo import build_demo
from demo.i18n import notice_text, request_lang
from demo.lab_analysis import analyse as analyse_with
from demo.lab_html import attribution_html
from demo.tabs.checkpoints import facts
from demo.ui import banner
from service.lab import ServedLab
from service.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
EN, ZH = "It is not a bad film, but the plot is dull.", "这部电影不怎么好看，但是演员很棒"


def _error(client, *args, api_name) -> str:
    with pytest.raises(AppError) as info:
        client.predict(*args, api_name=api_name)
    message = str(info.value)
    assert "Traceback" not in message and 'File "' not in message
    return message


# -- the front end holds no model logic -----------------------------------------------------------------


def test_front_end_never_checks_input():
    """demo/ holds no input checks of its own (core.predict makes them all; tests/unit/test_architecture.py
    keeps torch out of it)."""
    for path in sorted((ROOT / "demo").rglob("*.py")) + [ROOT / "app.py"]:
        source = path.read_text(encoding="utf-8")
        for check in ("detect_language", "text.strip()", "isinstance(text", "InputError("):
            assert check not in source, f"{path} checks the input itself ({check})"


def test_app_py_is_small_and_honours_lab_checkpoints(lab_root, monkeypatch):
    assert len((ROOT / "app.py").read_text().splitlines()) <= 40
    monkeypatch.setenv("LAB_CHECKPOINTS", str(lab_root))
    monkeypatch.syspath_prepend(str(ROOT))
    import importlib

    import app

    app = importlib.reload(app)
    assert app.ROOT == str(lab_root) and set(app.lab.tasks()) == {"sst2", "sst5", "zh_sentiment"}


# app.py imported in a process of its own, every Settings.load counted (an import-time read happens only once)
COUNT_READS = (
    "from service.settings import Settings; load, reads = Settings.load, []; "
    "Settings.load = lambda **given: reads.append(given) or load(**given); "
    "import app; print('settings read', len(reads))"
)


def test_app_py_reads_the_settings_once(lab_root):
    """app.py's Settings.at_start is what the app is built with: importing the front end, choosing the model
    worker and building the page read the environment again nowhere."""
    env = {**os.environ, "LAB_CHECKPOINTS": str(lab_root)}
    done = subprocess.run(
        [sys.executable, "-c", COUNT_READS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert "settings read 1" in done.stdout, done.stderr[-3000:]


# -- the API ------------------------------------------------------------------------------------------


def test_named_endpoints(client):
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert set(endpoints) == {
        "/predict",
        "/compare",
        "/probes",
        "/treebank",
        "/dataset",
        "/train",
        "/train_status",
        "/train_cancel",
        "/interventions",
        "/owner",
    }  # UI events are private


def test_the_api_page_names_and_describes_every_parameter(client):
    """Each parameter of the gr.api endpoints by its name and its docstring's line (web/endpoints.py), not
    "the 1st Api component" and nothing more; what the page draws is /info, its code snippets included."""
    endpoints = httpx.get(f"{client.src}gradio_api/info", timeout=30).json()["named_endpoints"]
    for name, info in endpoints.items():  # every one: a tab's component would show its translated label as
        for parameter in info["parameters"]:  # "[object Object]" and its empty choices as the type Literal[]
            assert parameter["label"] == parameter["parameter_name"], (name, parameter["label"])
            assert len(parameter["python_type"]["description"]) > 15, (name, parameter["parameter_name"])
            assert parameter["python_type"]["type"] != "Literal[]", (name, parameter["parameter_name"])
    text = endpoints["/predict"]["parameters"][0]["python_type"]["description"]
    assert text.startswith("the sentence to classify"), text
    upload = endpoints["/train"]["parameters"][0]
    assert upload["python_type"]["type"] == "filepath" and upload["example_input"]["url"] == "reviews.csv", upload
    assert "handle_file('reviews.csv')" in endpoints["/train"]["code_snippets"]["python"]  # not Gradio's sample PDF


def test_train_takes_only_an_upload(client):
    """/train reads a file this app received (handle_file, or /gradio_api/upload and its FileData); a bare path
    or a dict without the FileData mark (which Gradio passes on unchecked) is no file; a marked path outside the
    upload folder Gradio refuses itself."""

    def answer(file) -> str:
        posted = httpx.post(f"{client.src}gradio_api/call/train", json={"data": [file]}, timeout=30).json()
        return httpx.get(f"{client.src}gradio_api/call/train/{posted['event_id']}", timeout=30).text

    marked = {"meta": {"_type": "gradio.FileData"}}
    for file in ("/etc/passwd", {"path": "/etc/passwd"}, {"path": "/etc/passwd", "meta": {"_type": "x"}}):
        assert "choose a CSV, TSV or JSONL file" in answer(file), file
    refused = answer({"path": "/etc/passwd", **marked})
    assert "event: error" in refused and "root:" not in refused, refused


def test_predict_english(client, lab):
    result = client.predict(EN, "tensor_cnn", "auto", "auto", api_name="/predict")
    assert (
        result["model"] == "tensor_cnn" and result["task"] == "sst5" and result["lang"] == result["task_lang"] == "en"
    )
    assert result["label"] in result["labels"] and len(result["probs"]) == 5
    assert abs(sum(result["probs"]) - 1) < 1e-4
    words = [t["text"] for t in result["tokens"]]
    assert result["curve"]["words"] == words and result["curve"]["kind"] == "native"
    assert len(result["occlusion"]) == len(words) and result["source"]
    assert [v["type"] for v in result["views"]] == ["LineCurves"]
    json.dumps(result)


@pytest.mark.parametrize("model", PAPER_MODELS)
def test_predict_every_model(client, model):
    result = client.predict("the film is not good", model, api_name="/predict")
    assert result["model"] == model and result["views"], f"{model} returned no views"
    assert result["curve"]["kind"] == {"tensor_cnn": "native", "mrnn": "native", "adasent": "probe"}.get(
        model, "prefix"
    )


def test_compare_english_and_chinese(client, lab):
    english = client.predict(EN, "auto", "auto", api_name="/compare")
    assert [p["model"] for p in english] == lab.models("sst5") == PAPER_MODELS
    chinese = client.predict(ZH, "auto", "auto", api_name="/compare")
    assert {p["task"] for p in chinese} == {"zh_sentiment"} and {p["lang"] for p in chinese} == {"zh"}
    assert chinese[0]["labels"] == ["negative", "positive"]
    assert "".join(t["surface"] for t in chinese[0]["tokens"]) == ZH  # jieba words cover the text


def test_task_and_language_choice(client):
    binary = client.predict("a good film", "sst2", "auto", api_name="/compare")
    assert [p["model"] for p in binary] == ["tensor_cnn", "dcnn"] and len(binary[0]["labels"]) == 2
    forced = client.predict(ZH, "tensor_cnn", "auto", "en", api_name="/predict")  # override: analyse as English
    assert forced["task"] == "sst5" and forced["task_lang"] == "en" and forced["lang"] == "zh"
    assert any("looks Chinese but task sst5 is English" in n for n in forced["notices"])
    mismatch = client.predict("a good film", "dcnn", "zh_sentiment", "auto", api_name="/predict")
    assert any("looks English" in n for n in mismatch["notices"])  # the English words, and the same as data:
    assert {
        "code": "language_mismatch",
        "params": {"text_lang": "en", "task": "zh_sentiment", "task_lang": "zh"},
    } in mismatch["notice_codes"]
    assert mismatch["lang"] == "en" and mismatch["task_lang"] == "zh"  # the text's language, and the task's


def test_bad_input_gives_clear_messages(client):
    for empty in ("", "   \n\t "):
        assert "empty" in _error(client, empty, "dcnn", api_name="/predict")
        assert "empty" in _error(client, empty, api_name="/compare")
    assert "not available" in _error(client, EN, "no_such_model", api_name="/predict")
    assert "/compare" in _error(client, EN, "all", api_name="/predict")
    assert "no model is loaded for task 'no_such_task'" in _error(
        client, EN, "no_such_task", "auto", api_name="/compare"
    )
    assert "unknown language" in _error(client, EN, "auto", "fr", api_name="/compare")
    assert "unknown language" in _error(client, EN, "dcnn", "auto", "fr", api_name="/predict")


def test_odd_input_is_answered_with_notices(client):
    for odd in ("?!...", "😀😀😀", "zzqx blorf"):
        result = client.predict(odd, "dcnn", api_name="/predict")
        assert any("vocabulary" in n or "unknown" in n for n in result["notices"]), odd
    huge = client.predict("good " * 3000, "agt", api_name="/predict")
    assert any("cut" in n for n in huge["notices"]) and len(huge["text"]) <= 5000


def test_html_is_data_not_markup(client, lab):
    text = '<script>alert("x")</script> <b>good</b> film'
    result = client.predict(text, "mrnn", api_name="/predict")
    assert result["text"] == text  # returned as the text typed, nothing stripped or run
    summary, _, result = analyse(lab, text, "mrnn", "auto", "auto", "en")
    highlight = attribution_html(lab.predict(text, "mrnn"), "en")
    assert (
        html.unescape(re.sub(r"<[^>]+>", "", highlight.split('class="occlusion-text">')[1].split("</div>")[0])) == text
    )
    assert "<script" not in summary and "<b>" not in summary and "<script" not in result and "<b>good" not in result


# -- the UI callbacks (English and Chinese) ---------------------------------------------------------


def analyse(lab, *args):
    return analyse_with(lab, facts(lab), *args)


def _panels(result: str) -> list[str]:
    return re.findall(r'class="model-panel" open data-model="(\w+)"', result)


def test_ui_all_five_english(lab):
    summary, notices, result = analyse(lab, EN, "all", "auto", "auto", "en")
    assert summary.startswith("### Majority label") and "English (detected)" in summary
    table = result.split('<table id="comparison"')[1].split("</table>")[0]
    assert "<th>model</th><th>label</th>" in table and table.count("<tr>") == 6  # the head and 5 models
    curve = result.split('data-name="curve"')[1].split("</figure>")[0]
    assert curve.count("<polyline") == 5 and all(k in curve for k in ("(native:", "(probe:", "(prefix:"))
    assert _panels(result) == PAPER_MODELS  # the order of /compare and the CLI
    assert "test accuracy" in result and "sha256" in result
    assert notices["visible"] and "unknown" in notices["value"]


def test_ui_single_model_chinese(lab):
    summary, _, result = analyse(lab, ZH, "adasent", "auto", "auto", "zh")
    assert summary.startswith("### 预测") and "中文情感（二分类）" in summary and "自动识别" in summary
    assert 'id="comparison"' not in result and _panels(result) == ["adasent"]
    probs = result.split('data-name="probabilities"')[1].split("</figure>")[0]
    assert probs.count("</title></rect>") == 2 and ">负面<" in probs and ">正面<" in probs
    assert "探针" in result.split('data-name="curve"')[1].split("</figure>")[0]  # AdaSent's curve is a probe
    assert "未登录词" in attribution_html(lab.predict(ZH, "adasent"), "zh")


@pytest.mark.filterwarnings("ignore::UserWarning")  # gr.Warning outside a request warns
def test_ui_bad_input_is_a_message_not_a_trace(lab):
    for text, model, lang, ui, expected in (
        ("  ", "all", "auto", "en", "empty"),
        ("", "all", "auto", "zh", "文本为空"),
        (EN, "nope", "auto", "en", "not available"),
        (EN, "nope", "auto", "zh", "模型 nope 不支持任务 sst5"),
        (None, "dcnn", "auto", "zh", "text 必须是字符串"),
        (EN, "all", "fr", "zh", "未知语言 'fr'"),
    ):
        summary, notices, result = analyse(lab, text, model, "auto", lang, ui)
        assert expected in summary and "Traceback" not in summary
        assert result == "" and not notices["visible"]


def test_unknown_words_are_marked_unknown(lab):
    highlight = attribution_html(lab.predict("the film is zzqx", "dcnn"), "en")
    unknown = r'<mark class="unknown" style="background:#c8c8c8;color:#111111" title="unknown word \([^)]*\)">'
    assert re.search(unknown + "zzqx</mark>", highlight)


def test_messages_follow_the_browser_language():
    class Request:
        def __init__(self):
            self.headers = {"accept-language": "zh-CN,zh;q=0.9,en;q=0.8"}

    assert request_lang(Request()) == "zh" and request_lang(None) == "en"
    cut = Notice("words_cut", {"max_words": 300})
    assert (
        notice_text(cut, "zh") == "只分析了前 300 个词。"
        and notice_text(cut, "en") == "Only the first 300 words were analysed."
    )
    mismatch = Notice("language_mismatch", {"text_lang": "en", "task": "zh_sentiment", "task_lang": "zh"})
    assert notice_text(mismatch, "zh").startswith("文本看起来是英文，但任务 zh_sentiment 是中文的")
    assert notice_text(mismatch, "en").startswith("The text looks English but task zh_sentiment is Chinese")
    error = InputError("unknown_model", model="x", task="sst5", available=["dcnn", "agt"])
    assert notice_text(error, "zh") == "模型 x 不支持任务 sst5；可用模型：dcnn, agt" and "available: dcnn, agt" in str(
        error
    )


def test_broken_checkpoint_is_reported_and_others_serve(lab_root, tmp_path):
    """The app's loader checks each file against the manifest: a changed weights file is refused by its sha256."""
    root = shutil.copytree(lab_root, tmp_path / "checkpoints")
    (root / "sst5" / "dcnn" / "model.safetensors").write_bytes(b"not weights")
    lab = ServedLab.load(root)
    assert list(lab.errors) == ["sst5/dcnn"] and "sha256" in lab.errors["sst5/dcnn"]
    assert "dcnn" not in lab.models("sst5") and "dcnn" in lab.models("zh_sentiment")
    text = banner(lab, str(root), "en")
    assert "could not be loaded" in text and "dcnn" in text
    *_, result = analyse(lab, EN, "all", "auto", "auto", "en")
    assert _panels(result) == [m for m in PAPER_MODELS if m != "dcnn"]


def test_a_checkpoint_in_the_wrong_folder_is_refused(lab_root, tmp_path):
    root = tmp_path / "checkpoints"
    shutil.copytree(lab_root / "sst5" / "dcnn", root / "sst5" / "agt")  # a DCNN where the AGT should be
    lab = Lab.load(root)
    assert not lab.checkpoints and "sits in sst5/agt" in lab.errors["sst5/agt"]


def test_a_model_that_breaks_is_reported_and_the_others_answer(lab_root, monkeypatch):
    lab = ServedLab.load(lab_root)
    broken = lab.checkpoints[("sst5", "mrnn")].model
    monkeypatch.setattr(broken, "forward", lambda *a, **k: 1 / 0)
    summary, notices, result = analyse(lab, EN, "all", "auto", "auto", "zh")
    assert _panels(result) == [m for m in PAPER_MODELS if m != "mrnn"]
    assert (
        "mRNN" in notices["value"]
        and "处理这段输入时出错" in notices["value"]
        and "ZeroDivisionError" in notices["value"]
    )


def test_an_empty_lab_still_builds_a_page(tmp_path):
    empty = ServedLab.load(tmp_path / "empty")
    assert "No checkpoints" in banner(empty, "x", "en")
    build_demo(empty, "checkpoints", Settings.load())
    with pytest.raises(InputError, match="no checkpoint is loaded at all"):
        empty.compare(EN)


def test_the_sst_trees_are_parsed_in_the_warm_up_not_in_the_first_request(lab, monkeypatch):
    """web/runner.py on_warm_up: the Treebank tab's trees load after the models in warm_up's thread (a busy
    hall's first /treebank request held every other request while they were parsed), then the tab's first tree
    is kept (first_tree)."""
    from demo.tabs.treebank import first_tree
    from demo.treebank_outputs import Trees
    from web import runner

    demo = build_demo(lab, "checkpoints", Settings.load())
    tree_loads = (lambda load: getattr(load, "__wrapped__", None) == Trees.load, lambda load: load.func is first_tree)
    loads = [load for load in runner._WARM_UPS[demo] if any(found(load) for found in tree_loads)]
    assert len(loads) == 2 and all(found(load) for found, load in zip(tree_loads, loads))
    monkeypatch.setitem(runner._WARM_UPS, demo, loads)  # the trees alone (the Probes tab's suites: test_probes_kept)
    monkeypatch.setattr(runner, "Lab", lambda *args: Lab({}, {}))  # no model to touch: only the tabs' loads
    monkeypatch.setattr(runner.WORKER, "models", runner.WORKER.models)  # as it was, after
    runner.warm_up(lab, demo)
    assert loads[0].cache_info().currsize == 1  # parsed: the tab's requests read it from the cache
