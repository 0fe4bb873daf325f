# `make demo`: set everything up and run the demo.  `make test`: set everything up and run the tests.
PYTHON ?= python3
VENV ?= .venv
SETUP_INPUTS := scripts/setup.sh pyproject.toml $(wildcard plugins/*/pyproject.toml) docs/examples/assoc-example/pyproject.toml

.PHONY: setup demo test bench clean

setup: $(VENV)/.setup-done

$(VENV)/.setup-done: $(SETUP_INPUTS)
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/setup.sh
	touch $@

demo: setup
	VENV=$(VENV) bash scripts/demo.sh

test: setup
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(VENV)/bin/python -m pytest -q

clean:
	rm -rf $(VENV) demo-output .assoc-cache
