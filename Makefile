# deploytui: `make run` sets up and opens the app, which builds what is not built yet in the
# background (per-form progress on screen); `make test` sets up, builds and tests.
# Everything installs into .venv; caches (pip downloads, cargo target dir, inductor) live in
# ~/.cache/deploytui so a fresh clone reuses them. PIP_CONFIG_FILE=/dev/null makes pip ignore
# system pip configs (some machines cap torch<=2.14.1 there) without touching them.

PYTHON ?= python3.11
VENV := .venv
CACHE ?= $(HOME)/.cache/deploytui
PIP := PIP_CONFIG_FILE=/dev/null PIP_CACHE_DIR=$(CACHE)/pip $(VENV)/bin/pip
STAMP := $(VENV)/.installed
CARGO_TARGET_DIR ?= $(CACHE)/cargo-target
export CARGO_TARGET_DIR

.PHONY: run test setup compile build wheelhouse lint-python test-rust test-python clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --progress-bar on -e '.[test]'
	@touch $@

# compileall: the editable install leaves our modules without .pyc files, and where
# PYTHONDONTWRITEBYTECODE is set every start would compile them again (~15 ms of the app's start).
compile: setup
	@$(VENV)/bin/python -m compileall -q src

build: compile
	$(VENV)/bin/deploytui build

# the wheels the Python ship checks install offline inside the sandbox: the exact pins of every
# Python runtime the build probed, downloaded once into $(CACHE)/wheelhouse (a no-op when there)
wheelhouse: build
	$(VENV)/bin/python -m deploytui.shipping wheelhouse

run: compile
	$(VENV)/bin/deploytui

test-rust: build
	cd rust && cargo clippy --locked --release --workspace --all-targets --features store-deploy/st -- -D warnings
	cd rust && cargo test --locked --release --workspace --features store-deploy/st

lint-python: setup
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

test-python: build wheelhouse
	$(VENV)/bin/pytest

test: lint-python test-rust test-python

clean:
	find artifacts -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +
