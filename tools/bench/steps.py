"""Forward pass and training step per model at fixed sentence lengths: the numbers every training run and
every sweep trial pays, one command away for the next comparison (with a peer implementation, or after a
change to a model's forward).

A batch of 32 random in-vocabulary sentences of exactly L words (the trainer's exact-length buckets):
the forward is the model in eval mode under inference mode with no explanation tensors (`explain=0`, as in
training and evaluation); the training step is forward, backward and the model's own optimizer recipe
(configs/recipes/<model>.toml, core.training.train.build_optimizers) on a copy of the shipped model.
"""

import copy
import logging

import torch

from core.data.batching import pad_batch
from core.predict import Lab
from core.training.config import TrainConfig, resolve_recipe
from core.training.train import build_optimizers
from tools.bench.inference import random_ids
from tools.bench.timing import summary, time_calls

log = logging.getLogger("tools.bench")
BATCH = 32


def measure_steps(lab: Lab, task: str, lengths: list[int], reps: int, budget_s: float) -> dict:
    """{model: {"lengths", "forward" and "train_step": [summary per length]}}."""
    out = {}
    for model in lab.models(task):
        ckpt = lab.checkpoints[(task, model)]
        net = ckpt.model
        trained = copy.deepcopy(net).train()  # the lab's own model stays as it is
        optimizers = build_optimizers(trained, resolve_recipe(TrainConfig(model=model, task=task)))
        labels = torch.randint(0, len(ckpt.meta["labels"]), (BATCH,), generator=torch.Generator().manual_seed(0))
        rows: dict[str, list] = {"lengths": lengths, "forward": [], "train_step": []}
        for length in lengths:
            batch = pad_batch([random_ids(len(ckpt.vocab), length, seed=i) for i in range(BATCH)])

            @torch.inference_mode()
            def forward(_):
                net(batch.ids, batch.lengths)

            def train_step(_):
                trained(batch.ids, batch.lengths, labels).loss.backward()
                for optimizer in optimizers:
                    optimizer.step()
                    optimizer.zero_grad(set_to_none=True)

            rows["forward"].append(summary(time_calls(forward, reps, budget_s)))
            rows["train_step"].append(summary(time_calls(train_step, reps, budget_s)))
            log.info(
                "steps %s L=%d: forward p50 %.2f ms, training step p50 %.2f ms",
                model,
                length,
                rows["forward"][-1]["p50_ms"],
                rows["train_step"][-1]["p50_ms"],
            )
        out[model] = rows
    return out
