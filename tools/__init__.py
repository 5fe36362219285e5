"""The product's tools: the bundled checkpoints and their Hub release (release/), word vectors, every
checkpoint's evaluation and probes, attributions and results as datasets, the import graph, docs/commands.md.
Measurement is in tools/bench/, research in tools/research/ (their make targets: bench.mk). They import `core`;
nothing under `core`, `service`, `web`, `demo` or app.py imports them.
"""
