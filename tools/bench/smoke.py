"""`--smoke` without stored runs: synthetic SST trees and tiny one-epoch runs and checkpoints."""

import random
import shutil
from pathlib import Path

from core.training.train import TrainConfig, Trainer

SMOKE_MODELS = {  # tiny dims, pairwise different (as in tests/unit/test_models_common.py)
    "tensor_cnn": ["embed_dim=5", "hidden=7", "num_layers=2"],
    "mrnn": ["embed_dim=5", "hidden=7"],
    "dcnn": [
        "embed_dim=8",
        "k_top=2",
    ],  # widths/maps stay the preset: core.training.train cannot parse list values in --set
    "adasent": ["embed_dim=5", "hidden_dim=7", "classifier_hidden=6"],
    "agt": ["embed_dim=5", "hidden=7", "num_layers=3", "attention_dim=6", "fc_hidden=8"],
    "nbow": ["embed_dim=5", "hidden=7"],
}


def write_synthetic_sst(root: Path, seed: int = 7) -> Path:
    """SST-format trees for a toy compositional sentiment (polar words add up, 'not' flips what follows)."""
    positive, negative, neutral = (
        ["good", "great", "fun", "moving"],
        ["bad", "dull", "awful", "flat"],
        ["the", "movie", "plot", "is", "a"],
    )

    def score(ws):
        total, sign = 0, 1
        for w in ws:
            sign = -sign if w == "not" else sign
            total += sign * ((w in positive) - (w in negative))
        return max(-2, min(2, total)) + 2

    def tree(ws):
        return f"({score(ws)} {ws[0]})" if len(ws) == 1 else f"({score(ws)} ({score(ws[:1])} {ws[0]}) {tree(ws[1:])})"

    rng = random.Random(seed)
    (root / "sst" / "trees").mkdir(parents=True, exist_ok=True)
    for split, n in (("train", 120), ("dev", 30), ("test", 30)):
        sentences = []
        for _ in range(n):
            ws = [rng.choice(neutral) for _ in range(rng.randint(1, 4))]
            if rng.random() < 0.3:
                ws.insert(rng.randint(0, len(ws)), "not")
            ws.insert(rng.randint(0, len(ws)), rng.choice(positive + negative))
            sentences.append(tree(ws))
        (root / "sst" / "trees" / f"{split}.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    return root


def train_smoke_runs(data_dir: Path, root: Path, plan: list[tuple[str, int, bool]] | None = None) -> tuple[Path, Path]:
    """Train tiny models for one epoch on `data_dir` (SST format) into root/runs and copy each model's first
    best checkpoint to root/checkpoints/sst5/<model>/. plan = [(model, seed, phrases)]."""
    plan = plan or [(m, 1, True) for m in SMOKE_MODELS] + [("tensor_cnn", 2, True), ("tensor_cnn", 1, False)]
    runs, checkpoints = root / "runs", root / "checkpoints"
    for model, seed, phrases in plan:
        cfg = TrainConfig(
            model=model,
            task="sst5",
            phrases=phrases,
            seed=seed,
            epochs=1,
            vectors="none",
            data_dir=str(data_dir),
            out=str(runs / ("sst5-phrases" if phrases else "sst5") / f"{model}-s{seed}"),
            set=SMOKE_MODELS[model],
            progress=False,
            max_train=64,
        )
        Trainer.from_config(cfg).fit()
        target = checkpoints / "sst5" / model
        if not target.exists():
            shutil.copytree(cfg.output_dir() / "best", target)
    return runs, checkpoints
