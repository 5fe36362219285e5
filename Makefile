# Compositional sentence-model lab. `make help` lists the targets.
PY_SYS ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
MODEL  ?= tensor_cnn
SAMPLES ?= 16
EPOCHS ?= 8
TASK   ?= sst5
SEED   ?= 1
PROFILE ?= plain
SOAK   ?= 5000
SOAK_MINUTES ?= 30
CLASS_MINUTES ?= 10
SESSIONS ?= 1200
SESSION_KIND ?= rest
export HF_HUB_DISABLE_TELEMETRY := 1
export GRADIO_ANALYTICS_ENABLED := False

.DEFAULT_GOAL := help

# -- set up, serve, check ------------------------------------------------------------------------------
.PHONY: help install install-app demo lint test test-slow test-e2e clean

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

# pytest-xdist: a test file stays on one worker (its module's app is started once); most tests wait on a served
# app or a child process, so three workers keep two cores busy (docs/performance.md, "The test loop")
TEST_WORKERS ?= 3
SLOW_WORKERS ?= 2

test: install ## run the test suite (offline, no GPU, TEST_WORKERS processes at once): tests/unit and tests/app
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not e2e and not slow and not oracle"

test-slow: install ## the tests that start real processes at length (a Ray head, a SIGKILLed app, 1,000 sessions, a class)
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -n $(SLOW_WORKERS) --dist loadfile -m "slow and not e2e and not oracle"

test-e2e: install ## browser tests, tests/browser, with Debian chromium (apt-get install chromium fonts-wqy-microhei)
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -m e2e

clean: ## remove the tokenized-task cache and Gradio's cached examples (keeps runs/ and word vectors)
	rm -rf .cache/tasks .gradio/cached_examples .pytest_cache .mypy_cache .ruff_cache

# -- train -----------------------------------------------------------------------------------------
.PHONY: train train-one train-data sweep vectors vectors-sets vectors-sets-zh evaluate-all
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

sweep: install ## Ray Tune search (random + ASHA): make sweep MODEL=dcnn TASK=sst5 [SAMPLES=16 EPOCHS=8]; resumes when re-run
	$(PY) -m tools.sweep --model $(MODEL) --task $(TASK) $(if $(filter sst5 sst2,$(TASK)),--phrases) --samples $(SAMPLES) --max-epochs $(EPOCHS)

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

# -- measure (each writes its reports/ file) -------------------------------------------------------
.PHONY: bench bench-smoke bench-browser first-answer screens probes loadtest app-cpu saturation redteam soak sessions train-load attribution attribute export-results ablations agt-layers agt-gradients tokenizer-agreement vectors-probe vectors-probe-zh checkpoints-report
PROBE_MODELS ?= nbow
# every other set of a language present: .cache/vectors/<lang>-<name>.safetensors -> --vectors <name>=.cache/vectors/<lang>-<name>
vector_sets = $(foreach f,$(sort $(wildcard .cache/vectors/$(1)-*.safetensors)),--vectors $(patsubst $(1)-%,%,$(basename $(notdir $(f))))=$(basename $(f)))

bench: install ## accuracy/speed/scale benchmarks -> reports/benchmarks.md
	$(PY) -m tools.bench

bench-smoke: install ## a seconds-long version of the benchmarks (CI)
	$(PY) -m tools.bench --smoke

bench-browser: install ## the lab in Debian chromium: click to settled page, 'All five' and one model, laptop and phone (390 px) -> reports/browser.md
	HF_HUB_OFFLINE=1 $(PY) -m tools.bench.browser --rounds 5

first-answer: install ## a fresh clone's `make demo`: seconds to its installed .venv and to its first /compare (uv, else pip)
	$(PY) -m tools.bench.first_answer

screens: install ## screenshots of the Lab at 390, 768 and 1400 px, English and Chinese, bundled checkpoints -> reports/screens/
	HF_HUB_OFFLINE=1 $(PY) -m tools.screens

probes: install ## behavioural probe pass rates of the shipped checkpoints -> reports/probes.md
	$(PY) -m tools.probes

URL ?=
SIGN_IN ?= optional
redteam: install ## a hostile visitor's attacks on app.py (or a running app: URL=...), held or failed per case (SIGN_IN=required: as on a Space)
	HF_HUB_OFFLINE=1 $(PY) -m tools.redteam --sign-in $(SIGN_IN) $(if $(URL),--url $(URL))

