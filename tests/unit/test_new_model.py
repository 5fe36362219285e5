"""A model added from outside core: a file with its class and card, one registration (no edit of core, configs or the
locales), no recipe and its tests. Trained a step by the trainer, it answers in the Lab, in the prediction CLI, and
on the page in both languages."""

import json
import os
import subprocess
import sys

import pytest

from core.checkpoints.manifest import write_manifest
from core.data import PROJECT_ROOT
from core.models import MODELS, PAPER_MODELS, REGISTERED_ENV, model_class, register_model
from core.models.papers import paper
from core.predict import Lab
from core.training.config import TrainConfig
from core.training.train import Trainer

TOY_MODEL = '''
"""A bag of words: the mean word vector, then a linear layer."""

from dataclasses import dataclass

from torch import Tensor, nn

from core.models.base import (
    Intervention, ModelOutput, SentenceClassifier, classification_loss, length_mask, masked_mean,
)
from core.models.card import ModelCard
from core.views import Table, Text


@dataclass
class ToyConfig:
    vocab_size: int
    num_classes: int = 5
    embed_dim: int = 8
    freeze_embeddings: bool = False


class ToyBoW(SentenceClassifier[ModelOutput]):
    key = "toy"
    card = ModelCard(
        name="Toy BoW",
        name_zh="玩具词袋",
        citation="a test's bag of words",
        view_text={"toy_lengths": "{n} words"},
        view_text_zh={"toy_lengths": "{n} 个词"},
    )
    config_class = ToyConfig

    def __init__(self, config: ToyConfig):
        super().__init__(config)
        self.embedding = self.build_embedding(config.vocab_size, config.embed_dim, config.freeze_embeddings)
        self.out = nn.Linear(config.embed_dim, config.num_classes)

    def forward(self, ids: Tensor, lengths: Tensor, labels: Tensor | None = None, explain: int = 0,
                intervention: Intervention | None = None) -> ModelOutput:
        logits = self.out(masked_mean(self.embedding(ids), length_mask(lengths, ids.shape[1])))
        return ModelOutput(logits=logits, loss=classification_loss(logits, labels))

    def views(self, output, index, words, class_names=None) -> list:
        return [Table(title=Text("toy_lengths", n=len(words)), columns=[], rows=[])]
'''


@pytest.fixture
def toy(tmp_path):
    """The toy model's file in a folder of its own, registered for this test only."""
    path = tmp_path / "toy_model" / "toy_bow.py"
    path.parent.mkdir()
    path.write_text(TOY_MODEL)
    target = f"{path}:ToyBoW"
    register_model("toy", target)
    yield target
    del MODELS["toy"]
    PAPER_MODELS.remove("toy")


def test_a_model_in_its_own_file_trains_answers_and_is_named(toy, tiny_data, tmp_path):
    assert not (PROJECT_ROOT / "configs" / "recipes" / "toy.toml").exists()  # trained from the default recipe
    cfg = TrainConfig(
        model="toy", task="sst5", data_dir=str(tiny_data), epochs=1, vectors="none", out=str(tmp_path / "run")
    )
    metrics = Trainer.from_config(cfg).fit()  # the trainer
    assert metrics["best_epoch"] == 1 and 0 <= metrics["test"]["accuracy"] <= 1
    root = tmp_path / "checkpoints"
    (root / "sst5").mkdir(parents=True)
    (tmp_path / "run" / "best").rename(root / "sst5" / "toy")
    write_manifest(root)

    lab = Lab.load(root)  # the Lab
    assert not lab.errors and lab.models("sst5") == ["toy"]
    [prediction] = lab.compare("a good film", task="sst5", models=["toy"]).predictions
    assert prediction.model == "toy" and len(prediction.probs) == 5
    assert [str(v.title) for v in prediction.views] == ["3 words"]  # its card's words

    env = {**os.environ, REGISTERED_ENV: f"toy={toy}", "HF_HUB_OFFLINE": "1"}
    cli = subprocess.run(  # the CLI, in a process of its own: registered by the environment
        [sys.executable, "-m", "core.predict", "--checkpoints", str(root), "--model", "toy", "--json", "a good film"],
        capture_output=True,
        text=True,
        env=env,
        cwd=PROJECT_ROOT,
        timeout=300,
    )
    assert cli.returncode == 0, cli.stderr
    [answer] = json.loads(cli.stdout)
    assert answer["model"] == "toy" and answer["label"] == prediction.label

    import gradio as gr  # the page: its name in the model menu, its panel and its views' words in both languages

    from demo.i18n import model_name, view_text
    from demo.lab_html import model_panel
    from demo.tabs.lab import _choices
    from service.lab import ServedLab

    with gr.Blocks():
        menu = _choices(ServedLab.load(root))[3]
    assert ("Toy BoW", "toy") in menu.choices

    assert paper("toy").display_name == model_name("toy") == "Toy BoW"
    assert model_name("toy", lang="zh") == "玩具词袋" and model_name("toy", lang="zh-TW") == "玩具詞袋"
    assert view_text(prediction.views[0].title, "zh") == "3 个词"
    assert "<b>玩具词袋</b>" in model_panel(prediction, None, "zh") and "<b>Toy BoW</b>" in model_panel(
        prediction, None, "en"
    )
    assert model_class("toy").card.citation == "a test's bag of words"


def test_a_model_is_registered_once_and_by_a_class_target():
    with pytest.raises(ValueError, match="already registered"):
        register_model("dcnn", "elsewhere.py:DCNN")
    with pytest.raises(ValueError, match="'module:Class' or 'file.py:Class'"):
        register_model("toy", "toy_bow.py")
    assert "toy" not in MODELS
