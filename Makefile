# Two commands on a fresh machine:
#   make run   creates .venv, installs ireval and evaluates the shipped examples/
#   make test  runs the whole default test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-all conformance bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,plot]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/ireval examples/qrels.txt examples/run.txt
	$(BIN)/ireval -m map -m ndcg_cut.10 -m P.10 examples/qrels.txt examples/run.txt
	$(BIN)/ireval compare examples/qrels.txt examples/run.txt examples/run2.txt -m map -m ndcg_cut.10
	$(BIN)/ireval gate --config examples/gate.toml examples/run2.txt

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -m ''

conformance: $(STAMP)
	$(BIN)/python ../shared/tools/conformance.py $(BIN)/ireval ../shared/conformance/trec_eval

# Benchmarks: the reference tools live in their own environment (benchmarks/README.md).
benchmarks/.venv-ref/.installed: benchmarks/requirements-ref.txt
	$(PYTHON) -m venv benchmarks/.venv-ref
	benchmarks/.venv-ref/bin/pip install --quiet -r benchmarks/requirements-ref.txt
	touch $@

bench: $(STAMP) benchmarks/.venv-ref/.installed
	$(BIN)/python benchmarks/bench.py $(BENCH_ARGS) --write

clean:
	rm -rf $(VENV) build *.egg-info
