"""`make bench`: accuracy, training speed, inference latency, scaling, memory and the served app,
written to docs/benchmarks.{md,json} and docs/scaling.svg. `python -m tools.bench --help`."""
