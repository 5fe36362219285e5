"""The built-in examples (demo/examples.py; the sentence box's placeholder is one of them) use only words the
shipped models of their task know: an unknown word is the model's blank, so an example made of it would show the
unknown-word notice and an explanation of nothing. Tokenized as the Lab tokenizes a request, the task chosen from
the text."""

import re

import pytest

from core.data import PROJECT_ROOT
from core.predict import Lab
from demo.examples import EXAMPLES
from demo.i18n import t


@pytest.fixture(scope="module")
def shipped() -> Lab:
    return Lab.load(PROJECT_ROOT / "checkpoints")


def unknown_words(lab: Lab, sentence: str) -> dict[str, list[str]]:
    """Per shipped model of the sentence's task, the words of `sentence` not in its vocabulary."""
    checked = lab.check_text(sentence)
    found = {}
    for model in lab.models(checked.task):
        vocab = lab.checkpoints[(checked.task, model)].vocab
        found[model] = [token.text for token in checked.tokens if vocab.encode([token.text])[0] == vocab.unk_id]
    return found


def test_the_shipped_models_cover_both_languages(shipped):
    assert {shipped.check_text(sentence).task for _, sentence in EXAMPLES} == {"sst5", "zh_sentiment"}


@pytest.mark.parametrize("sentence", [sentence for _, sentence in EXAMPLES])
def test_every_example_word_is_known_to_every_model_of_its_task(shipped, sentence):
    assert unknown_words(shipped, sentence) == dict.fromkeys(shipped.models(shipped.check_text(sentence).task), [])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sentence_box_placeholder_is_one_of_the_examples(lang):
    placeholder = re.sub("^(e\\.g\\. |例如：)", "", t("placeholder", lang))
    assert placeholder in [sentence for _, sentence in EXAMPLES]


def test_an_unknown_word_is_found(shipped):
    """The check itself: 演员 (actor) was in the Chinese example and is not in the shipped vocabulary."""
    assert set(unknown_words(shipped, "但是演员很棒")["dcnn"]) == {"演员"}
