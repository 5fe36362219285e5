"""Models trained here are held in memory by recency (service.model_cache): at most `capacity` stay loaded, the
least recently used is dropped first, and an evicted one loads again from its folder when asked for."""

from service.lab import ServedLab
from service.model_cache import ModelCache

MODELS = ("tensor_cnn", "dcnn", "mrnn")


def test_the_least_recently_used_model_is_evicted_and_loads_again_when_asked_for(lab_root):
    lab = ServedLab({}, memory=ModelCache(capacity=2))
    folders = {m: lab_root / "sst5" / m for m in MODELS}
    for model in MODELS:
        assert lab.add_checkpoint(folders[model]) == ("sst5", model)
    assert list(lab.user_models.loaded) == [folders["dcnn"], folders["mrnn"]]  # tensor_cnn, the oldest, went
    assert sorted(lab.models("sst5")) == sorted(MODELS)  # an evicted model is still served
    lab.predict("a fine film", "dcnn", task="sst5")  # dcnn becomes the most recently used
    first = lab.predict("a fine film", "tensor_cnn", task="sst5")  # loaded again; mrnn, now the oldest, goes
    assert list(lab.user_models.loaded) == [folders["dcnn"], folders["tensor_cnn"]]
    again = lab.predict("a fine film", "tensor_cnn", task="sst5")
    assert first.probs == again.probs and lab.checkpoints[("sst5", "tensor_cnn")].meta["task"] == "sst5"


def test_a_model_loaded_again_inside_a_prediction_takes_gradients(lab_root):
    """An evicted model comes back while a prediction runs in inference mode; the gradient methods need its
    weights to be ordinary tensors."""
    lab = ServedLab({}, memory=ModelCache(capacity=1))
    for model in ("tensor_cnn", "agt"):
        lab.add_checkpoint(lab_root / "sst5" / model)  # agt evicts tensor_cnn
    p = lab.predict("a fine film", "tensor_cnn", task="sst5", methods=["occlusion", "integrated_gradients"])
    assert set(p.attributions) == {"occlusion", "integrated_gradients"}


def test_removed_checkpoints_are_no_longer_served_or_held(lab_root):
    lab = ServedLab({})
    for model in MODELS[:2]:
        lab.add_checkpoint(lab_root / "sst5" / model, "trained here")
    assert lab.remove_checkpoints([lab_root / "sst5" / "dcnn"]) == [("sst5", "dcnn")]
    assert lab.models("sst5") == ["tensor_cnn"] and ("sst5", "dcnn") not in lab.sources
    assert list(lab.user_models.loaded) == [lab_root / "sst5" / "tensor_cnn"]
