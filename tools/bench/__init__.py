"""Measurement apart from the product. `make bench`: accuracy, training speed, inference latency, scaling,
memory and the served app, written to reports/benchmarks.{md,json} and reports/scaling.svg
(`python -m tools.bench --help`); beside it the load tests (loadtest, hall), the red team (redteam*), screenshots,
the browser and first-answer timings and training under load. Their make targets are in bench.mk."""
