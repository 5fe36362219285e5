"""How much the AGT uses each of its 15 layers: the Lab's own interventions, layer by layer, on SST-5 dev sentences,
the state of its gates and attention, and the learning signal each layer gets at the start of training.

    python -m tools.research.agt_layers                         # the shipped SST-5 AGT -> reports/agt_layers.{json,md}
    python -m tools.research.agt_layers --checkpoint runs/sst5-phrases/agt-s1/best --name "gate_bias=-2, seed 1"
    python -m tools.research.agt_layers --gradients --name "gate_bias=-2" --set gate_bias=-2  # a fresh model
    python -m tools.research.agt_layers --render                # the markdown again from the stored JSON

A layer's *effect* under an intervention is the largest |Δp| of any class probability over the sentences (the
first `--sentences` of SST-5 dev), against the plain model; `flips` counts the sentences whose predicted label
changes. A layer counts as *used* when uniform attention or a shut gate there moves a class probability by at
least `USED` (issue 49's bar: 10 of 15 layers). The paper's L1..L15 are the interventions' indices 1..15; L1 has
no gate. Each run replaces its own entry (by --name) in the JSON and keeps the others.
"""

import argparse
import json
import math
import time
from pathlib import Path

import torch

from core.analysis.batched import predict_batched
from core.checkpoints.checkpoint import load_checkpoint
from core.data import PROJECT_ROOT, load_task
from core.data.batching import bucket_batches, pad_batch
from core.models.agt import AGT
from core.models.base import Intervention
from core.training.train import Trainer, parse_args
from tools.bench.machine import machine_info

DOCS = PROJECT_ROOT / "reports"
USED = 0.01  # issue 49: a layer moves a class probability by at least this much
# the interventions read per layer: one that removes the layer's word selection, two that fix its gate
KEYS = ("uniform_attention", "gates_closed", "gates_open")
USED_BY = ("uniform_attention", "gates_closed")  # the two named by the bar


def layer_effects(net: AGT, sequences: list[list[int]]) -> dict[str, list[dict]]:
    """intervention -> one row per layer it reaches: {layer, max_dp, flips} against the plain model."""
    plain_probs, plain_labels = predict_batched(net, sequences, 256)
    plain = torch.tensor(plain_probs, dtype=torch.float64)
    effects: dict[str, list[dict]] = {}
    for key in KEYS:
        lowest, highest = net.intervention_range(key)
        rows = []
        for layer in range(lowest, highest + 1):
            probs, labels = predict_batched(net, sequences, 256, intervention=Intervention(key, layer))
            rows.append(
                {
                    "layer": layer,
                    "max_dp": (torch.tensor(probs, dtype=torch.float64) - plain).abs().max().item(),
                    "flips": sum(a != b for a, b in zip(labels, plain_labels)),
                }
            )
        effects[key] = rows
    return effects


def used_layers(effects: dict[str, list[dict]], num_layers: int) -> list[int]:
    """The layers (1-based) where uniform attention or a shut gate moves some class probability by >= USED."""
    return [
        layer
        for layer in range(1, num_layers + 1)
        if any(r["max_dp"] >= USED for key in USED_BY for r in effects[key] if r["layer"] == layer)
    ]


@torch.inference_mode()
def layer_state(net: AGT, sequences: list[list[int]]) -> list[dict]:
    """Per layer L1..L15 over the sentences: gate mean and saturation, the share of y_l that reaches the top
    through the skip paths alone (prod_{k>l} (1 - T_k), mean over units and sentences), and how far the
    attention is from uniform (its entropy over the entropy of uniform attention, 1 = uniform)."""
    net.eval()
    batch = pad_batch(sequences)
    out = net(batch.ids, batch.lengths, explain=1)
    gates = out.gates.double()  # (B, Lyr-1, h)
    # carry[:, l] = prod over layers above l of (1 - T): layer 0's is over all gates, the top layer's is 1
    above = (1 - gates).log().flip(1).cumsum(1).flip(1).exp()  # (B, Lyr-1, h): prod_{k >= l+1}
    carry = torch.cat([above, torch.ones_like(above[:, :1])], dim=1).mean((0, 2))  # (Lyr,)
    attention = out.attention.double()  # (B, A, N)
    entropy = -(attention * attention.clamp_min(1e-300).log()).sum(-1)  # (B, A)
    uniform = batch.lengths.double().log().clamp_min(1e-300)[:, None]  # (B, 1); one-word sentences give 0/0
    ratio = torch.where(batch.lengths[:, None] > 1, entropy / uniform, 1.0).mean(0)  # (A,)
    rows = []
    for l in range(net.config.num_layers):
        gate = gates[:, l - 1] if l else None
        bias = net.gate[l - 1].get_parameter("bias").double() if l else None
        rows.append(
            {  # gate_bias_moved: how far training took b^t_l from its initial value (largest unit)
                "layer": l + 1,
                "gate_mean": gate.mean().item() if gate is not None else None,
                "gate_above_0.9": (gate > 0.9).double().mean().item() if gate is not None else None,
                "gate_below_0.1": (gate < 0.1).double().mean().item() if gate is not None else None,
                "gate_bias_mean": bias.mean().item() if bias is not None else None,
                "gate_bias_moved": (bias - net.config.gate_bias).abs().max().item() if bias is not None else None,
                "carry_to_top": carry[l].item(),
                "attention_entropy_ratio": ratio[min(l, ratio.shape[0] - 1)].item(),
            }
        )
    return rows


