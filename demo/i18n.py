"""UI text in English and Chinese, read once from the locale files demo/locales/en.toml and zh.toml.

Each file groups its keys by tab. Static labels (component labels, headings: the [<tab>.page] tables) go
through Gradio's I18n (`L`) and follow the browser's language. Text the callbacks write (the [<tab>.text]
tables: the result summary, legends, table headers) is worded by `t(key, lang, **params)` in the language of
the request's Accept-Language header, so both halves of the page agree; t finds the page's labels too.

Core's coded messages (a NoticeError, a prediction's Notice, a view's Text) are worded by `notice_text` and
`view_text`. The rule: core's English stays in core (its TEXT tables also serve the CLI, the JSON API and the
logs) and is the English here; zh.toml words the same codes and parameters under [codes.<table>].
tests/test_locales.py checks that both languages have the same keys and placeholders.

Browsers that ask for Traditional Chinese (zh-TW, zh-HK) get words converted from the simplified ones by OpenCC
at start-up, Taiwan's with its phrases (s2twp: 干预 -> 干預, never 幹預; 默认 -> 預設, 网络 -> 網路), Hong Kong's
with its characters (s2hk): `lang` is then 'zh-TW' or 'zh-HK', never typed in a file. Gradio's front end (6.31)
picks only the locales it ships itself (zh-CN, zh-TW), so a zh-HK browser's static labels stay English.
"""

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import gradio as gr
import opencc

from core.analysis.attribution import METHODS, ON_DEMAND
from core.analysis.export import EXPORT_NOTICE_TEXT
from core.analysis.probes import PROBE_NOTICE_TEXT
from core.analysis.treebank import TREEBANK_NOTICE_TEXT
from core.data.sst import FINE_LABELS
from core.data.user import USER_DATA_TEXT
from core.models import MODELS, model_class
from core.notices import NOTICE_TEXT, Notice, NoticeError
from core.predict import ModelFailure
from core.views import VIEW_TEXT, Text
from demo.examples import EXAMPLES
from service.jobs import JOB_TEXT
from web.words import request_lang as request_lang  # the visitor's language: read by the server, worded here

LANGS = ("en", "zh")  # the locale files
# UI language -> OpenCC's converter from zh (its configurations: s2twp, Taiwan's phrases too; s2hk)
_S2TWP = opencc.OpenCC("s2twp").convert
# s2twp words 前缀 as 字首, a word's prefix; the prefix curve reads a sentence's first words: 前綴
TAIWAN_PHRASES = {"字首": "前綴"}


def _to_taiwan(text: str) -> str:
    """Simplified Chinese in Taiwan's characters and phrases (s2twp), with TAIWAN_PHRASES over its choices."""
    text = _S2TWP(text)
    for theirs, ours in TAIWAN_PHRASES.items():
        text = text.replace(theirs, ours)
    return text


TRADITIONAL = {"zh-TW": _to_taiwan, "zh-HK": opencc.OpenCC("s2hk").convert}
LOCALES = Path(__file__).parent / "locales"
# what each model's interventions test, by "<model>.<key>": the English is the model's InterventionSpec.section
INTERVENTION_TEXT = {
    f"{model}.{key}": spec.section for model in MODELS for key, spec in model_class(model).interventions.items()
}
CORE_TEXT = {
    "notice": NOTICE_TEXT,
    "probes": PROBE_NOTICE_TEXT,
    "treebank": TREEBANK_NOTICE_TEXT,
    "user_data": USER_DATA_TEXT,
    "jobs": JOB_TEXT,
    "view": VIEW_TEXT,
    "interventions": INTERVENTION_TEXT,
    "export": EXPORT_NOTICE_TEXT,
}  # by their name in [codes.<name>]


def load_locale(lang: str) -> tuple[dict, dict, dict]:
    """One locale file: its page labels, all its keys (labels and callback text), and core's codes by table."""
    tabs = tomllib.loads((LOCALES / f"{lang}.toml").read_text(encoding="utf-8"))
    codes = tabs.pop("codes", CORE_TEXT)  # en.toml has none: core's own English
    page, text = {}, {}
    for tab, parts in tabs.items():
        for part, keys in parts.items():
            for key, words in keys.items():
                if key in text:  # t() looks a key up without its tab
                    raise ValueError(f"{lang}.toml: '{key}' is in two tabs ({tab}.{part})")
                text[key] = words
                if part == "page":
                    page[key] = words
    return page, text, codes


