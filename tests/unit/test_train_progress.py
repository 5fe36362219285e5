"""A job's live progress (service.jobs._Progress): the loss of each batch and every dev evaluation reach
job.json within the epoch, before the epoch's history does, so a job of a few seconds draws its curves as it runs."""

import copy

from core.data.batching import bucket_batches
from core.training.train import TrainConfig, Trainer
from service.jobs import LOSS_POINTS_PER_EPOCH, _Progress


class _Recorded(_Progress):
    """The progress a worker would write, kept in memory."""

    def __init__(self, job: dict, trainer: Trainer):
        super().__init__(None, job, trainer)
        self.writes: list[dict] = []

    def write(self) -> None:
        self.writes.append(copy.deepcopy(self.job))


def test_loss_and_dev_points_arrive_within_the_epoch(tiny_data, tmp_path):
    cfg = TrainConfig(
        model="nbow",
        task="sst5",
        vectors="none",
        out=str(tmp_path),
        data_dir=str(tiny_data),
        set=["embed_dim=8", "hidden=6"],
        progress=False,
        batch_size=8,
        epochs=2,
        evals_per_epoch=4,
    )
    trainer = Trainer.from_config(cfg)
    progress = _Recorded({"loss": [], "history": []}, trainer)
    trainer.fit(on_epoch=progress.epoch)
    steps = len(bucket_batches(trainer.task.train, trainer.vocab, 8, seed=trainer.cfg.seed * 1000))
    assert 4 < steps <= LOSS_POINTS_PER_EPOCH  # so a point per batch
    end_of_first = next(w for w in progress.writes if w["progress"] == 1.0)
    assert end_of_first["history"] == []  # the epoch's record is not written yet; its curves are
    assert [epoch for epoch, _ in end_of_first["loss"]] == [round(step / steps, 4) for step in range(1, steps + 1)]
    at = [epoch for epoch, _ in end_of_first["dev"]]  # four evaluations spread over the epoch, the last at its end
    assert len(at) == 4 and at == sorted(at) and 0 < at[0] < 0.5 and at[-1] == 1.0
    last = progress.writes[-1]
    assert len(last["dev"]) == 8 and [accuracy for _, accuracy in last["dev"]] == [
        accuracy for record in trainer.history for accuracy in record["dev_evals"]
    ]
