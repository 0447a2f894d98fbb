# The two commands of README.md, and the pieces they are made of.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_DIR ?= $(or $(TMPDIR),/var/tmp)/ssdlab-demo
# The simulator's Cargo profile: release (LTO) for the demo and benchmarks; `make test` builds
# it in the Rust tests' own profile (Cargo.toml: the same code, no LTO, parallel codegen), once
# for the extension, the wheel the install test makes and the Rust tests' dependencies
PROFILE ?= release

.PHONY: demo test setup system-deps lint rust-test py-test bench fuzz clean

## make demo: set everything up, run the quick suite on the simulated WD SN850, show the result
demo: setup
	mkdir -p $(DEMO_DIR)
	$(BIN)/ssdlab run sim:wd-sn850-1tb --suite quick --name "demo: simulated WD SN850 1 TB" \
		--db $(DEMO_DIR)/ssdlab.db
	$(BIN)/ssdlab show latest --db $(DEMO_DIR)/ssdlab.db
	$(BIN)/ssdlab report latest --db $(DEMO_DIR)/ssdlab.db -o $(DEMO_DIR)/report.html
	@echo "results stored in $(DEMO_DIR)/ssdlab.db; the report: open $(DEMO_DIR)/report.html in a browser"

## make test: set everything up, lint, and run every test (Rust and Python)
test: PROFILE = tests
test: setup lint
	scripts/test-lanes $(MAKE) --no-print-directory PROFILE=$(PROFILE)

lint: setup
	$(BIN)/ruff check python tests benchmarks scripts
	cargo clippy --workspace --all-targets --profile $(PROFILE) -- -D warnings
	cargo fmt --all --check

setup: system-deps $(BIN)/maturin
	$(BIN)/maturin develop --profile $(PROFILE) --extras test -q

system-deps:
	@scripts/ensure-system-deps

$(BIN)/maturin:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "maturin>=1.5,<2"

rust-test:
	cargo test -p ssdsim --profile tests

# one worker per core (at most 8), each taking the next test as it finishes one (two per core
# made the tests that time fio or a replay fail under the load, one or two in each of three
# clean-clone runs, and gained nothing reliable on 2 cores: BENCHMARKS.md). Bytecode is written
# even where PYTHONDONTWRITEBYTECODE is set: each worker would otherwise compile (and rewrite
# the asserts of) every test module anew, about 4 CPU-s each. The twenty slowest are listed in
# every log. MARK selects tests by marker (make test: scripts/test-lanes), WORKERS=0 runs them
# in pytest's own process
MARK ?=
WORKERS ?= auto
py-test:
	env -u PYTHONDONTWRITEBYTECODE SSDLAB_CARGO_PROFILE=$(PROFILE) $(BIN)/python -m pytest -q -n $(WORKERS) \
		--maxprocesses 8 --dist worksteal --durations=20 $(if $(MARK),-m "$(MARK)")

bench: setup
	$(BIN)/python benchmarks/sim_speed.py
	$(BIN)/python benchmarks/client_suite.py --target sim:wd-sn850-1tb --scale 1 --limit 120
	$(BIN)/python benchmarks/client_suite.py --scale 0.01
	$(BIN)/python benchmarks/harness_overhead.py
	$(BIN)/python benchmarks/fill_analysis_accuracy.py
	$(BIN)/python benchmarks/report_speed.py

## make fuzz: mutated inputs through the whole CLI; figures in BENCHMARKS.md
fuzz: setup
	$(BIN)/python scripts/fuzz_cli.py --inputs 1000 --seed 1

clean:
	rm -rf $(VENV) target
