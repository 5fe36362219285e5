# Measurement and research, apart from the product: tools/bench/ and tools/research/. Included by the Makefile,
# whose variables (PY, MODEL, TASK, SEED) and `install` these targets use.
SAMPLES ?= 16
EPOCHS ?= 8
PROFILE ?= plain
SOAK   ?= 5000
SOAK_MINUTES ?= 30
CLASS_MINUTES ?= 10
SESSIONS ?= 1200
SESSION_KIND ?= rest

# -- measure (each writes its reports/ file) -----------------------------------------------------------
.PHONY: bench bench-smoke bench-browser bench-link first-answer screens a11y loadtest app-cpu saturation redteam soak sessions train-load
bench: install ## accuracy/speed/scale benchmarks -> reports/benchmarks.md
	$(PY) -m tools.bench

bench-smoke: install ## a seconds-long version of the benchmarks (CI)
	$(PY) -m tools.bench --smoke

bench-browser: install ## every tab in Debian chromium, click to settled page: the Lab's analyses (laptop, phone), its method, intervention and shared link; Probes, Treebank, dataset, Train, Checkpoints (--only NAME re-runs one) -> reports/browser.md
	HF_HUB_OFFLINE=1 $(PY) -m tools.bench.browser --rounds 5

bench-link: install ## a lecture hall opens the teacher's link: 300 visitors load the same Lab link (all five models) within 10 s, 3 rounds; each visitor's wait for its page load -> reports/link_burst.json
	HF_HUB_OFFLINE=1 $(PY) -m tools.bench.link_burst

first-answer: install ## a fresh clone's `make demo`: seconds to its installed .venv and to its first /compare (uv, else pip)
	$(PY) -m tools.bench.first_answer

screens: install ## screenshots of the Lab at 390, 768 and 1400 px, English and Chinese, bundled checkpoints -> reports/screens/
	HF_HUB_OFFLINE=1 $(PY) -m tools.bench.screens

a11y: install ## axe-core (WCAG 2.0/2.1 A and AA) on every tab before and after 'All five', at 390, 768 and 1400 px in en, zh-CN and zh-TW, Debian chromium -> reports/a11y.md
	HF_HUB_OFFLINE=1 $(PY) -m tools.bench.a11y

URL ?=
SIGN_IN ?= optional
redteam: install ## a hostile visitor's attacks on app.py (or a running app: URL=...), held or failed per case (SIGN_IN=required: as on a Space)
	HF_HUB_OFFLINE=1 $(PY) -m tools.bench.redteam --sign-in $(SIGN_IN) $(if $(URL),--url $(URL))

loadtest: install ## 32 clients x 20 requests against the app -> reports/loadtest.json (PROFILE=mixed: 10% long inputs; PROFILE=class: 30 visitors, CLASS_MINUTES=10; PROFILE=hall: 300 visitors)
	$(PY) -m tools.bench.loadtest --profile $(PROFILE) --class-minutes $(CLASS_MINUTES)

BEFORE ?= main
app-cpu: install ## the app's CPU per REST /predict and /compare (each a new session), this tree against BEFORE=main in one run -> reports/app_cpu.json
	$(PY) -m tools.bench.app_cpu --before $(BEFORE)

VISITORS ?= 100,200,300,400
SATURATION_MINUTES ?= 3
saturation: install ## the hall profile (or PROFILE=class) at VISITORS=100,200,300,400, SATURATION_MINUTES=3 each: where short p95 crosses 1 s -> reports/loadtest.json
	$(PY) -m tools.bench.loadtest --profile $(if $(filter class,$(PROFILE)),class,hall) --saturation $(VISITORS) --class-minutes $(SATURATION_MINUTES)

sessions: install ## SESSIONS=1200 REST /compare calls, each a new session: RSS after every 200 -> reports/loadtest.json (SESSION_KIND=client: new gradio_client Clients)
	$(PY) -m tools.bench.loadtest --sessions $(SESSIONS) --session-kind $(SESSION_KIND) --clients 1 --warmup 2

soak: install ## SOAK=5000 mixed requests (at most SOAK_MINUTES=30), the app's RSS sampled over time -> reports/loadtest.json
	$(PY) -m tools.bench.loadtest --soak $(SOAK) --soak-minutes $(SOAK_MINUTES)

train-load: install ## /compare p95 over 20 calls idle vs while a ~3-minute training job runs -> reports/train_load.md
	$(PY) -m tools.bench.train_load

# -- research (each writes its reports/ file) ----------------------------------------------------------
.PHONY: sweep attribution ablations agt-layers agt-gradients tokenizer-agreement vectors-probe vectors-probe-zh
PROBE_MODELS ?= nbow
# every other set of a language present: .cache/vectors/<lang>-<name>.safetensors -> --vectors <name>=.cache/vectors/<lang>-<name>
vector_sets = $(foreach f,$(sort $(wildcard .cache/vectors/$(1)-*.safetensors)),--vectors $(patsubst $(1)-%,%,$(basename $(notdir $(f))))=$(basename $(f)))

