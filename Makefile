# Two entry points (see README.md):
#   make run   - install everything, then run the study on config/config.yaml
#   make test  - install everything, then run the test suite
# Both create .venv from the pinned lock file on first use (and again when it changes).
# Bytecode is compiled at install time: every workflow job is a new Python process, and
# with PYTHONDONTWRITEBYTECODE set each would otherwise recompile mlflow, sklearn, pandas.

PYTHON ?= python3.11
VENV   ?= .venv
CORES  ?= 2
CONFIG ?= config/config.yaml
UV_VERSION := 0.13.9

BIN   := $(VENV)/bin
# The workflow's rules call the `wsvm-span` command: put the environment first on PATH.
export PATH := $(abspath $(BIN)):$(PATH)
STAMP := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | sha256sum | cut -c1-16)

.PHONY: install run test test-slow lint report clean-results

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11 or set PYTHON=/path/to/python3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -r requirements.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	rm -f $(VENV)/.installed-*
	touch $@

run: install
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG)

report: install
	$(BIN)/snakemake --cores 1 --configfile $(CONFIG) --report results/report.html

test: install
	$(BIN)/python -m pytest

test-slow: install
	$(BIN)/python -m pytest -m slow

lint: install
	$(BIN)/snakemake --lint --configfile $(CONFIG)
