"""Tools that measure, train and publish the lab: benchmarks, load test, word vectors, the bundled
checkpoints and their Hub release. They import `core`; nothing under `core`, `demo` or app.py imports them.
"""