def _grad(p: torch.Tensor) -> torch.Tensor:
    """p's gradient in float64, zero where the backward pass did not reach p."""
    return p.grad.double() if p.grad is not None else torch.zeros_like(p, dtype=torch.float64)


def layer_gradient_norms(net: AGT) -> torch.Tensor:
    """(3, Lyr) gradient norms now, per layer L1..L15: its attention (W^m_l, w^m_l), its gate (W^t_l, b^t_l) and
    its transformation (W^f_l, b^f_l); L1 has no gate nor transformation (0), nor do a k-ablation's layers past k
    have attention of their own (0)."""
    norms = torch.zeros(3, net.config.num_layers, dtype=torch.float64)
    k = net.attention_layers
    norms[0, :k] = (_grad(net.attn_weight).pow(2).sum((0, 2)) + _grad(net.attn_vector).pow(2).sum(1)).sqrt()
    for l in range(1, net.config.num_layers):
        for row, module in ((1, net.gate[l - 1]), (2, net.transform[l - 1])):
            norms[row, l] = math.sqrt(sum(float(_grad(p).pow(2).sum()) for p in module.parameters()))
    return norms


def training_gradients(train_args: list[str], steps: int) -> dict:
    """A fresh run of the trainer (its recipe, vectors and optimizer) for `steps` steps of its first epoch: the
    mean per-layer gradient norm over those steps, and the gate biases where they ended."""
    trainer = Trainer.from_config(parse_args(["--model", "agt", *train_args]))
    net, cfg = trainer.model, trainer.cfg
    if not isinstance(net, AGT) or cfg.batch_size is None:  # --model agt; the recipe sets the batch size
        raise TypeError(f"not an AGT run with a batch size: {type(net).__name__}, {cfg.batch_size}")
    net.train()
    batches = bucket_batches(trainer.task.train, trainer.vocab, cfg.batch_size, seed=cfg.seed * 1000)[:steps]
    total = torch.zeros(3, net.config.num_layers, dtype=torch.float64)
    for batch in batches:  # the trainer's step (core.training.train.Trainer.train_epoch), with the norms read
        net(batch.ids, batch.lengths, batch.labels).loss.backward()
        total += layer_gradient_norms(net)
        for optimizer in trainer.optimizers:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    mean = (total / max(1, len(batches))).tolist()
    return {
        "train_args": train_args,
        "steps": len(batches),
        "attention": mean[0],
        "gate": mean[1],
        "transform": mean[2],
        "gate_bias_after": [None] + [g.get_parameter("bias").double().mean().item() for g in net.gate],
    }


def measure_checkpoint(path: str, sentences: int, data: str | None) -> dict:
    ckpt = load_checkpoint(path)
    net = ckpt.model.float()  # the bundle stores float16; the Lab runs float32
    dev = load_task("sst5", data).dev[:sentences]
    sequences = [ckpt.vocab.encode(e.words) for e in dev]
    effects = layer_effects(net, sequences)
    return {
        "checkpoint": path,
        "sentences": len(sequences),
        "effects": effects,
        "used_layers": used_layers(effects, net.config.num_layers),
        "state": layer_state(net, sequences),
        "gate_bias": net.config.gate_bias,
    }


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.1e}"


