"""The model registry: key -> class, the one list of models (the Makefile, the tools and the front end read it).
Imported lazily so that loading one model never needs the others."""

import importlib

# key -> class name in core.models.<key>: the baseline, then the papers' models in the order every table and
# menu shows them
MODELS = {
    "nbow": "NBoW",
    "tensor_cnn": "TensorCNN",
    "mrnn": "MRNN",
    "dcnn": "DCNN",
    "adasent": "AdaSent",
    "agt": "AGT",
}
BASELINES = ("nbow",)  # a reference model of no paper: trained and probed, never shipped in the lab
PAPER_MODELS = [key for key in MODELS if key not in BASELINES]


def model_class(key: str):
    if key not in MODELS:
        raise ValueError(f"unknown model {key!r}; choose one of {', '.join(MODELS)}")
    return getattr(importlib.import_module(f"core.models.{key}"), MODELS[key])