loadtest: install ## 32 clients x 20 requests against the app -> reports/loadtest.json (PROFILE=mixed: 10% long inputs; PROFILE=class: 30 visitors, CLASS_MINUTES=10; PROFILE=hall: 300 visitors)
	$(PY) -m tools.loadtest --profile $(PROFILE) --class-minutes $(CLASS_MINUTES)

BEFORE ?= main
app-cpu: install ## the app's CPU per REST /predict and /compare (each a new session), this tree against BEFORE=main in one run -> reports/app_cpu.json
	$(PY) -m tools.bench.app_cpu --before $(BEFORE)

VISITORS ?= 100,200,300,400
SATURATION_MINUTES ?= 3
saturation: install ## the hall profile (or PROFILE=class) at VISITORS=100,200,300,400, SATURATION_MINUTES=3 each: where short p95 crosses 1 s -> reports/loadtest.json
	$(PY) -m tools.loadtest --profile $(if $(filter class,$(PROFILE)),class,hall) --saturation $(VISITORS) --class-minutes $(SATURATION_MINUTES)

sessions: install ## SESSIONS=1200 REST /compare calls, each a new session: RSS after every 200 -> reports/loadtest.json (SESSION_KIND=client: new gradio_client Clients)
	$(PY) -m tools.loadtest --sessions $(SESSIONS) --session-kind $(SESSION_KIND) --clients 1 --warmup 2

soak: install ## SOAK=5000 mixed requests (at most SOAK_MINUTES=30), the app's RSS sampled over time -> reports/loadtest.json
	$(PY) -m tools.loadtest --soak $(SOAK) --soak-minutes $(SOAK_MINUTES)

train-load: install ## /compare p95 over 20 calls idle vs while a ~3-minute training job runs -> reports/train_load.md
	$(PY) -m tools.train_load

attribution: install ## faithfulness (deletion test, AOPC), plausibility and cost of each word-attribution method -> reports/attribution.md
	$(PY) -m tools.attribution

LIMIT ?= 200
SPLIT ?= test
attribute: install ## word attributions as a dataset: make attribute TASK=sst5 SPLIT=test [LIMIT=200] -> exports/
	$(PY) -m tools.attribute --task $(TASK) --split $(SPLIT) --limit $(LIMIT)

export-results: install ## the shipped checkpoints' predictions on a split and their probe results as datasets: make export-results TASK=sst5 SPLIT=test -> exports/results/
	$(PY) -m tools.export_results --task $(TASK) --split $(SPLIT)

ablations: install ## every intervention's effect on dev/test accuracy of the shipped checkpoints, beside the papers' ablations -> reports/ablations.md
	$(PY) -m tools.ablations

AGT_CHECKPOINT ?= checkpoints/sst5/agt
AGT_NAME ?= shipped
AGT_SET ?=
agt-layers: install ## the AGT's per-layer intervention effects (40 SST-5 dev sentences), gates and attention: [AGT_CHECKPOINT=... AGT_NAME=...] -> reports/agt_layers.json
	$(PY) -m tools.agt_layers --checkpoint $(AGT_CHECKPOINT) --name "$(AGT_NAME)"

agt-gradients: install ## per-layer gradient norms over a fresh AGT's first 200 SST-5 steps: [AGT_SET=gate_bias=-2 AGT_NAME=...] -> reports/agt_layers.json
	$(PY) -m tools.agt_layers --gradients --name "$(AGT_NAME)" $(foreach s,$(AGT_SET),--set $(s))

tokenizer-agreement: install ## token agreement of our English tokenizer with the SST test trees
	$(PY) -m tools.tokenizer_agreement

vectors-probe: install ## SST-5 dev/test of PROBE_MODELS=nbow[,tensor_cnn] with word2vec and every .cache/vectors/en-<name> -> reports/vectors_probe.json, docs/vectors.md
	$(PY) -m tools.vectors_probe --models $(PROBE_MODELS) --vectors word2vec=.cache/vectors/en $(call vector_sets,en)

vectors-probe-zh: install ## zh_sentiment and zh_news dev/test of PROBE_MODELS with word2vec and every .cache/vectors/zh-<name> -> reports/vectors_probe_<task>.json, docs/vectors.md
	for task in zh_sentiment zh_news; do \
		$(PY) -m tools.vectors_probe --task $$task --models $(PROBE_MODELS) --vectors word2vec=.cache/vectors/zh $(call vector_sets,zh) || exit 1; done

checkpoints-report: install ## words, unknown test tokens and accuracy of the shipped checkpoints, and their size -> reports/checkpoints.md
	$(PY) -m tools.release.bundle report

