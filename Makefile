# The two commands of README.md, and the pieces they are made of.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_DIR ?= $(or $(TMPDIR),/var/tmp)/ssdlab-demo

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
test: setup lint rust-test py-test

lint: setup
	$(BIN)/ruff check python tests benchmarks scripts
	cargo clippy --workspace --all-targets --release -- -D warnings
	cargo fmt --all --check

setup: system-deps $(BIN)/maturin
	$(BIN)/maturin develop --release --extras test -q

system-deps:
	@scripts/ensure-system-deps

$(BIN)/maturin:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "maturin>=1.5,<2"

rust-test:
	cargo test -p ssdsim --profile tests

# one worker per core (at most 8), each taking the next test as it finishes one (two per core
# were faster, but the tests that time fio's rate limits and latencies failed under the load:
# BENCHMARKS.md)
py-test:
	$(BIN)/python -m pytest -q -n auto --maxprocesses 8 --dist worksteal

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