sweep: install ## Ray Tune search (random + ASHA): make sweep MODEL=dcnn TASK=sst5 [SAMPLES=16 EPOCHS=8]; resumes when re-run
	$(PY) -m tools.research.sweep --model $(MODEL) --task $(TASK) $(if $(filter sst5 sst2,$(TASK)),--phrases) --samples $(SAMPLES) --max-epochs $(EPOCHS)

attribution: install ## faithfulness (deletion test, AOPC), plausibility and cost of each word-attribution method -> reports/attribution.md
	$(PY) -m tools.research.attribution

ablations: install ## every intervention's effect on dev/test accuracy of the shipped checkpoints, beside the papers' ablations -> reports/ablations.md
	$(PY) -m tools.research.ablations

AGT_CHECKPOINT ?= checkpoints/sst5/agt
AGT_NAME ?= shipped
AGT_SET ?=
agt-layers: install ## the AGT's per-layer intervention effects (40 SST-5 dev sentences), gates and attention: [AGT_CHECKPOINT=... AGT_NAME=...] -> reports/agt_layers.json
	$(PY) -m tools.research.agt_layers --checkpoint $(AGT_CHECKPOINT) --name "$(AGT_NAME)"

agt-gradients: install ## per-layer gradient norms over a fresh AGT's first 200 SST-5 steps: [AGT_SET=gate_bias=-2 AGT_NAME=...] -> reports/agt_layers.json
	$(PY) -m tools.research.agt_layers --gradients --name "$(AGT_NAME)" $(foreach s,$(AGT_SET),--set $(s))

tokenizer-agreement: install ## token agreement of our English tokenizer with the SST test trees
	$(PY) -m tools.research.tokenizer_agreement

vectors-probe: install ## SST-5 dev/test of PROBE_MODELS=nbow[,tensor_cnn] with word2vec and every .cache/vectors/en-<name> -> reports/vectors_probe.json, docs/vectors.md
	$(PY) -m tools.research.vectors_probe --models $(PROBE_MODELS) --vectors word2vec=.cache/vectors/en $(call vector_sets,en)

vectors-probe-zh: install ## zh_sentiment and zh_news dev/test of PROBE_MODELS with word2vec and every .cache/vectors/zh-<name> -> reports/vectors_probe_<task>.json, docs/vectors.md
	for task in zh_sentiment zh_news; do \
		$(PY) -m tools.research.vectors_probe --task $$task --models $(PROBE_MODELS) --vectors word2vec=.cache/vectors/zh $(call vector_sets,zh) || exit 1; done

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
	LAB_ORACLE_DIR=$(ORACLE_DIR) OMP_NUM_THREADS=1 $(PY) -m tools.research.oracle.differences

oracle-run: install-oracle ## one same-inputs run: make oracle-run SIDE=authors|ours TASK=sst5 SEED=1 [PHRASES=1] [ORACLE_MINUTES=60] [ORACLE_MODEL=dcnn]
	LAB_ORACLE_DIR=$(ORACLE_DIR) LAB_DCNN_ORACLE_DIR=$(DCNN_ORACLE_DIR) LAB_LASAGNE_DIR=$(LASAGNE_DIR) OMP_NUM_THREADS=1 nice -n 19 \
	$(PY) -m tools.research.oracle.same_inputs $(SIDE) --model $(ORACLE_MODEL) --task $(TASK) --seed $(SEED) \
	$(if $(PHRASES),--phrases $(if $(filter tensor_cnn,$(ORACLE_MODEL)),--eval-period 1000 --evals-per-epoch 10,),) \
	--max-epochs $(ORACLE_EPOCHS) --max-minutes $(ORACLE_MINUTES) \
	--out $(ORACLE_RUNS)/$(if $(filter dcnn,$(ORACLE_MODEL)),dcnn-,)$(SIDE)-$(TASK)$(if $(PHRASES),-phrases,)-s$(SEED)

oracle-report: install ## the same-inputs rows of $(ORACLE_RUNS) -> reports/oracle.json
	$(PY) -m tools.research.oracle.same_inputs report $(ORACLE_RUNS) --json reports/oracle.json

test-oracle: install-oracle ## the tests that need the authors' code (ORACLE_DIR, DCNN_ORACLE_DIR, LASAGNE_DIR): the same-weights identities
	HF_HUB_OFFLINE=1 LAB_ORACLE_DIR=$(ORACLE_DIR) LAB_DCNN_ORACLE_DIR=$(DCNN_ORACLE_DIR) LAB_LASAGNE_DIR=$(LASAGNE_DIR) $(PY) -m pytest -q -m oracle

oracle-dcnn: install-oracle ## same weights: our SST-5 DCNN in Godin's Lasagne graph (DCNN_ORACLE_DIR, LASAGNE_DIR), max |dp| on dev -> reports/oracle_dcnn.json
	LAB_DCNN_ORACLE_DIR=$(DCNN_ORACLE_DIR) LAB_LASAGNE_DIR=$(LASAGNE_DIR) OMP_NUM_THREADS=1 $(PY) -m tools.research.oracle.dcnn --json reports/oracle_dcnn.json
