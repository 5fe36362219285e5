"""Neural bag-of-words (NBoW) baseline, as in the tables of Kalchbrenner et al. (2014) and
Lei et al. (2015): the mean of the word vectors, one tanh hidden layer, softmax.

Because the average is linear, the sentence logit is not the mean of per-word logits (the hidden
layer sits in between), so NBoW has no native per-word curve; the predictor uses prefixes.

Shapes: B batch, L tokens, d embedding, h hidden, C classes.
"""

from dataclasses import dataclass

from torch import Tensor, nn

from core.models.base import (
    DIM,
    NUM_CLASSES,
    VOCAB_SIZE,
    Dropout,
    Intervention,
    ModelOutput,
    SentenceClassifier,
    check_config,
    classification_loss,
    length_mask,
    masked_mean,
)
from core.models.card import ModelCard


@dataclass
class NBoWConfig:
    vocab_size: int
    num_classes: int = 5
    embed_dim: int = 300
    hidden: int = 200
    dropout: float = 0.3
    # pretrained vectors, fine-tuned (Kalchbrenner et al.'s NBoW trains its vectors); better on SST-5 dev
    freeze_embeddings: bool = False

    def __post_init__(self):
        check_config(self, {"vocab_size": VOCAB_SIZE, "num_classes": NUM_CLASSES, "embed_dim": DIM, "hidden": DIM})
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")


class NBoW(SentenceClassifier[ModelOutput]):
    key = "nbow"
    card = ModelCard(
        name="NBoW baseline",
        name_zh="NBoW 基线",
        citation="neural bag-of-words baseline (as in the tables of Kalchbrenner et al. 2014 and Lei et al. 2015)",
    )
    config_class = NBoWConfig

    def __init__(self, config: NBoWConfig):
        super().__init__(config)
        self.embedding = self.build_embedding(config.vocab_size, config.embed_dim, config.freeze_embeddings)
        self.hidden = nn.Linear(config.embed_dim, config.hidden)
        self.out = nn.Linear(config.hidden, config.num_classes)
        self.dropout = Dropout(config.dropout)

    def forward(
        self,
        ids: Tensor,
        lengths: Tensor,
        labels: Tensor | None = None,
        explain: int = 0,
        intervention: Intervention | None = None,
    ) -> ModelOutput:
        mask = length_mask(lengths, ids.shape[1])  # (B, L)
        mean = masked_mean(self.embedding(ids), mask)  # (B, d)
        hidden = self.dropout(self.hidden(self.dropout(mean)).tanh())  # (B, h)
        logits = self.out(hidden)  # (B, C)
        return ModelOutput(logits=logits, loss=classification_loss(logits, labels))