PAGE, TEXT, CODES = {}, {}, {}
for _lang in LANGS:
    PAGE[_lang], TEXT[_lang], CODES[_lang] = load_locale(_lang)
CODES["zh"]["interventions"] = {}  # filled from the models' cards (add_model_words)


def t(key: str, lang: str, **params) -> str:
    """The words of `key` in `lang` ('en', 'zh' or a TRADITIONAL one), its {placeholders} filled in from `params`."""
    return TEXT[lang][key].format(**params)


def label_name(label: str, lang: str) -> str:
    """A class name in the UI language; a user's own label as it is."""
    return TEXT[lang].get("label_" + label.replace(" ", "_"), label)


for _lang in LANGS:  # labels built from core's lists
    _built = {
        f"attr_{m}": t(f"attr_name_{m}", _lang) + (t("attr_slower", _lang) if m in ON_DEMAND else "") for m in METHODS
    }  # a method too slow for every request says so (it runs when chosen)
    _built |= {f"tb_label_{i}": label_name(name, _lang) for i, name in enumerate(FINE_LABELS)}  # gold-label filter
    PAGE[_lang] |= _built
    TEXT[_lang] |= _built
for _lang, _convert in TRADITIONAL.items():  # placeholders are ASCII: the conversion leaves them as they are
    TEXT[_lang] = {k: _convert(v) for k, v in TEXT["zh"].items()}
    CODES[_lang] = {table: {code: _convert(v) for code, v in codes.items()} for table, codes in CODES["zh"].items()}


def add_model_words() -> None:
    """Each registered model's own words in Chinese, from its card (the English: VIEW_TEXT, its interventions)."""
    for model in MODELS:
        card = model_class(model).card
        for lang in ("zh", *TRADITIONAL):
            convert = TRADITIONAL.get(lang, str)
            CODES[lang]["view"] |= {code: convert(words) for code, words in card.view_text_zh.items()}
            CODES[lang]["interventions"] |= {
                f"{model}.{k}": convert(words) for k, words in card.interventions_zh.items()
            }


add_model_words()

I18N = gr.I18n(
    en=PAGE["en"], zh=PAGE["zh"], **{"zh-CN": PAGE["zh"]}, **{"zh-TW": {key: TEXT["zh-TW"][key] for key in PAGE["zh"]}}
)  # Gradio has no zh-HK (see above)
L = I18N  # L("key") in component constructors


def words_in(words: dict[str, str], lang: str, default: str) -> str:
    """Words a data file gives per language ({"en": ..., "zh": ...}, e.g. a probe suite's capabilities) in the
    UI language; `default` where the file has none."""
    found = words.get("en" if lang == "en" else "zh", default)
    return TRADITIONAL[lang](found) if lang in TRADITIONAL else found


def failure_text(failure: ModelFailure, lang: str) -> str:
    """Why a model gave no answer (core's ModelFailure code), naming the model, with the detail."""
    return t(f"failed_{failure.code}", lang, model=model_name(failure.model), error=failure.error)


def notice_text(notice: Notice | NoticeError, lang: str, english: dict = NOTICE_TEXT) -> str:
    """Core's coded message in the UI language: a NoticeError (its class's TEXT holds the code), or a Notice
    whose code is in `english`, the core table it comes from (a prediction's notices: NOTICE_TEXT)."""
    if isinstance(notice, NoticeError):
        english = notice.TEXT
        notice = notice.notice
    if isinstance(notice.params.get("methods"), list):  # attribution method codes, by their names in `lang`
        notice = Notice(
            notice.code, notice.params | {"methods": [t(f"attr_name_{m}", lang) for m in notice.params["methods"]]}
        )
    ran = str(notice.params.get("intervention", ""))  # one a model ran ("key:index"), by what it does
    if notice.code == "intervention" and f"intervention_name_{ran.partition(':')[0]}" in TEXT[lang]:
        params = {"intervention": intervention_name(ran, lang), "model": model_name(notice.params["model"])}
        notice = Notice(notice.code, notice.params | params)
    if notice.code == "model_one_class":  # the class a model always answers, named as the page names classes
        notice = Notice(notice.code, notice.params | {"label": label_name(str(notice.params["label"]), lang)})
    if f"tb_split_{notice.params.get('split')}" in TEXT[lang]:  # a treebank split (dev, test) by its name
        notice = Notice(notice.code, notice.params | {"split": t(f"tb_split_{notice.params['split']}", lang)})
    table = next(name for name, text in CORE_TEXT.items() if text is english)
    return notice.format(CODES[lang][table], {code: t(f"lang_{code}", lang) for code in LANGS})


