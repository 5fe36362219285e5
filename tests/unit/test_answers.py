"""core.answers (the owner in its key: service.lab): an identical request is answered from the cache with the very
answer the models give, the cache holds at most its capacity, and an answer is never given for another owner's or
another checkpoint's model."""

import json
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.analysis.treebank import Treebank
from core.answers import AnswerCache, checkpoint_identity
from core.notices import InputError
from core.predict import Lab
from service.lab import ServedLab
from service.owners import KEY, owner_id

TEXTS = ["it is not a bad film", "a good film", "the plot is dull", "a moving and funny film", "not good"]
ALICE, BOB = owner_id(KEY, "alice's key, long enough"), owner_id(KEY, "bob's key, long enough too")


@pytest.fixture
def cached(lab_root):
    lab = ServedLab.load(lab_root)
    lab.answers = AnswerCache(capacity=3)
    return lab


def test_a_kept_answer_is_the_one_the_models_give(cached, lab):
    first = cached.predict(TEXTS[0], "dcnn", task="sst5", methods="all")
    again = cached.predict(TEXTS[0], "dcnn", task="sst5", methods="all")
    assert again is first and cached.answers.hits == 1
    assert again.to_dict() == lab.predict(TEXTS[0], "dcnn", task="sst5", methods="all").to_dict()
    # /compare uses the kept answer of the model /predict ran, and runs (and keeps) the others
    assert [p.to_dict() for p in cached.compare(TEXTS[0], task="sst5", methods="all").predictions] == [
        p.to_dict() for p in lab.compare(TEXTS[0], task="sst5", methods="all").predictions
    ]


def test_what_differs_is_asked_again(cached):
    base = cached.predict(TEXTS[1], "mrnn", task="sst5")
    variants = [
        cached.predict(TEXTS[1], "mrnn", task="sst5", methods="all"),
        cached.predict(TEXTS[1], "mrnn", task="sst5", lang="en"),
        cached.predict(TEXTS[1] + " ", "mrnn", task="sst5"),
        cached.predict(TEXTS[1], "dcnn", task="sst5"),
    ]
    assert all(v is not base for v in variants) and cached.answers.hits == 0


def test_the_cache_holds_at_most_its_capacity_least_recent_first(cached):
    for text in TEXTS:
        cached.predict(text, "mrnn", task="sst5")
    assert len(cached.answers) == 3
    cached.predict(TEXTS[-1], "mrnn", task="sst5")
    assert cached.answers.hits == 1
    cached.predict(TEXTS[0], "mrnn", task="sst5")  # evicted: run again
    assert cached.answers.hits == 1 and len(cached.answers) == 3


def test_long_texts_are_not_kept(lab_root):
    lab = Lab.load(lab_root)
    lab.answers = AnswerCache(max_words=3)
    for _ in range(2):
        lab.predict("a moving and funny film", "mrnn", task="sst5")
    assert len(lab.answers) == 0 and lab.answers.hits == 0


def _own_task(source, folder):
    """A copy of the checkpoint `source` served as the task "mine" (its files, hence their hashes, unchanged)."""
    shutil.copytree(source, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "task": "mine"}))
    return folder


def test_an_owners_answer_is_never_anothers(cached, lab_root, tmp_path):
    alices = _own_task(lab_root / "sst5" / "dcnn", tmp_path / "alice")
    bobs = _own_task(lab_root / "sst2" / "dcnn", tmp_path / "bob")
    cached.add_checkpoint(alices, owner=ALICE)
    answer = cached.visible_to(ALICE).predict(TEXTS[0], "dcnn", task="mine")
    assert cached.visible_to(ALICE).predict(TEXTS[0], "dcnn", task="mine") is answer
    with pytest.raises(InputError):  # Bob does not see Alice's task at all
        cached.visible_to(BOB).predict(TEXTS[0], "dcnn", task="mine")
    # Alice's model goes and Bob's own takes the task's name: Bob gets his model's answer, never the kept one
    cached.remove_checkpoints([alices])
    cached.add_checkpoint(bobs, owner=BOB)
    bob = cached.visible_to(BOB).predict(TEXTS[0], "dcnn", task="mine")
    fresh = ServedLab({}).visible_to(BOB)
    fresh.add_checkpoint(bobs, owner=BOB)
    assert bob is not answer and bob.to_dict() == fresh.predict(TEXTS[0], "dcnn", task="mine").to_dict()
    assert len(bob.labels) == 2 and len(answer.labels) == 5


