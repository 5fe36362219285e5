# Compositional sentence-model lab. `make help` lists the targets.
PY_SYS ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
MODEL  ?= tensor_cnn
TASK   ?= sst5
SEED   ?= 1
export HF_HUB_DISABLE_TELEMETRY := 1
export GRADIO_ANALYTICS_ENABLED := False
# Python writes each module's bytecode the first time it is imported (these machines set PYTHONDONTWRITEBYTECODE,
# so every process compiled every module again: importing service.jobs 7.1 against 3.5 CPU-s); compiling the
# whole venv at install instead took 81 s of a fresh clone's 103 s (docs/performance.md, "The test loop")
unexport PYTHONDONTWRITEBYTECODE
.DEFAULT_GOAL := help
# -- set up, serve, check ------------------------------------------------------------------------------
.PHONY: help install install-app demo lint test test-quick test-e2e clean
help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_%-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "} {printf "  make %-20s %s\n", $$1, $$2}'
# Two stages in one .venv: the app's run-time packages (pyproject's dependencies: what `make demo` needs), then
# the extras for training, tools, tests and browser tests. Neither reads requirements.txt: its
# --extra-index-url (the Space's CPU torch) would make pip ask download.pytorch.org for every package, retried
# five times where that host cannot be reached; here torch==2.13.0 resolves to the local CPU wheel.
$(VENV)/.app-installed: pyproject.toml constraints.txt
	test -x $(PY) || $(PY_SYS) -m venv $(VENV)
	tools/install.sh $(PY) -c constraints.txt -e .
	touch $@
$(VENV)/.installed: $(VENV)/.app-installed
	tools/install.sh $(PY) -c constraints.txt -e ".[dev]"
	touch $@
install-app: $(VENV)/.app-installed ## .venv with the app's run-time packages only (`pip install -e .`, by uv where it can be had: tools/install.sh)
install: $(VENV)/.installed ## .venv with the app's packages and the extras: train, tools, test, browser (`pip install -e ".[dev]"`)
demo: install-app ## serve the Gradio lab on http://127.0.0.1:7860 (installs the app's packages only)
	$(PY) app.py
lint: install ## ruff check, ruff format --check (line length 120) and mypy on every package: core/, service/, web/, demo/, tools/, app.py (settings: pyproject.toml)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
# pytest-xdist: a test file stays on one worker (its module's app is started once), the files that start a Ray share
# one (tests/conftest.py); two workers keep two cores busy without starving the timed checks; tests/ray (a Ray
# head's) goes first, its files in two groups, one per worker, and the short groups even out the ends
# (docs/performance.md, "The test loop")
TEST_WORKERS ?= 2
PYTEST_PARALLEL = HF_HUB_OFFLINE=1 $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup
test: install ## the whole suite but the browser's (offline, no GPU) on TEST_WORKERS processes: tests/unit, tests/app and tests/ray (a real Ray head's), with the tests that start real processes at length (a SIGKILLed app, 1,000 sessions, a class)
	$(PYTEST_PARALLEL) -m "not e2e and not oracle"
test-quick: install ## the suite without its slow tests (marker `slow`: a Ray head, a SIGKILLed app, a class), for the edit-test loop
	$(PYTEST_PARALLEL) -m "not e2e and not slow and not oracle"
test-e2e: install ## browser tests, tests/browser, with Debian chromium (apt-get install chromium fonts-wqy-microhei)
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -m e2e
clean: ## remove the tokenized-task cache and Gradio's cached examples (keeps runs/ and word vectors)
	rm -rf .cache/tasks .gradio/cached_examples .pytest_cache .mypy_cache .ruff_cache
# -- train -----------------------------------------------------------------------------------------
.PHONY: train train-one train-data vectors vectors-sets vectors-sets-zh evaluate-all
DATA ?=
TEXT_COLUMN ?=
LABEL_COLUMN ?=
TRAIN_PARALLEL ?= 2
train: install ## retrain the bundled checkpoints of configs/bundled.toml as Ray tasks, TRAIN_PARALLEL at a time (all at once on RAY_ADDRESS's cluster; 0: one after another), then make evaluate-all
	$(PY) -m tools.release.bundle train --parallel $(TRAIN_PARALLEL) $(BUNDLE_ARGS)
	$(MAKE) evaluate-all
