import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest
import torch

import core.checkpoints.checkpoint as checkpoint_module
import core.training.config as run_module
from core.checkpoints.checkpoint import CheckpointError, load_checkpoint
from core.data.batching import bucket_batches, pad_batch
from core.data.vectors import Vectors, save_vectors
from core.gitinfo import git_commit
from core.models.nbow import NBoWConfig
from core.training.config import build_run, model_config, model_overrides
from core.training.train import DenseGradientAdadelta, TrainConfig, Trainer, main, parse_args

ROOT = Path(__file__).resolve().parents[2]


def _config(tiny_data, out, **kw):
    base = dict(
        model="nbow",
        task="sst5",
        phrases=True,
        epochs=4,
        vectors="none",
        out=str(out),
        data_dir=str(tiny_data),
        set=["embed_dim=16", "hidden=12"],
        progress=False,
        batch_size=8,
    )
    base.update(kw)
    return TrainConfig(**base)


def test_buckets_have_one_length_and_cover_everything(tiny_data):
    run = build_run(_config(tiny_data, "/tmp/unused"))
    batches = bucket_batches(run.task.train, run.vocab, 8, seed=3)
    assert sum(len(b.labels) for b in batches) == len(run.task.train)
    assert all((b.lengths == b.ids.shape[1]).all() for b in batches)
    again = bucket_batches(run.task.train, run.vocab, 8, seed=3)
    assert all(torch.equal(a.ids, b.ids) for a, b in zip(batches, again))


def test_training_learns_and_checkpoint_reloads_identically(tiny_data, tmp_path):
    metrics = Trainer.from_config(_config(tiny_data, tmp_path, epochs=12, lr=0.3)).fit()
    assert metrics["test"]["accuracy"] > 0.5  # 5 classes: chance is about 0.2
    assert len(metrics["test"]["confusion"]) == 5 and set(metrics["test"]["per_class"]) == {
        "very negative",
        "negative",
        "neutral",
        "positive",
        "very positive",
    }
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["best_epoch"] == metrics["best_epoch"] and len(saved["epoch_seconds"]) == metrics["epochs_run"]
    first, second = load_checkpoint(tmp_path / "best"), load_checkpoint(tmp_path / "best")
    batch = pad_batch([first.vocab.encode(["not", "good"]), first.vocab.encode(["the", "movie", "is", "bad"])])
    with torch.no_grad():
        assert torch.equal(first.model(batch.ids, batch.lengths).logits, second.model(batch.ids, batch.lengths).logits)


def test_embed_l2_shrinks_the_embedding_rows_batches_use(tiny_data, tmp_path):
    weights = {}
    for l2 in (0.0, 0.05):
        trainer = Trainer.from_config(_config(tiny_data, tmp_path / str(l2), embed_l2=l2))
        assert trainer.model.embedding.weight.requires_grad and trainer.model.embedding.sparse
        trainer.train_epoch()
        weights[l2] = trainer.model.embedding.weight.detach()
    used = torch.unique(torch.cat([b.ids.flatten() for b in bucket_batches(trainer.task.train, trainer.vocab, 8)]))
    unused = torch.ones(len(weights[0.0]), dtype=torch.bool)
    unused[used] = False
    assert unused[0] and torch.equal(weights[0.05][unused], weights[0.0][unused])  # e.g. padding: never looked up
    assert weights[0.05][used].norm() < weights[0.0][used].norm()


def test_adadelta_trains_the_embedding_by_densifying_its_sparse_gradients(tiny_data, tmp_path):
    # Adadelta has no sparse variant: its optimizer densifies the embedding's gradients, the model stays as built
    run = build_run(_config(tiny_data, tmp_path, optimizer="adadelta", lr=1.0))
    built = repr(run.model)
    trainer = Trainer(run)
    assert repr(trainer.model) == built and "sparse=True" in built
    assert [type(o) for o in trainer.optimizers] == [DenseGradientAdadelta]
    before = trainer.model.embedding.weight.detach().clone()
    trainer.train_epoch()
    used = torch.unique(torch.cat([b.ids.flatten() for b in bucket_batches(trainer.task.train, trainer.vocab, 8)]))
    assert not torch.equal(trainer.model.embedding.weight.detach()[used], before[used])


