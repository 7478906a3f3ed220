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
# the compiled module (setup.py: the SMO solver) is rebuilt whenever its sources change, like the environment
# when the lock file does
NATIVE_SOURCES := setup.py src/wsvm_span/_native.pyx $(wildcard src/wsvm_span/csrc/*)
STAMP := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml $(NATIVE_SOURCES) | sha256sum | cut -c1-16)

.PHONY: install lock run test test-slow lint report clean-results docs check-package test-sklearn-oldest \
        cluster-start cluster-stop cluster-status test-tools test-cluster test-load

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml $(NATIVE_SOURCES)
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11 or set PYTHON=/path/to/python3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -r requirements.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	rm -f $(VENV)/.installed-*
	touch $@

# requirements.lock pins every extra of pyproject.toml (the study, the cluster, MOSEK, tests, docs); after an
# edit of pyproject.toml's requirements this re-solves it, keeping every pin that still fits
lock: install
	$(BIN)/uv pip compile --quiet pyproject.toml --all-extras --python-version 3.11 -o requirements.lock

# wsvm-span run: Snakemake, holding a lock of its own so that a killed run's stale Snakemake lock is cleared
# and a live run is named (study/local_run.py); the terminal gets a short log, results/logs/run-*.log all of it
run: install
	$(BIN)/wsvm-span run $(CONFIG) --cores $(CORES)

report: install
	$(BIN)/snakemake --cores 1 --configfile $(CONFIG) --report results/report.html

test: install
	$(BIN)/python -m pytest

test-slow: install
	$(BIN)/python -m pytest -m "slow and not cluster"

lint: install
	$(BIN)/snakemake --lint --configfile $(CONFIG)

# --- packaging and documentation (docs/packaging.md); CI runs all three ---------------------------------
# the user guide and API reference, warnings as errors (docstrings are checked by numpydoc's validation)
docs: install
	$(BIN)/sphinx-build -q -W --keep-going -b html docs docs/_build/html

# build the sdist and wheel, install the wheel into fresh venvs (core only; then [study]) and run the
# library, `wsvm-span select` and `wsvm-span check-config` outside the repository
check-package: install
	PYTHON=$(PYTHON) scripts/check-package

# the model-selection tests against the oldest scikit-learn that pyproject.toml allows, in a venv of its own
SKLEARN_OLDEST := $(shell sed -n 's/^ *"scikit-learn>=\([0-9.]*\),.*/\1/p' pyproject.toml)
OLDEST := .venv-sklearn-oldest
test-sklearn-oldest: install
	@test -n "$(SKLEARN_OLDEST)" || { echo "error: no scikit-learn lower bound found in pyproject.toml" >&2; exit 1; }
	rm -rf $(OLDEST)
	$(BIN)/uv venv --quiet --python $(PYTHON) $(OLDEST)
	echo "scikit-learn==$(SKLEARN_OLDEST)" > $(OLDEST)/override.txt
	$(BIN)/uv pip install --quiet --python $(OLDEST)/bin/python -r requirements.lock --override $(OLDEST)/override.txt
	$(BIN)/uv pip install --quiet --python $(OLDEST)/bin/python --no-deps -e .
	$(OLDEST)/bin/python -c "import sklearn; print('scikit-learn', sklearn.__version__)"
	$(OLDEST)/bin/python -m pytest -q -p no:cacheprovider tests/test_model_selection*.py tests/test_search_kernels.py \
		tests/test_svm_plus_search.py tests/test_svm_plus_estimator.py tests/test_search_memory.py

# --- cluster (docs/cluster.md); these need root on Debian -----------------------------------------------
# A one-node SLURM cluster (munge, slurmctld, slurmd, slurmdbd + MariaDB) and an MLflow tracking server
# (PostgreSQL, artifacts served) on 127.0.0.1, installed from Debian's packages and started by
# scripts/local-cluster; `cluster-stop` stops them (their data are kept).
cluster-start: install
	scripts/local-cluster start

cluster-stop:
	scripts/local-cluster stop

cluster-status:
	scripts/local-cluster status

# what the UI test drives: a headless browser (the test reads the page's DOM through it)
TEST_TOOLS := chromium chromium-driver
test-tools:
	@missing=$$(for p in $(TEST_TOOLS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing $$missing (apt)"; apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# the workflow through SLURM against a local run, the tracking server under faults, the MLflow UI;
# starts the cluster for the session and stops it afterwards (unless it was running already)
test-cluster: install test-tools
	$(BIN)/python -m pytest -m "cluster and not slow" -p no:cacheprovider

# 16 concurrent writers x 1000 child runs on the server, and on SQLite (long: see docs/cluster.md)
test-load: install
	$(BIN)/python -m pytest -m "cluster and slow" -p no:cacheprovider -s
