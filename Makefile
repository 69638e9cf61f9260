# EDM: the two commands are `make reproduce` (the main job) and `make test` (see README.md).
# Everything installs itself on first use; later runs only rebuild what changed.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
export PATH := $(HOME)/.cargo/bin:$(abspath $(VENV))/bin:$(PATH)
export VIRTUAL_ENV := $(abspath $(VENV))

SYSTEM_STAMP := .build/system.stamp
DEPS_STAMP := $(VENV)/.deps.stamp
EXT_STAMP := $(VENV)/.ext.stamp
RUST_SOURCES := Cargo.toml pyproject.toml $(shell find crates -name '*.rs' -o -name 'Cargo.toml')

.PHONY: setup test lint demo reproduce clean

setup: $(EXT_STAMP)

$(SYSTEM_STAMP): scripts/install-system.sh
	bash scripts/install-system.sh
	@mkdir -p $(@D) && touch $@

$(DEPS_STAMP): $(SYSTEM_STAMP) requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $@

# The Rust core as the Python extension edm._core (editable install of python/edm).
$(EXT_STAMP): $(DEPS_STAMP) $(RUST_SOURCES)
	maturin develop --release -q
	touch $@

# pytest on one worker per core (pytest-xdist; at most 4: beyond that the few
# long RTL builds bound the time); loadgroup keeps a class's tests (shared
# state) on one worker, tests marked `long` start first (tests/conftest.py);
# the 30 slowest tests are listed at the end (where the suite's time goes).
test: setup
	$(VENV)/bin/ruff check python tests experiments
	cargo test --workspace --exclude edm-py
	$(PY) -m pytest -q -n auto --maxprocesses 4 --dist loadgroup --durations=30

# Every linter, failing on any finding: rustfmt's check, clippy (warnings are errors), ruff
# (pyproject.toml's rules) and Verilator's -Wall lint of every RTL top.
lint: setup
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -q -- -D warnings
	$(VENV)/bin/ruff check python tests experiments
	$(PY) -m pytest -q tests/rtl/test_rtl_common.py -k lint

demo: setup
	$(VENV)/bin/edm demo

# The paper's evaluation end to end: results/reproduce/report.{html,md} and a
# screenshot of the report rendered in headless Chromium.
reproduce: setup
	$(VENV)/bin/edm reproduce
	bash scripts/screenshot_report.sh results/reproduce/report.html

clean:
	rm -rf .build target $(VENV)
