# Compositional sentence-model lab. `make help` lists the targets.
PY_SYS ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
MODELS := tensor_cnn mrnn dcnn adasent agt
MODEL  ?= tensor_cnn
SAMPLES ?= 16
EPOCHS ?= 8
TASK   ?= sst5
SEED   ?= 1
PROFILE ?= plain
SOAK   ?= 5000
SOAK_MINUTES ?= 30
export HF_HUB_DISABLE_TELEMETRY := 1
export GRADIO_ANALYTICS_ENABLED := False

.DEFAULT_GOAL := help
.PHONY: help install test test-e2e demo train check-checkpoints train-one vectors bench bench-smoke probes loadtest soak tokenizer-agreement push import-graph sweep clean attribution bench-browser ablations

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_%-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "} {printf "  make %-20s %s\n", $$1, $$2}'

$(VENV)/.installed: requirements.txt requirements-dev.txt constraints.txt
	$(PY_SYS) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed ## create .venv with the app's requirements and the tools' and tests' (requirements-dev.txt)

test: install ## run the test suite (offline, no GPU, a few minutes on 2 cores)
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -m "not e2e"

test-e2e: install ## browser tests with Debian chromium (apt-get install chromium fonts-wqy-microhei)
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -m e2e

demo: install ## serve the Gradio lab on http://127.0.0.1:7860
	$(PY) app.py

vectors: install ## train our English and Chinese word2vec vectors into .cache/vectors (~16 CPU-min for English)
	$(PY) -m tools.vectors --lang en
	$(PY) -m tools.vectors --lang zh

TRAIN_PARALLEL ?= 2
train: install ## retrain the bundled checkpoints of configs/bundled.toml as Ray tasks, TRAIN_PARALLEL at a time (all at once on RAY_ADDRESS's cluster; 0: one after another), then make evaluate-all
	$(PY) -m tools.release.bundle train --parallel $(TRAIN_PARALLEL) $(BUNDLE_ARGS)
	$(MAKE) evaluate-all

check-checkpoints: install ## verify checkpoints/ (manifest, size budget, every checkpoint loads)
	$(PY) -m tools.release.bundle check

train-one: install ## train one model: make train-one MODEL=dcnn TASK=sst2 SEED=2
	$(PY) -m core.training.train --model $(MODEL) --task $(TASK) --phrases --seed $(SEED)

tokenizer-agreement: install ## token agreement of our English tokenizer with the SST test trees
	$(PY) -m tools.tokenizer_agreement

sweep: install ## Ray Tune search (random + ASHA): make sweep MODEL=dcnn TASK=sst5 [SAMPLES=16 EPOCHS=8]; resumes when re-run
	$(PY) -m tools.sweep --model $(MODEL) --task $(TASK) $(if $(filter sst5 sst2,$(TASK)),--phrases) --samples $(SAMPLES) --max-epochs $(EPOCHS)

bench: install ## accuracy/speed/scale benchmarks -> docs/benchmarks.md
	$(PY) -m tools.bench

bench-smoke: install ## a seconds-long version of the benchmarks (CI)
	$(PY) -m tools.bench --smoke

probes: install ## behavioural probe pass rates of the shipped checkpoints -> docs/probes.md
	$(PY) -m tools.probes

loadtest: install ## 32 clients x 20 requests against the app -> docs/loadtest.json (PROFILE=mixed: 10% long inputs)
	$(PY) -m tools.loadtest --profile $(PROFILE)

soak: install ## SOAK=5000 mixed requests (at most SOAK_MINUTES=30), the app's RSS sampled over time -> docs/loadtest.json
	$(PY) -m tools.loadtest --soak $(SOAK) --soak-minutes $(SOAK_MINUTES)

push: install ## upload checkpoints to the Hub: make push HUB_REPO=user/name [DRY_RUN=1]
	$(if $(HUB_REPO),,$(error set HUB_REPO=user/name))
	$(PY) -m tools.release.push --repo $(HUB_REPO) $(if $(DRY_RUN),--dry-run)

import-graph: install ## the project's module import graph; fails on an import cycle
	$(PY) -m tools.import_graph

clean: ## remove the tokenized-task cache and Gradio's cached examples (keeps runs/ and word vectors)
	rm -rf .cache/tasks .gradio/cached_examples .pytest_cache

