# `make demo`: set everything up and run the demo.  `make test`: set everything up and run the tests.
PYTHON ?= python3
VENV ?= .venv
SETUP_INPUTS := scripts/setup.sh pyproject.toml $(wildcard plugins/*/pyproject.toml)

.PHONY: setup setup-vllm demo test test-pandas2 lint docs bench clean

setup: $(VENV)/.setup-done

$(VENV)/.setup-done: $(SETUP_INPUTS)
	PYTHON=$(PYTHON) VENV=$(VENV) EXTRA_CONSTRAINTS="$(EXTRA_CONSTRAINTS)" bash scripts/setup.sh
	touch $@

# vLLM's CPU build in an environment of its own (it pins another torch and transformers), for the tests that
# score through a real inference server (assoc.testing.vllm); about 4 minutes and 3.5 GB, once.
VLLM_VENV ?= .venv-vllm
setup-vllm: $(VLLM_VENV)/.setup-done

$(VLLM_VENV)/.setup-done: scripts/setup-vllm.sh
	PYTHON=$(PYTHON) VLLM_VENV=$(VLLM_VENV) bash scripts/setup-vllm.sh

demo: setup
	VENV=$(VENV) bash scripts/demo.sh

# --fast-budget 5: a test not marked slow that takes over 3 x 5 s fails the run (assoc.devtools.fast_budget);
# --durations 25: the slowest phases, for whoever brings a test back under the budget.
test: setup setup-vllm
	ASSOC_VLLM_PYTHON=$(abspath $(VLLM_VENV))/bin/python ASSOC_STRICT_SKIPS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(VENV)/bin/python -m pytest -q --fast-budget 5 --durations 25

# The normal suite runs on pandas 3 (what `make setup` installs); this runs it on pandas 2 in .venv-pandas2.
test-pandas2:
	$(MAKE) test VENV=.venv-pandas2 EXTRA_CONSTRAINTS="pandas<3"

# Lint and type gates (configured in pyproject.toml: [tool.ruff], [tool.mypy]); CI runs them (.ci/run).
PLUGIN_SOURCES := $(filter-out %.egg-info,$(wildcard plugins/*/src/assoc_*)) docs/examples/assoc-example/src/assoc_example
MYPY_PATH := $(subst $() ,:,src $(wildcard plugins/*/src) docs/examples/assoc-example/src)
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	MYPYPATH=$(MYPY_PATH) $(VENV)/bin/mypy src/assoc $(PLUGIN_SOURCES)

# The documentation site, from docs/ (mkdocs.yml) into site/; --strict: any warning (a broken link, an API
# reference that does not resolve) fails, as in CI. `make docs DOCS_FLAGS=` builds despite warnings.
DOCS_FLAGS ?= --strict
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build $(DOCS_FLAGS)
	@echo "open site/index.html in a browser: it works from disk (file://), offline, no server needed"

# Every comparison of assoc against the strongest straightforward baseline, each side in its own fresh
# process, alternating rounds: regenerates docs/benchmarks/*.md (the tables the docs include) and
# benchmarks/results/*.json. Take a quiet machine. BENCH_FLAGS: e.g. `--quick` (a smoke run),
# `--rounds 5`, `--device auto`, `--threads 2`, or comparison names (`fmat pll`).
BENCH_FLAGS ?=
bench: setup
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(VENV)/bin/python -m benchmarks $(BENCH_FLAGS)

clean:
	rm -rf $(VENV) $(VLLM_VENV) demo-output .assoc-cache site