train-one: install ## train one model: make train-one MODEL=dcnn TASK=sst2 SEED=2
	$(PY) -m core.training.train --model $(MODEL) --task $(TASK) --phrases --seed $(SEED)
train-data: install ## train a model on your own labelled file: make train-data DATA=reviews.csv MODEL=dcnn [TEXT_COLUMN=review LABEL_COLUMN=stars]
	$(if $(DATA),,$(error set DATA=path/to/file.csv))
	$(PY) -m service.user_models --model $(MODEL) --data $(DATA) $(if $(TEXT_COLUMN),--text-column $(TEXT_COLUMN)) $(if $(LABEL_COLUMN),--label-column $(LABEL_COLUMN)) --resume
vectors: install ## train our English and Chinese word2vec vectors into .cache/vectors (~16 CPU-min for English)
	$(PY) -m tools.vectors --lang en
	$(PY) -m tools.vectors --lang zh
vectors-sets: install ## the English sets the probe compares with word2vec: fastText, GloVe, wordllama -> .cache/vectors/en-<method>
	$(PY) -m tools.vectors --lang en --method fasttext --out .cache/vectors/en-fasttext
	$(PY) -m tools.vectors --lang en --method glove --window 10 --epochs 10 --out .cache/vectors/en-glove
	$(PY) -m tools.vectors --lang en --method wordllama --out .cache/vectors/en-wordllama
vectors-sets-zh: install ## the Chinese set the zh probe compares with word2vec: fastText over 1..3-character n-grams -> .cache/vectors/zh-fasttext
	$(PY) -m tools.vectors --lang zh --method fasttext --min-n 1 --max-n 3 --out .cache/vectors/zh-fasttext
evaluate-all: install ## every checkpoint on its test set -> <task>/<model>/evaluation.json (the Treebank tab), reports/treebank.md
	nice -n 10 $(PY) -m tools.evaluate_all --threads 1 $(EVAL_ARGS)
# -- the shipped checkpoints' reports and datasets -----------------------------------------------------
.PHONY: probes attribute export-results checkpoints-report
probes: install ## behavioural probe pass rates of the shipped checkpoints -> reports/probes.md
	$(PY) -m tools.probes

LIMIT ?= 200
SPLIT ?= test
attribute: install ## word attributions as a dataset: make attribute TASK=sst5 SPLIT=test [LIMIT=200] -> exports/
	$(PY) -m tools.attribute --task $(TASK) --split $(SPLIT) --limit $(LIMIT)

export-results: install ## the shipped checkpoints' predictions on a split and their probe results as datasets: make export-results TASK=sst5 SPLIT=test -> exports/results/
	$(PY) -m tools.export_results --task $(TASK) --split $(SPLIT)

checkpoints-report: install ## words, unknown test tokens and accuracy of the shipped checkpoints, and their size -> reports/checkpoints.md
	$(PY) -m tools.release.bundle report

# -- release ---------------------------------------------------------------------------------------
.PHONY: check-checkpoints space-check import-graph push commands settings-table gradio-upgrade-check

check-checkpoints: install ## verify checkpoints/ (manifest, size budget, every checkpoint loads)
	$(PY) -m tools.release.bundle check

space-check: install ## the Space from a clean venv: requirements.txt alone (public index), app.py offline answers /predict -> reports/space_check.json
	HF_HUB_OFFLINE=1 $(PY) -m tools.release.space_check

import-graph: install ## the project's module import graph; fails on an import cycle
	$(PY) -m tools.import_graph

GRADIO ?=
gradio-upgrade-check: install ## the internals web/ uses, tested with another Gradio (GRADIO=6.x.y; default the newest 6.x on the index; not in CI)
	$(PY) -m tools.gradio_upgrade_check $(if $(GRADIO),--version $(GRADIO))

commands: install ## docs/commands.md, written from the target descriptions of this Makefile and bench.mk
	$(PY) -m tools.commands

settings-table: install ## docs/space.md's settings table, written from service/settings.py's fields
	$(PY) -m service.settings --write docs/space.md

push: install ## upload checkpoints to the Hub: make push HUB_REPO=user/name [DRY_RUN=1]
	$(if $(HUB_REPO),,$(error set HUB_REPO=user/name))
	$(PY) -m tools.release.push --repo $(HUB_REPO) $(if $(DRY_RUN),--dry-run)

# measurement and research: their own targets (bench.mk)
include bench.mk