.PHONY: evaluate-all
evaluate-all: install ## every checkpoint on its test set -> <task>/<model>/evaluation.json (the Treebank tab), docs/treebank.md
	nice -n 10 $(PY) -m tools.evaluate_all --threads 1 $(EVAL_ARGS)

# -- train your own (issue 26) ------------------------------------------------------------------------
.PHONY: train-data train-load
DATA ?=
TEXT_COLUMN ?=
LABEL_COLUMN ?=

train-data: install ## train a model on your own labelled file: make train-data DATA=reviews.csv MODEL=dcnn [TEXT_COLUMN=review LABEL_COLUMN=stars]
	$(if $(DATA),,$(error set DATA=path/to/file.csv))
	$(PY) -m core.training.train --model $(MODEL) --data $(DATA) $(if $(TEXT_COLUMN),--text-column $(TEXT_COLUMN)) $(if $(LABEL_COLUMN),--label-column $(LABEL_COLUMN)) --resume

train-load: install ## /compare p95 over 20 calls idle vs while a ~3-minute training job runs -> docs/train_load.md
	$(PY) -m tools.train_load

ablations: install ## every intervention's effect on dev/test accuracy of the shipped checkpoints, beside the papers' ablations -> docs/ablations.md
	$(PY) -m tools.ablations

attribution: install ## faithfulness (deletion test, AOPC) and cost of each word-attribution method -> docs/attribution.md
	$(PY) -m tools.attribution

bench-browser: install ## the lab in Debian chromium: click to settled page, 'All five' and one model -> docs/browser.md
	HF_HUB_OFFLINE=1 $(PY) -m tools.bench.browser --rounds 5

.PHONY: space-check
space-check: install ## the Space from a clean venv: requirements.txt alone (public index), app.py offline answers /predict -> docs/space_check.json
	HF_HUB_OFFLINE=1 $(PY) -m tools.release.space_check

.PHONY: checkpoints-report
checkpoints-report: install ## words, unknown test tokens and accuracy of the shipped checkpoints, and their size -> docs/checkpoints.md
	$(PY) -m tools.release.bundle report

.PHONY: vectors-sets vectors-probe vectors-sets-zh vectors-probe-zh
PROBE_MODELS ?= nbow
# every other set of a language present: .cache/vectors/<lang>-<name>.safetensors -> --vectors <name>=.cache/vectors/<lang>-<name>
vector_sets = $(foreach f,$(sort $(wildcard .cache/vectors/$(1)-*.safetensors)),--vectors $(patsubst $(1)-%,%,$(basename $(notdir $(f))))=$(basename $(f)))
vectors-sets: install ## the English sets the probe compares with word2vec: fastText, GloVe, wordllama -> .cache/vectors/en-<method>
	$(PY) -m tools.vectors --lang en --method fasttext --out .cache/vectors/en-fasttext
	$(PY) -m tools.vectors --lang en --method glove --window 10 --epochs 10 --out .cache/vectors/en-glove
	$(PY) -m tools.vectors --lang en --method wordllama --out .cache/vectors/en-wordllama
vectors-probe: install ## SST-5 dev/test of PROBE_MODELS=nbow[,tensor_cnn] with word2vec and every .cache/vectors/en-<name> -> docs/vectors_probe.json, docs/vectors.md
	$(PY) -m tools.vectors_probe --models $(PROBE_MODELS) --vectors word2vec=.cache/vectors/en $(call vector_sets,en)
vectors-sets-zh: install ## the Chinese set the zh probe compares with word2vec: fastText over 1..3-character n-grams -> .cache/vectors/zh-fasttext
	$(PY) -m tools.vectors --lang zh --method fasttext --min-n 1 --max-n 3 --out .cache/vectors/zh-fasttext
vectors-probe-zh: install ## zh_sentiment and zh_news dev/test of PROBE_MODELS with word2vec and every .cache/vectors/zh-<name> -> docs/vectors_probe_<task>.json, docs/vectors.md
	for task in zh_sentiment zh_news; do \
		$(PY) -m tools.vectors_probe --task $$task --models $(PROBE_MODELS) --vectors word2vec=.cache/vectors/zh $(call vector_sets,zh) || exit 1; done