# -- the authors' code as the oracle (docs/oracle.md) ----------------------------------------------
.PHONY: install-oracle oracle oracle-run oracle-report test-oracle oracle-dcnn
# a checkout of taolei87/text_convnet at faf7ec4, placed by you outside the project (never committed)
ORACLE_DIR ?= $(LAB_ORACLE_DIR)
# checkouts of FredericGodin/DynamicCNN at 694cf6c and Lasagne/Lasagne at 5d3c63c, likewise
DCNN_ORACLE_DIR ?= $(LAB_DCNN_ORACLE_DIR)
LASAGNE_DIR ?= $(LAB_LASAGNE_DIR)
ORACLE_RUNS ?= runs/oracle
SIDE   ?= authors
PHRASES ?=
ORACLE_MINUTES ?= 0
ORACLE_EPOCHS ?= 10
ORACLE_MODEL ?= tensor_cnn

$(VENV)/.oracle-installed: $(VENV)/.installed
	tools/install.sh $(PY) -c constraints.txt -e ".[oracle]"
	touch $@

install-oracle: $(VENV)/.oracle-installed ## pytensor, which runs the authors' Theano code (the `oracle` extra)

oracle: install-oracle ## same weights: our SST-5 tensor CNN in the authors' graph, max |dp| on dev, and the Theano/pytensor differences -> reports/oracle_identity.json
	LAB_ORACLE_DIR=$(ORACLE_DIR) OMP_NUM_THREADS=1 $(PY) -m tools.oracle.differences

oracle-run: install-oracle ## one same-inputs run: make oracle-run SIDE=authors|ours TASK=sst5 SEED=1 [PHRASES=1] [ORACLE_MINUTES=60] [ORACLE_MODEL=dcnn]
	LAB_ORACLE_DIR=$(ORACLE_DIR) LAB_DCNN_ORACLE_DIR=$(DCNN_ORACLE_DIR) LAB_LASAGNE_DIR=$(LASAGNE_DIR) OMP_NUM_THREADS=1 nice -n 19 \
	$(PY) -m tools.oracle.same_inputs $(SIDE) --model $(ORACLE_MODEL) --task $(TASK) --seed $(SEED) \
	$(if $(PHRASES),--phrases $(if $(filter tensor_cnn,$(ORACLE_MODEL)),--eval-period 1000 --evals-per-epoch 10,),) \
	--max-epochs $(ORACLE_EPOCHS) --max-minutes $(ORACLE_MINUTES) \
	--out $(ORACLE_RUNS)/$(if $(filter dcnn,$(ORACLE_MODEL)),dcnn-,)$(SIDE)-$(TASK)$(if $(PHRASES),-phrases,)-s$(SEED)

oracle-report: install ## the same-inputs rows of $(ORACLE_RUNS) -> reports/oracle.json
	$(PY) -m tools.oracle.same_inputs report $(ORACLE_RUNS) --json reports/oracle.json

test-oracle: install-oracle ## the tests that need the authors' code (ORACLE_DIR, DCNN_ORACLE_DIR, LASAGNE_DIR): the same-weights identities
	HF_HUB_OFFLINE=1 LAB_ORACLE_DIR=$(ORACLE_DIR) LAB_DCNN_ORACLE_DIR=$(DCNN_ORACLE_DIR) LAB_LASAGNE_DIR=$(LASAGNE_DIR) $(PY) -m pytest -q -m oracle

oracle-dcnn: install-oracle ## same weights: our SST-5 DCNN in Godin's Lasagne graph (DCNN_ORACLE_DIR, LASAGNE_DIR), max |dp| on dev -> reports/oracle_dcnn.json
	LAB_DCNN_ORACLE_DIR=$(DCNN_ORACLE_DIR) LAB_LASAGNE_DIR=$(LASAGNE_DIR) OMP_NUM_THREADS=1 $(PY) -m tools.oracle.dcnn --json reports/oracle_dcnn.json

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

commands: install ## docs/commands.md, written from this Makefile's target descriptions
	$(PY) -m tools.commands

settings-table: install ## docs/space.md's settings table, written from service/settings.py's fields
	$(PY) -m service.settings --write docs/space.md

push: install ## upload checkpoints to the Hub: make push HUB_REPO=user/name [DRY_RUN=1]
	$(if $(HUB_REPO),,$(error set HUB_REPO=user/name))
	$(PY) -m tools.release.push --repo $(HUB_REPO) $(if $(DRY_RUN),--dry-run)
