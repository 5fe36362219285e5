"""The bundled checkpoints: configs/bundled.toml (config), training and compaction into checkpoints/
(bundle), their model cards (cards), and publishing them as a Hub model repo (push)."""
