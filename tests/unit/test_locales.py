"""The page's words (demo/locales/en.toml, zh.toml, read by demo/i18n.py): both languages have the same keys with
the same {placeholders}, core's every coded message is worded in Chinese with core's parameters, and a key
written twice or a placeholder missing in one language fails here, not on a user's page."""

import re
import string

import pytest

from core.data import PROJECT_ROOT
from demo.i18n import CODES, CORE_TEXT, I18N, PAGE, TEXT, TRADITIONAL, load_locale, notice_text, request_lang, t

CHINESE = re.compile("[\u4e00-\u9fff]")


def fields(template: str) -> set[str]:
    """The names of a template's placeholders ("{n} of {total:.1%}" -> {"n", "total"})."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def test_both_languages_have_the_same_keys_and_placeholders():
    assert TEXT["en"].keys() == TEXT["zh"].keys() and PAGE["en"].keys() == PAGE["zh"].keys()
    for key, english in TEXT["en"].items():
        assert fields(english) == fields(TEXT["zh"][key]), key


def test_every_core_code_has_its_chinese_with_the_same_parameters():
    assert CODES["en"] == CORE_TEXT  # the rule: core's English is the English locale of its codes
    assert CODES["zh"].keys() == CORE_TEXT.keys()
    for table, english in CORE_TEXT.items():
        assert CODES["zh"][table].keys() == english.keys(), table
        for code, words in english.items():
            chinese = CODES["zh"][table][code]
            assert fields(words) == fields(chinese), (table, code)
            if table != "view":  # a view's text may be a formula, P({label}), the same in both languages
                assert not CHINESE.search(words) and CHINESE.search(chinese), (table, code)


def test_t_fills_in_the_placeholders_in_the_chosen_language():
    assert t("tb_hits", "en", n=3) == "3 sentences found" and t("tb_hits", "zh", n=3) == "找到 3 个句子"
    assert t("tab_lab", "zh") == "实验室"  # a page label is a key of t too
    with pytest.raises(KeyError):
        t("no_such_key", "en")


def test_a_refusal_is_worded_by_its_own_core_table():
    """Codes repeat across core's tables ('unknown_model' is in four): each error is worded from its class's."""
    from core.analysis.probes import ProbeInputError
    from core.analysis.treebank import TreebankError
    from core.notices import InputError

    errors = {
        "模型 x 不支持任务 sst5；可用模型：dcnn": InputError(
            "unknown_model", model="x", task="sst5", available=["dcnn"]
        ),
        "模型 x 没有为任务 sst5 加载；可用模型：dcnn。": ProbeInputError(
            "unknown_model", model="x", task="sst5", available="dcnn"
        ),
        "模型 'x' 没有为任务 'sst5' 加载；可用模型：dcnn": TreebankError(
            "unknown_model", model="x", task="sst5", available="dcnn"
        ),
    }
    for chinese, err in errors.items():
        assert notice_text(err, "zh") == chinese and notice_text(err, "en") == str(err)


def test_gradio_gets_the_page_labels_only():
    """Callback text holds {placeholders} that Gradio's front end would read as its own message syntax."""
    assert I18N.translations["en"] == PAGE["en"] and I18N.translations["zh"] == PAGE["zh"]
    assert not any("{" in words for words in PAGE["en"].values())


def test_traditional_chinese_is_converted_from_the_simplified_words():
    class Request:
        def __init__(self, accept: str):
            self.headers = {"accept-language": accept}

    asked = {
        "zh-TW,zh;q=0.9": "zh-TW",
        "zh-Hant": "zh-TW",
        "zh-HK": "zh-HK",
        "zh-MO": "zh-HK",
        "zh-CN,zh": "zh",
        "zh": "zh",
        "en-US,zh;q=0.5": "en",
    }
    assert {accept: request_lang(Request(accept)) for accept in asked} == asked
    for lang in TRADITIONAL:
        assert TEXT[lang].keys() == TEXT["zh"].keys()
        for key, words in TEXT[lang].items():
            assert fields(words) == fields(TEXT["zh"][key]), (lang, key)
        assert CODES[lang]["notice"]["empty"] == "請輸入一句話：文本為空。"
    assert t("tab_lab", "zh-TW") == "實驗室" and t("tb_hits", "zh-HK", n=2) == "找到 2 個句子"
    assert I18N.translations["zh-TW"]["tab_lab"] == "實驗室"


def test_a_key_in_two_tabs_is_refused(tmp_path, monkeypatch):
    (tmp_path / "xx.toml").write_text('[lab.page]\nrun = "Run"\n\n[train.text]\nrun = "Go"\n', encoding="utf-8")
    monkeypatch.setattr("demo.i18n.LOCALES", tmp_path)
    with pytest.raises(ValueError, match="'run' is in two tabs"):
        load_locale("xx")


# Taiwan's words for what the page says (OpenCC s2twp), against the mainland's ones a character-by-character
# conversion keeps; 幹 is vulgar in Taiwan, where 干预 is 干預
TAIWAN_WORDS = {
    "干预": "干預",
    "默认": "預設",
    "网络": "網路",
    "视图": "檢視",
    "接口": "介面",
    "文件": "檔案",
    "运行": "執行",
    "数据": "資料",
}


def test_taiwan_chinese_is_written_with_taiwan_s_words():
    texts = [*TEXT["zh-TW"].values(), *(words for table in CODES["zh-TW"].values() for words in table.values())]
    converted = [words for simplified in TAIWAN_WORDS for words in texts if simplified in words]
    mainland = ("幹", "默認", "網絡", "視圖", "接口", "運行", "數據", "文件", "軟件", "信息")  # converted one by one
    assert not [words for words in texts if any(word in words for word in mainland)]
    for simplified, taiwan in TAIWAN_WORDS.items():
        assert TRADITIONAL["zh-TW"](simplified) == taiwan
        found = [words for words in TEXT["zh"].values() if simplified in words]
        assert found, f"the page no longer says {simplified}: pick a word it says"
        assert all(taiwan in TRADITIONAL["zh-TW"](words) for words in found), simplified
    assert converted == [], "the Taiwan page says a simplified word"
    assert t("intervention", "zh-TW") == "干預"
    assert not [words for words in texts if "字首" in words], "a sentence's first words are no word prefix (字首)"


def test_every_intervention_is_named_by_what_it_does_in_both_languages():
    from core.models import MODELS, model_class
    from demo.i18n import intervention_name

    keys = [key for model in MODELS for key in model_class(model).interventions]
    for lang in ("en", "zh", "zh-TW"):
        names = [intervention_name(key, lang) for key in keys]
        assert len(set(names)) == len(keys) and not set(names) & set(keys), lang
    assert intervention_name("map_off:2", "en") == "One top-layer feature map off (no. 2)"


def test_toasts_are_titled_in_the_page_language():
    from demo.i18n import error

    assert (error("x", "en").title, error("x", "zh").title, error("x", "zh-TW").title) == ("Error", "出错了", "出錯了")


def test_the_api_tab_says_what_the_api_docs_say_of_a_failed_model():
    """docs/api.md and the README: a model that gave no answer stays in /compare's list with its error."""
    assert "A model that gave no answer is not\nleft out" in (PROJECT_ROOT / "docs" / "api.md").read_text()
    for lang in ("en", "zh"):
        usage = t("api_usage", lang, tasks="sst5")
        assert "`error`" in usage and "`message`" in usage and "left out of `/compare`" not in usage
