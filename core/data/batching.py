"""Batches of word ids: exact-length buckets for training (Lei et al.'s scheme: no padding at all,
so mean pools, dynamic k-max and pyramids need no masks), and right-padded batches otherwise."""

import random
from collections import defaultdict
from dataclasses import dataclass

import torch
from torch import Tensor

from core.data import Example
from core.data.vocab import Vocab


@dataclass
class Batch:
    ids: Tensor  # (B, L) long, right-padded with 0
    lengths: Tensor  # (B,) long
    labels: Tensor  # (B,) long


def pad_batch(sequences: list[list[int]], labels: list[int] | None = None) -> Batch:
    longest = max(len(s) for s in sequences)
    ids = torch.tensor(
        [[*s, *[0] * (longest - len(s))] for s in sequences], dtype=torch.long
    )  # one copy, not one per row
    lengths = torch.tensor([len(s) for s in sequences], dtype=torch.long)
    return Batch(ids, lengths, torch.tensor(labels if labels is not None else [0] * len(sequences)))


def bucket_batches(examples: list[Example], vocab: Vocab, batch_size: int, seed: int | None = None) -> list[Batch]:
    """Group examples of identical length into batches of at most `batch_size`.

    With `seed`, the examples inside each bucket and the batch order are shuffled
    deterministically from `seed` (the trainer passes (run seed, epoch)); without it the order is
    fixed, for evaluation."""
    rng = random.Random(seed)
    by_length: dict[int, list[Example]] = defaultdict(list)
    for example in examples:
        by_length[len(example.words)].append(example)
    batches = []
    for length in sorted(by_length):
        bucket = by_length[length]
        if seed is not None:
            rng.shuffle(bucket)
        for start in range(0, len(bucket), batch_size):
            chunk = bucket[start : start + batch_size]
            ids = torch.tensor([vocab.encode(e.words) for e in chunk], dtype=torch.long)
            batches.append(
                Batch(
                    ids,
                    torch.full((len(chunk),), length, dtype=torch.long),
                    torch.tensor([e.label for e in chunk], dtype=torch.long),
                )
            )
    if seed is not None:
        rng.shuffle(batches)
    return batches
