"""Checkpoints: the on-disk format (safetensors + JSON), file hashes, the bundled manifest, Hub resolution and
the models users train here (installed under $LAB_USER_MODELS)."""
