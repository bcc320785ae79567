# Two commands on a fresh machine:
#   make run   creates .venv, installs ireval (runtime dependencies only) and evaluates the
#              shipped examples/
#   make test  adds the test, plot, lint, dask and datasets extras and runs the whole default test suite
#   make dist  builds the sdist and the wheel a user installs (dist/)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test test-all test-slow lint conformance bench clean dist check-dist

# The clone is installed editable as a path on sys.path (setuptools' editable_mode=compat):
# the default mode's import hook costs every command about 20 ms of start-up (it imports
# importlib.util and pathlib at interpreter start), which an installed wheel never pays. A pip
# or setuptools without that mode gets the default editable install instead.
COMPAT := --config-settings editable_mode=compat
EXTRAS := '.[test,plot,lint,dask,datasets]'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e . $(COMPAT) || $(BIN)/pip install --quiet -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e $(EXTRAS) $(COMPAT) || $(BIN)/pip install --quiet -e $(EXTRAS)
	touch $(TEST_STAMP)

# The shipped examples, run by the ireval command given as $(1): `make run` runs them from the
# clone, `make check-dist` from the wheel installed in a fresh virtual environment.
define EXAMPLES
	$(1) examples/qrels.txt examples/run.txt
	$(1) -m map -m ndcg_cut.10 -m P.10 examples/qrels.txt examples/run.txt
	$(1) compare examples/qrels.txt examples/run.txt examples/run2.txt -m map -m ndcg_cut.10
	$(1) gate --config examples/gate.toml examples/run2.txt
endef

run: $(STAMP)
	$(call EXAMPLES,$(BIN)/ireval)

# The sdist and the wheel (dist/irevalcli-VERSION.tar.gz, dist/irevalcli-VERSION-py3-none-any.whl),
# built by `build` (from the test extra) in an isolated environment, from a clean dist/.
dist: $(TEST_STAMP)
	rm -rf dist && mkdir -p build
	$(BIN)/python -m build --outdir dist . > build/dist.log 2>&1 || { cat build/dist.log; exit 1; }

# What a user installs, tested as they would meet it: the wheel from `make dist` installed
# into a fresh virtual environment (its runtime dependencies only, from the package index),
# then the shipped examples run by the `ireval` it installed, outside the clone's sources.
WHEEL_VENV := build/wheel-venv
check-dist: dist
	rm -rf $(WHEEL_VENV)
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/pip install --quiet dist/irevalcli-*-py3-none-any.whl
	cd $(WHEEL_VENV) && bin/python -c "import irevalcli, sys; sys.exit(0 if '/site-packages/irevalcli/' in irevalcli.__file__ else 'not from the wheel: ' + irevalcli.__file__)"
	$(call EXAMPLES,$(WHEEL_VENV)/bin/ireval)

test: $(TEST_STAMP)
	$(BIN)/python -m pytest -q

test-all: $(TEST_STAMP)
	$(BIN)/python -m pytest -q -m ''

# the slow tests alone (differential against the reference libraries, fuzzing): test + test-slow = test-all
test-slow: $(TEST_STAMP)
	$(BIN)/python -m pytest -q -m slow

# ruff (lint rules and format) and mypy, as configured in pyproject.toml
lint: $(TEST_STAMP)
	$(BIN)/ruff check irevalcli tests benchmarks fuzz
	$(BIN)/ruff format --check irevalcli tests benchmarks fuzz
	$(BIN)/mypy

# trec_eval's own test cases, from the project's copy (tests/data/trec_eval)
conformance: $(STAMP)
	$(BIN)/python tests/run_conformance.py $(BIN)/ireval tests/data/trec_eval

# Benchmarks: the reference tools live in their own environment (benchmarks/README.md).
benchmarks/.venv-ref/.installed: benchmarks/requirements-ref.txt
	$(PYTHON) -m venv benchmarks/.venv-ref
	benchmarks/.venv-ref/bin/pip install --quiet -r benchmarks/requirements-ref.txt
	touch $@

# C trec_eval (9.0.4; no registry ships 10.0): the Linux x86-64 binary inside the Anserini jar
# of pyserini 1.6.0's sdist on PyPI, hash-checked (benchmarks/drivers/fetch_trec_eval.py).
# PYSERINI_SDIST=path/to/pyserini-1.6.0.tar.gz reuses a downloaded copy instead of pip.
benchmarks/bin/trec_eval: benchmarks/drivers/fetch_trec_eval.py | benchmarks/.venv-ref/.installed
	benchmarks/.venv-ref/bin/python benchmarks/drivers/fetch_trec_eval.py $@ $(if $(PYSERINI_SDIST),--sdist $(PYSERINI_SDIST))

# make bench fetches and times it on x86-64 Linux; TREC_EVAL= (empty) leaves it out,
# TREC_EVAL=/path/to/trec_eval times another build instead
ifeq ($(shell uname -sm),Linux x86_64)
TREC_EVAL ?= benchmarks/bin/trec_eval
endif

# Every tool on every collection (benchmarks/bench.py), then issue 22's shapes (shapes.py), each
# ratio with PASS/MISS against its target; replaces the generated sections of benchmarks/RESULTS.md
# and SCALE_RESULTS.md. It prints its estimated duration first (on the idle machine, with
# TREC_EVAL=/path/to/trec_eval 10.0: about 70 min, see benchmarks/README.md).
# BENCH_ARGS='--quick': a few minutes on scaled-down data, writes nothing (checks the harness);
# BENCH_ARGS='--estimate': the estimate only.
bench: $(STAMP) benchmarks/.venv-ref/.installed $(TREC_EVAL)
	$(BIN)/python benchmarks/bench.py $(if $(TREC_EVAL),--trec-eval $(TREC_EVAL)) --shapes --write $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info

.PHONY: docs
docs: $(STAMP)  # docs/measures.md, the measures reference (tests/measures/test_measures_doc.py checks it)
	$(BIN)/ireval measures --format markdown > docs/measures.md.tmp && mv docs/measures.md.tmp docs/measures.md