def test_resume_equals_uninterrupted_run(tiny_data, tmp_path):
    full = Trainer.from_config(_config(tiny_data, tmp_path / "full")).fit()
    Trainer.from_config(_config(tiny_data, tmp_path / "cut", epochs=2)).fit()
    resumed = Trainer.from_config(_config(tiny_data, tmp_path / "cut", resume=True)).fit()
    assert resumed["test"] == full["test"] and resumed["dev_accuracy"] == full["dev_accuracy"]


def test_resume_refuses_changed_settings_and_allows_more_epochs(tiny_data, tmp_path, capsys):
    Trainer.from_config(_config(tiny_data, tmp_path, epochs=2, lr=0.3)).fit()
    saved = (tmp_path / "state" / "state.json").read_bytes()
    args = [
        "--model",
        "nbow",
        "--task",
        "sst5",
        "--phrases",
        "--epochs",
        "2",
        "--vectors",
        "none",
        "--out",
        str(tmp_path),
        "--data-dir",
        str(tiny_data),
        "--set",
        "embed_dim=16",
        "--set",
        "hidden=12",
        "--no-progress",
        "--resume",
    ]
    assert main(args + ["--lr", "5.0", "--batch-size", "7"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "lr: 0.3 -> 5.0" in err and "batch_size: 8 -> 7" in err
    assert (tmp_path / "state" / "state.json").read_bytes() == saved  # nothing trained
    # more epochs (and another patience) continue the same run, and metrics.json records them
    metrics = Trainer.from_config(_config(tiny_data, tmp_path, epochs=4, lr=0.3, patience=9, resume=True)).fit()
    assert (
        metrics["epochs_run"] == 4 and metrics["train_config"]["epochs"] == 4 and metrics["train_config"]["lr"] == 0.3
    )
    assert len((tmp_path / "log.jsonl").read_text().splitlines()) == 4


def test_build_run_resolves_a_copy_of_the_config(tiny_data, tmp_path):
    cfg = _config(tiny_data, tmp_path)
    run = build_run(cfg)
    assert (cfg.optimizer, cfg.lr, cfg.evals_per_epoch) == (None, None, None)  # the caller's config is untouched
    assert (run.config.optimizer, run.config.lr, run.config.evals_per_epoch, run.config.adagrad_reset) == (
        "adagrad",
        0.1,
        1,
        0,
    )
    assert run.config.batch_size == 8 and run.config.epochs == 4  # what the caller set stays


def test_model_config_sources_in_order():
    """dataclass defaults < task preset < what the vectors imply < --set; vocab_size and num_classes from the data."""
    task, vocab, vectors = types.SimpleNamespace(labels=["a", "b", "c"]), ["w"] * 23, types.SimpleNamespace(dim=6)

    def config(task_name, vectors, *pairs):
        return model_config(TrainConfig(model="tensor_cnn", task=task_name, set=list(pairs)), task, vocab, vectors)

    fixed = config("sst5", vectors)  # the paper keeps its vectors fixed: the model takes their size
    assert (fixed.embed_dim, fixed.freeze_embeddings, fixed.vocab_size, fixed.num_classes) == (6, True, 23, 3)
    preset = config("zh_news", vectors)  # the preset trains the vectors: the model keeps its size (PCA)
    assert (preset.embed_dim, preset.freeze_embeddings, preset.num_layers) == (300, False, 2)
    untrained = config("sst5", None)  # no pretrained vectors: the random ones are trained
    assert (untrained.embed_dim, untrained.freeze_embeddings) == (300, False)
    overridden = config("zh_news", None, "embed_dim=4", "num_layers=1", "freeze_embeddings=true", "vocab_size=5")
    assert (overridden.embed_dim, overridden.num_layers, overridden.freeze_embeddings, overridden.vocab_size) == (
        4,
        1,
        True,
        23,
    )


def test_git_commit_reads_loose_packed_detached_and_worktree_heads(tmp_path):
    loose, packed, feature, detached = (
        "1234567" + "a" * 33,
        "89abcde" + "b" * 33,
        "fedcba9" + "c" * 33,
        "7654321" + "d" * 33,
    )
    repo, git = tmp_path / "repo", tmp_path / "repo" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(loose + "\n")
    (git / "packed-refs").write_text(
        f"# pack-refs with: peeled fully-peeled sorted\n{packed} refs/heads/main\n"
        f"{feature} refs/heads/feature\n^{detached}\n"
    )
    assert git_commit(repo) == "1234567"  # a loose ref is newer than its packed line
    (git / "refs" / "heads" / "main").unlink()
    assert git_commit(repo) == "89abcde"
    worktree, worktree_git = tmp_path / "wt", git / "worktrees" / "wt"
    worktree_git.mkdir(parents=True)
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {worktree_git}\n")
    (worktree_git / "HEAD").write_text("ref: refs/heads/feature\n")
    (worktree_git / "commondir").write_text("../..\n")
    assert git_commit(worktree) == "fedcba9"
    (git / "HEAD").write_text(detached + "\n")
    assert git_commit(repo) == "7654321"
    assert git_commit(tmp_path / "not-a-checkout") == ""
    if (ROOT / ".git").exists() and shutil.which("git"):  # and this checkout, as git itself reads it
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        assert git_commit(ROOT) == head[:7]


def test_sigkill_at_random_points_then_resume(tiny_data, tmp_path):
    """Kill a real training process 3 times at random moments of its training; the resumed run ends exactly where
    an uninterrupted one does, and every file on disk stays loadable. Each kill waits for the process's first log
    line (from then on it trains: its imports, seconds of them, are behind it) and lands at a uniform moment of the
    next epoch and a half: in a batch, the dev evaluation or the saves that end an epoch. Three such kills reach
    more of training than kills timed from the process's start, which landed in its imports on a busy machine. The
    uninterrupted run and the last resume run in this process (the same main(); the resume reads what the kills
    left). Four epochs are enough: the seeded moments (1.27, 1.14 and 0.63 epochs after the line) kill in epochs
    3, 4 and 4, and the last resume still has epoch 4 to train (six epochs trained two more on each side for no
    other kill)."""
    args = [
        "--model",
        "nbow",
        "--task",
        "sst5",
        "--phrases",
        "--epochs",
        "4",
        "--patience",
        "4",
        "--vectors",
        "none",
        "--data-dir",
        str(tiny_data),
        "--set",
        "embed_dim=16",
        "--set",
        "hidden=12",
        "--batch-size",
        "4",
        "--threads",
        "1",
    ]
    assert main([*args, "--out", str(tmp_path / "ref")]) == 0
    reference = json.loads((tmp_path / "ref" / "metrics.json").read_text())
    epoch = max(reference["epoch_seconds"])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    rng = random.Random(0)
    out = tmp_path / "killed"
    for _ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-m", "core.training.train", *args, "--out", str(out), "--resume"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        while (line := proc.stderr.readline()) and not (" resumed " in line or " epoch " in line):
            pass  # until it trains: "resumed ... after epoch n" (a fresh run: "epoch 1 ...")
        time.sleep(rng.uniform(0, 1.5 * epoch))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        if (out / "best").exists():
            load_checkpoint(out / "best")  # never half-written
        assert not list(out.rglob("*.tmp")) or all(p.name.startswith(".") for p in out.rglob("*.tmp"))
    assert main([*args, "--out", str(out), "--resume"]) == 0
    got = json.loads((out / "metrics.json").read_text())
    assert got["test"] == reference["test"] and got["best_epoch"] == reference["best_epoch"]


def test_nan_loss_stops_with_message_and_keeps_last_state(tiny_data, tmp_path, monkeypatch):
    trainer = Trainer.from_config(_config(tiny_data, tmp_path, epochs=3))
    trainer.cfg.epochs = 1
    trainer.fit()
    saved = (tmp_path / "state" / "state.json").read_bytes()
    trainer.cfg.epochs = 3
    original = trainer.model.forward

    def nan_forward(*args, **kwargs):
        out = original(*args, **kwargs)
        out.loss = out.loss * float("nan")
        return out

    monkeypatch.setattr(trainer.model, "forward", nan_forward)
    with pytest.raises(FloatingPointError, match="loss became nan"):
        trainer.fit()
    assert (tmp_path / "state" / "state.json").read_bytes() == saved
    load_checkpoint(tmp_path / "best")


def test_failed_write_keeps_previous_checkpoint(tiny_data, tmp_path, monkeypatch):
    Trainer.from_config(_config(tiny_data, tmp_path, epochs=1)).fit()
    before = (tmp_path / "best" / "model.safetensors").read_bytes()
    ckpt = load_checkpoint(tmp_path / "best")

    def disk_full(tensors, path):
        Path(path).write_bytes(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoint_module, "save_file", disk_full)
    with pytest.raises(OSError):
        checkpoint_module.save_checkpoint(tmp_path / "best", ckpt.model, ckpt.vocab, ckpt.meta)
    assert (tmp_path / "best" / "model.safetensors").read_bytes() == before
    load_checkpoint(tmp_path / "best")
    assert not [p for p in (tmp_path / "best").iterdir() if p.name.endswith(".tmp")]


def test_a_state_save_cut_short_leaves_the_state_before_it(tmp_path, monkeypatch):
    """A kill between the training state's tensors and its JSON (a CI run's resume once found the next epoch's
    tensors beside the last one's JSON and refused): the state before the save loads, whole."""
    checkpoint_module.save_training_state(tmp_path, {"w": torch.ones(3), "epoch": 1})

    def killed(path, text):
        raise KeyboardInterrupt  # as a SIGKILL: nothing after the tensors is written

    monkeypatch.setattr(checkpoint_module, "atomic_write_text", killed)
    with pytest.raises(KeyboardInterrupt):
        checkpoint_module.save_training_state(tmp_path, {"w": torch.zeros(3), "epoch": 2})
    state = checkpoint_module.load_training_state(tmp_path)
    assert state["epoch"] == 1 and torch.equal(state["w"], torch.ones(3))
    monkeypatch.undo()
    checkpoint_module.save_training_state(tmp_path, {"w": torch.full((3,), 3.0), "epoch": 3})
    assert checkpoint_module.load_training_state(tmp_path)["epoch"] == 3
    assert len(list(tmp_path.glob("*.safetensors"))) == 1  # the cut save's tensors and the old ones gone


def test_corrupt_missing_and_mismatched_checkpoints(tiny_data, tmp_path):
    Trainer.from_config(_config(tiny_data, tmp_path, epochs=1)).fit()
    best = tmp_path / "best"
    weights = best / "model.safetensors"
    good = weights.read_bytes()
    weights.write_bytes(good[:-10])
    with pytest.raises(CheckpointError, match="model.safetensors does not match the sha256"):
        load_checkpoint(best)
    with pytest.raises(CheckpointError, match="not a valid safetensors"):
        load_checkpoint(best, verify=False)
    weights.write_bytes(good)
    config = json.loads((best / "config.json").read_text())
    config["config"]["hidden"] = 99
    (best / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="does not match its config|has shape"):
        load_checkpoint(best)
    config["config"]["bogus"] = 1
    (best / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="invalid model configuration"):
        load_checkpoint(best)
    (best / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="config.json is not valid JSON"):
        load_checkpoint(best)
    (best / "config.json").unlink()
    with pytest.raises(CheckpointError, match="config.json is missing"):
        load_checkpoint(best)
    pickle_file = tmp_path / "model.pt"
    pickle_file.write_bytes(b"\x80\x04")
    with pytest.raises(CheckpointError, match="refusing a pickle"):
        load_checkpoint(pickle_file)


def test_cli_parsing_and_clear_errors(tmp_path, capsys):
    cfg = parse_args(["--model", "dcnn", "--phrases", "--lr", "0.5", "--set", "embed_dim=8"])
    assert cfg.model == "dcnn" and cfg.phrases and cfg.lr == 0.5 and cfg.set == ["embed_dim=8"]
    assert model_overrides(NBoWConfig, ["hidden=7", "freeze_embeddings=false"]) == {
        "hidden": 7,
        "freeze_embeddings": False,
    }
    from core.models.dcnn import DCNNConfig

    assert model_overrides(DCNNConfig, ["widths=3,2", "maps=4,5"]) == {"widths": [3, 2], "maps": [4, 5]}
    with pytest.raises(ValueError, match="expected key=value"):
        model_overrides(NBoWConfig, ["nonsense=1"])
    assert main(["--model", "nbow", "--data-dir", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_default_output_dir_names_task_seed_and_fold():
    assert parse_args(["--model", "dcnn", "--task", "sst5", "--phrases", "--seed", "2"]).output_dir().parts[-2:] == (
        "sst5-phrases",
        "dcnn-s2",
    )
    assert parse_args(["--model", "adasent", "--task", "mr"]).output_dir().parts[-2:] == ("mr", "adasent-s1")
    # cross-validation folds of one seed must not overwrite each other
    assert parse_args(["--model", "adasent", "--task", "mr", "--fold", "3"]).output_dir().name == "adasent-s1-f3"


def test_smaller_models_get_pca_reduced_vectors_unless_the_paper_used_random(tiny_data, tmp_path, monkeypatch):
    words = ["good", "bad", "not", "movie", "the", "dull", "great", "plot"]
    rng = np.random.default_rng(1)
    save_vectors(Vectors(words, rng.normal(size=(len(words), 12)).astype(np.float32)), tmp_path / "vec")
    vec = str(tmp_path / "vec.safetensors")
    adasent = build_run(
        _config(tiny_data, tmp_path / "a", model="adasent", vectors=vec, set=["embed_dim=4", "hidden_dim=4"])
    )
    assert adasent.coverage["pca_from"] == 12 and adasent.model.embedding.weight.shape[1] == 4
    good = adasent.vocab.stoi["good"]
    assert adasent.model.embedding.weight[good].abs().sum() > 0
    # the DCNN's SST-2 runs start from random vectors (§5.2) when vectors are chosen automatically; SST-5 ones
    # from ours (better on dev)
    vectors_dir = tmp_path / "auto" / ".cache" / "vectors"
    save_vectors(Vectors(words, rng.normal(size=(len(words), 12)).astype(np.float32)), vectors_dir / "en")
    monkeypatch.setattr(run_module, "PROJECT_ROOT", tmp_path / "auto")
    dcnn = build_run(_config(tiny_data, tmp_path / "d", model="dcnn", task="sst2", vectors="auto", set=["embed_dim=4"]))
    assert dcnn.coverage is None
    dcnn = build_run(_config(tiny_data, tmp_path / "d5", model="dcnn", vectors="auto", set=["embed_dim=4"]))
    assert dcnn.coverage["pca_from"] == 12
    nbow = build_run(_config(tiny_data, tmp_path / "n", vectors="auto", set=["embed_dim=4", "hidden=4"]))
    assert nbow.coverage["pca_from"] == 12


def test_several_dev_evaluations_per_epoch_keep_the_best_one(tiny_data, tmp_path):
    trainer = Trainer.from_config(_config(tiny_data, tmp_path, epochs=2, evals_per_epoch=3))
    metrics = trainer.fit()
    evals = [dev for record in trainer.history for dev in record["dev_evals"]]
    assert len(evals) == 6 and metrics["dev_accuracy"] == max(evals)
    assert [r["dev_accuracy"] for r in trainer.history] == [r["dev_evals"][-1] for r in trainer.history]
    # the saved best checkpoint is the one that scored the best dev accuracy, wherever in the epoch it came
    best = load_checkpoint(tmp_path / "best")
    from core.analysis.metrics import evaluate

    assert evaluate(best.model, trainer.task.dev, best.vocab, trainer.task.labels)["accuracy"] == max(evals)


def test_adagrad_reset_restores_the_initial_accumulator(tiny_data, tmp_path):
    trainer = Trainer.from_config(_config(tiny_data, tmp_path, optimizer="adagrad", lr=0.1, adagrad_reset=1))
    trainer.train_epoch()
    optimizer = trainer.optimizers[0]
    sums = [s["sum"] for s in optimizer.state.values()]
    assert any(s.abs().sum() > 0 for s in sums)
    trainer.epoch = 1  # the next epoch starts with a reset, then trains on (so every accumulator is one epoch old)
    before = {id(s): s.clone() for s in sums}
    trainer.cfg.epochs, trainer.cfg.adagrad_reset = 2, 1
    trainer.optimizers[0].step = lambda: None  # observe the reset alone: no update after it
    trainer.train_epoch()
    assert all(float(s.abs().sum()) == 0.0 for s in sums) and any(before[id(s)].abs().sum() > 0 for s in sums)


def test_adagrad_root_eps_puts_epsilon_under_the_square_root(tiny_data, tmp_path):
    """adagrad_root_eps: one step is p - lr·g/√(g² + ε) (Lei's and Godin's AdaGrad), dense and sparse rows alike."""
    eps, lr = 1e-2, 0.1
    trainer = Trainer.from_config(
        _config(tiny_data, tmp_path, optimizer="adagrad", lr=lr, l2=0.0, adagrad_root_eps=eps)
    )
    model = trainer.model
    batch = bucket_batches(trainer.task.train, trainer.vocab, 8, seed=0)[0]
    model(batch.ids, batch.lengths, batch.labels).loss.backward()
    before = {name: p.detach().clone() for name, p in model.named_parameters() if p.grad is not None}
    grads = {name: p.grad.to_dense() if p.grad.is_sparse else p.grad.clone() for name, p in model.named_parameters()
             if p.grad is not None}  # fmt: skip
    assert model.embedding.weight.grad.is_sparse and len(before) > 2
    for optimizer in trainer.optimizers:
        optimizer.step()
    for name, p in model.named_parameters():
        if name in before:
            expected = before[name] - lr * grads[name] / torch.sqrt(grads[name] ** 2 + eps)
            assert torch.allclose(p.detach(), expected, atol=1e-6), name


def test_auto_vectors_take_a_tasks_own_best_set_and_fall_back_to_the_languages(tmp_path, monkeypatch, caplog):
    """--vectors auto: zh_news starts from the Chinese fastText set when it is built (it won on dev, docs/vectors.md),
    otherwise from the language's word2vec, saying which file is missing; other tasks always from the language's."""
    folder = tmp_path / ".cache" / "vectors"
    save_vectors(Vectors(["新闻"], np.ones((1, 4), np.float32)), folder / "zh")
    monkeypatch.setattr(run_module, "PROJECT_ROOT", tmp_path)
    news = TrainConfig(model="dcnn", task="zh_news", vectors="auto")
    assert run_module.vectors_file(news, "zh") == folder / "zh.safetensors"
    assert "zh-fasttext.safetensors are not built" in caplog.text
    save_vectors(Vectors(["新闻"], np.ones((1, 4), np.float32)), folder / "zh-fasttext")
    assert run_module.vectors_file(news, "zh") == folder / "zh-fasttext.safetensors"
    assert (
        run_module.vectors_file(TrainConfig(model="dcnn", task="zh_sentiment", vectors="auto"), "zh")
        == folder / "zh.safetensors"
    )