def intervention_name(value: str, lang: str) -> str:
    """An intervention ("key" or "key:index", as the API takes it) by what it does, in the UI language."""
    key, _, index = value.partition(":")
    name = t(f"intervention_name_{key}", lang)
    return t("intervention_at", lang, name=name, index=index) if index else name


def intervention_text(model: str, key: str, section: str, lang: str) -> str:
    """What a model's intervention tests (its paper section) in the UI language; `section` where no locale has it."""
    return CODES[lang]["interventions"].get(f"{model}.{key}", section)


def error(message: str, lang: str) -> gr.Error:
    """A toast for a refused action, its title in the UI language too (Gradio's is "Error")."""
    return gr.Error(message, title=t("toast_error", lang), print_exception=False)


def warn(message: str, lang: str) -> None:
    """A warning toast, its title in the UI language (Gradio's is "Warning")."""
    gr.Warning(message, title=t("toast_warning", lang))


def model_name(key: str, cited: bool = True, lang: str = "en") -> str:
    """The model's name with its paper ("Tensor CNN (Lei et al. 2015)"), or without (`cited=False`), from its card;
    a key no longer registered (an old job's) as it is."""
    if key not in MODELS:
        return key
    name = model_class(key).card.display_name("en" if lang == "en" else "zh")
    name = TRADITIONAL[lang](name) if lang in TRADITIONAL else name
    return name if cited else name.split(" (")[0]


def task_name(task: str, lang: str) -> str:
    """A task's name in the UI language; a user's own task as it is."""
    return TEXT[lang].get(f"task_{task}", task)


def task_label(task: str):
    """A task's name for a component (Gradio's I18n); a user's own task as it is."""
    return L(f"task_{task}") if f"task_{task}" in PAGE["en"] else task


def view_text(value, lang: str) -> str:
    """One string of a view in the UI language: a Text worded from its code (its parameters too: a class
    name as the UI's, a Text in turn); anything else (a word, a label like L1) as it is. A Text reads as
    core's English wording (core.views.VIEW_TEXT) already."""
    if lang == "en" or not isinstance(value, Text):
        return value
    params = {
        k: view_text(v, lang) if isinstance(v, Text) else label_name(v, lang) if k == "label" else v
        for k, v in value.params.items()
    }
    if value.code not in CODES[lang]["view"]:  # a model registered after this module was loaded
        add_model_words()
    return CODES[lang]["view"][value.code].format(**params)


def word_view(view, lang: str):
    """A copy of a view with its titles, axis names, legends and column heads in the UI language."""
    texts: dict[str, Any] = {
        name: view_text(getattr(view, name), lang)
        for name in ("title", "score_label", "y_label", "x_title", "value_label", "axis_note")
        if hasattr(view, name)
    }
    if hasattr(view, "curves"):
        texts["curves"] = {view_text(k, lang): v for k, v in view.curves.items()}
    if hasattr(view, "columns"):
        texts["columns"] = [view_text(c, lang) for c in view.columns]
    return dataclasses.replace(view, **texts)


def example_labels(lang: str) -> list[str]:
    """The examples' labels ("negation: The movie is not good.") in the UI language."""
    return [f"{t(f'example_{kind}', lang)}{t('colon', lang)}{sentence}" for kind, sentence in EXAMPLES]


def source_text(source: str, lang: str) -> str:
    """Where a checkpoint came from (core.checkpoints.hub: "bundled: <path>", "hub: <repo>@<rev>",
    "directory: <path>"; web.training: "trained here: <task>/<model>" or "trained here: job <id>") in the UI
    language."""
    kind, _, where = source.partition(": ")
    key = "source_" + kind.replace(" ", "_")
    if not where or key not in TEXT[lang]:
        return source
    if kind == "trained here" and where.startswith("job "):
        where = t("source_job", lang, job=where.removeprefix("job "))
    return f"{t(key, lang)}{t('colon', lang)}{where}"