def markdown(report: dict) -> str:
    """One table per measured checkpoint (layers down, interventions and state across) and one of the gradient
    norms per fresh-model setting."""
    lines = [
        "# The AGT's layers: intervention effects, gates and learning signal",
        "",
        "Generated by `make agt-layers` / `make agt-gradients` (`python -m tools.research.agt_layers`; what each "
        "column means: its docstring). Effects are the largest |Δp| of any class probability over the first SST-5 dev "
        f"sentences (flips: sentences whose label changes); a layer is *used* at |Δp| >= {USED} under uniform "
        "attention or a shut gate.",
        "",
    ]
    for name, entry in report["checkpoints"].items():
        effects = {key: {r["layer"]: r for r in rows} for key, rows in entry["effects"].items()}
        machine = entry["machine"]
        lines += [
            f"## {name}",
            "",
            f"`{entry['checkpoint']}` (gate_bias {entry['gate_bias']}), {entry['sentences']} sentences, "
            f"{entry['generated']}, {machine['cpu']}, commit {machine['commit']}. Used layers: "
            f"**{len(entry['used_layers'])} of {len(entry['state'])}** ({', '.join(map(str, entry['used_layers']))}).",
            "",
            "| layer | uniform attention | flips | gate shut | flips | gate open | flips | gate mean | gate bias moved "
            "| carry to top | attention entropy / uniform |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in entry["state"]:
            cells = []
            for key in KEYS:
                r = effects[key].get(row["layer"])
                cells += [_cell(r["max_dp"]), str(r["flips"])] if r else ["", ""]
            lines.append(
                f"| L{row['layer']} | {' | '.join(cells)} | {_cell(row['gate_mean'])} | "
                f"{_cell(row['gate_bias_moved'])} | "
                f"{_cell(row['carry_to_top'])} | {row['attention_entropy_ratio']:.3f} |"
            )
        lines.append("")
    if report["gradients"]:
        lines += [
            "## Gradient norms per layer at the start of training",
            "",
            "Mean over the first steps of a fresh run (the trainer's recipe, vectors and Adadelta), per layer's "
            "attention (W^m_l, w^m_l), gate (W^t_l, b^t_l) and transformation (W^f_l, b^f_l).",
            "",
        ]
        for name, entry in report["gradients"].items():
            lines += [
                f"### {name}",
                "",
                f"`{' '.join(entry['train_args'])}`, {entry['steps']} steps, {entry['generated']}, "
                f"commit {entry['machine']['commit']}.",
                "",
                "| part | " + " | ".join(f"L{l + 1}" for l in range(len(entry["attention"]))) + " |",
                "|---|" + "---|" * len(entry["attention"]),
            ]
            for part in ("attention", "gate", "transform"):
                lines.append(f"| {part} | " + " | ".join(_cell(v) for v in entry[part]) + " |")
            lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.research.agt_layers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default="checkpoints/sst5/agt", help="the AGT checkpoint folder to measure")
    parser.add_argument("--name", default="shipped", help="the entry this run writes in the JSON")
    parser.add_argument("--sentences", type=int, default=40, help="the first N SST-5 dev sentences")
    parser.add_argument("--data", default=None, help="the data directory (default: $DATA_DIR, else ../shared/data)")
    parser.add_argument("--gradients", action="store_true", help="measure a fresh model's first training steps")
    parser.add_argument("--steps", type=int, default=200, help="with --gradients: training steps")
    parser.add_argument("--seed", type=int, default=1, help="with --gradients")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="with --gradients")
    parser.add_argument(
        "--out",
        default=str(DOCS / "agt_layers.json"),
        help="the JSON file the results are merged into (its .md beside it)",
    )
    parser.add_argument("--render", action="store_true", help="rewrite the markdown from the JSON, measuring nothing")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    out = Path(args.out)
    report = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {"checkpoints": {}, "gradients": {}}
    if args.render:
        out.with_suffix(".md").write_text(markdown(report) + "\n", encoding="utf-8")
        return 0
    if args.gradients:
        train_args = ["--task", "sst5", "--phrases", "--seed", str(args.seed), "--threads", "1"]
        train_args += [f"--set={s}" for s in args.set]
        entry = training_gradients(train_args, args.steps)
        report["gradients"][args.name] = entry
        for part in ("attention", "gate", "transform"):
            print(f"{part:>10} " + " ".join(f"{x:.1e}" for x in entry[part]))
    else:
        entry = measure_checkpoint(args.checkpoint, args.sentences, args.data)
        report["checkpoints"][args.name] = entry
        for key, rows in entry["effects"].items():
            print(f"{key:>18} " + " ".join(f"L{r['layer']}:{r['max_dp']:.1e}" for r in rows))
        print(f"used layers (|Δp| >= {USED}): {len(entry['used_layers'])} of 15: {entry['used_layers']}")
    entry.update(generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine=machine_info())
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(markdown(report) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
