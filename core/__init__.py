"""The lab's engine: text -> tokens -> ids -> model -> prediction with explanation data.

    from core import Lab
    lab = Lab.load()                      # the bundled checkpoints (or the Hub's, see configs/hub.toml)
    p = lab.predict("it is not a bad film", "dcnn")

Packages: data (tasks, vocab, vectors, batches), models (one file per paper), training, checkpoints,
analysis. Modules: text (tokenizers), views (the models' explanation data), notices (coded messages),
predict (Lab), answers (answers kept for a sentence asked again), wire (the one serialiser of core's dataclasses),
gitinfo.
Serving lives above core: service/ (jobs, the model worker process, owners) and web/ (Gradio's server).
"""

import importlib

# exported lazily: `import core.text` must not load torch (the front end imports core's light modules)
_EXPORTS = {"Lab": "core.predict", "Prediction": "core.predict", "MODELS": "core.models", "PAPER_MODELS": "core.models"}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
