"""No plain value of the page is also a key of its translations. Gradio (6.31)'s front end passes a component's
label, info, placeholder, description, title and value through its translations when it builds the component
(`_translate_and_store`): a value "auto" became "Auto" whenever the page's translations had arrived first, and the
Probes task menu then sent "Auto", which is none of its choices (a browser test failed so under load)."""

from gradio.components.api_component import Api
from gradio.i18n import I18nData

from demo import build_demo
from demo.i18n import I18N
from service.settings import Settings

TRANSLATED = ("label", "info", "placeholder", "description", "title", "value")  # Gradio's front end, src/*.js


def test_no_component_value_or_label_is_a_translation_key(lab):
    keys = {key for words in I18N.translations.values() for key in words}
    demo = build_demo(lab, "checkpoints", Settings.load())
    clashes = []
    for block in demo.blocks.values():
        if isinstance(block, Api):  # a named endpoint's parameter: never drawn
            continue
        for prop in TRANSLATED:
            value = getattr(block, prop, None)
            if isinstance(value, str) and not isinstance(value, I18nData) and value in keys:
                clashes.append(f"{type(block).__name__}#{getattr(block, 'elem_id', '')}.{prop} = {value!r}")
    assert not clashes, clashes
