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

# The habits first (lint, format, types), then the tests; tests/test_docs.py builds the docs
# with `mkdocs build --strict` and runs their Python snippets, so the site is built once.
CHECKED = toolkit app tests benchmarks scripts
test: setup
	$(VENV)/bin/ruff check $(CHECKED)
	$(VENV)/bin/ruff format --check $(CHECKED)
	$(VENV)/bin/mypy toolkit app benchmarks
	$(VENV)/bin/python -m pytest -q -rs

bench: setup
	$(VENV)/bin/python benchmarks/run_all.py
