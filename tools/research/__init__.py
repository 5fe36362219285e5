"""Research on the models, apart from the product: the authors' code as an oracle (oracle/), ablations, the AGT
layer by layer, which word vectors help, Ray Tune sweeps, attribution faithfulness, tokenizer agreement, DCNN
feature detectors. Their make targets are in bench.mk."""
