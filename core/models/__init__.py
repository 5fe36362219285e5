"""The model registry: key -> class. Imported lazily so that loading one model never needs the others."""

import importlib

# key -> "module:Class" (module under core.models); the key is also the module name
MODELS = {
    "nbow": "NBoW",
    "tensor_cnn": "TensorCNN",
    "mrnn": "MRNN",
    "dcnn": "DCNN",
    "adasent": "AdaSent",
    "agt": "AGT",
}
PAPER_MODELS = ["tensor_cnn", "mrnn", "dcnn", "adasent", "agt"]


def model_class(key: str):
    if key not in MODELS:
        raise ValueError(f"unknown model {key!r}; choose one of {', '.join(MODELS)}")
    return getattr(importlib.import_module(f"core.models.{key}"), MODELS[key])
