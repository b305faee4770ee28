# The two commands of the README: `make demo` and `make test`. Both install what is missing first.
VENV ?= .venv
export PYANNOTE_METRICS_ENABLED = false
export HF_HUB_OFFLINE = 1
export TOKENIZERS_PARALLELISM = false

.PHONY: setup demo test bench

setup:
	./scripts/setup.sh

demo: setup
	$(VENV)/bin/ablate demo

test: setup
	$(VENV)/bin/python -m pytest -q -rs

bench: setup
	$(VENV)/bin/python benchmarks/run_all.py
