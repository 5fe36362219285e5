"""`make bench`: accuracy, training speed, inference latency, scaling, memory and the served app,
written to reports/benchmarks.{md,json} and reports/scaling.svg. `python -m tools.bench --help`."""