def test_a_checkpoints_identity_names_its_owner_folder_and_files(lab):
    ckpt = lab.checkpoints[("sst5", "dcnn")]
    same = checkpoint_identity(ckpt, "bundled")
    assert same == checkpoint_identity(ckpt, "bundled")
    assert same != checkpoint_identity(lab.checkpoints[("sst2", "dcnn")], "bundled")
    retrained = type(ckpt)(ckpt.model, ckpt.vocab, {**ckpt.meta, "files": {"model.safetensors": "0" * 64}}, ckpt.path)
    assert same != checkpoint_identity(retrained, "bundled")
    alices, bobs = (ServedLab(lab.checkpoints, owners={"sst5": owner}) for owner in (ALICE, BOB))
    assert alices.answer_identity(("sst5", "dcnn")) != bobs.answer_identity(("sst5", "dcnn"))


def test_a_tree_is_kept_per_owner_and_checkpoint(cached, lab_root, tiny_data, tmp_path, monkeypatch):
    import service.lab

    treebank = Treebank.load(tiny_data)
    views = []
    real = service.lab.tree_view
    monkeypatch.setattr(service.lab, "tree_view", lambda *args: views.append(args) or real(*args))
    first = cached.tree_view(treebank, "test", 0, "sst5")
    assert cached.visible_to(ALICE).tree_view(treebank, "test", 0, "sst5") is first and len(views) == 1
    assert cached.tree_view(treebank, "test", 1, "sst5") is not first and len(views) == 2
    # a checkpoint of the task retrained in place (new file hashes): the tree is classified again
    ckpt = cached.checkpoints[("sst5", "dcnn")]
    monkeypatch.setitem(ckpt.meta, "files", {**ckpt.meta["files"], next(iter(ckpt.meta["files"])): "another hash"})
    assert cached.tree_view(treebank, "test", 0, "sst5") is not first and len(views) == 3


def test_requests_for_one_key_at_once_wait_for_one_computation():
    answers, started, release = AnswerCache(), threading.Event(), threading.Event()
    computed: list[str] = []

    def slow():
        computed.append("first")
        started.set()
        release.wait(5)
        return "drawn"

    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(answers.kept, "link", slow)
        started.wait(5)
        again = lambda: computed.append("again") or "again"
        others = [pool.submit(answers.kept, "link", again) for _ in range(3)]
        time.sleep(0.2)  # the others are waiting on the first
        release.set()
        assert [f.result(5) for f in [first, *others]] == ["drawn"] * 4
    assert computed == ["first"] and answers.get("link") == "drawn"


def test_when_the_first_computation_fails_each_waiting_request_computes_its_own():
    answers, started, release = AnswerCache(), threading.Event(), threading.Event()

    def failing():
        started.set()
        release.wait(5)
        raise RuntimeError("the visitor left")

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(answers.kept, "link", failing)
        started.wait(5)
        other = pool.submit(answers.kept, "link", lambda: "its own")
        time.sleep(0.2)
        release.set()
        with pytest.raises(RuntimeError):
            first.result(5)
        assert other.result(5) == "its own"


def test_an_answer_its_caller_does_not_keep_is_computed_again():
    answers = AnswerCache()
    assert answers.kept("failed", lambda: "one model failed", keep=lambda _: False) == "one model failed"
    assert answers.kept("failed", lambda: "answered", keep=lambda _: False) == "answered"
    assert answers.get("failed") is None
