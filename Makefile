# deploytui: `make run` sets up and opens the app, which builds what is not built yet in the
# background (per-form progress on screen); `make test` sets up, builds and tests everything;
# `make check` is the quick loop (lint, types, and the tests that need no build).
# Everything installs into .venv; caches (uv's and pip's downloads, cargo target dir, inductor)
# live in ~/.cache/deploytui so a fresh clone reuses them. PIP_CONFIG_FILE=/dev/null makes pip
# ignore system pip configs (some machines cap torch<=2.14.1 there) without touching them.
# docs/setup-time.md says where a fresh machine's time goes (bench/fresh_setup.py measures it).

PYTHON ?= python3.11
VENV := .venv
# DEPLOYTUI_CACHE (or CACHE=) moves every cache, make's and deploytui's alike
CACHE ?= $(or $(DEPLOYTUI_CACHE),$(HOME)/.cache/deploytui)
export DEPLOYTUI_CACHE := $(CACHE)
PIP_ENV := PIP_CONFIG_FILE=/dev/null PIP_CACHE_DIR=$(CACHE)/pip
UV := uv==0.13.9
# uv reads no pip config; its own (uv.toml, UV_*) is ignored too, so every machine installs alike
UV_ENV := UV_CACHE_DIR=$(CACHE)/uv UV_NO_CONFIG=1
STAMP := $(VENV)/.installed
CARGO_TARGET_DIR ?= $(CACHE)/cargo-target
export CARGO_TARGET_DIR
# One cargo configuration for the build steps, clippy and the tests: release, and each command
# selects one group of packages (rust/Cargo.toml's workspace metadata; cargo unifies features
# within what a command selects), so each group's dependencies are compiled once for all three.
CARGO_FLAGS := --locked --release
# cargo runs its own jobs: make's jobserver (make -j2 in `make test`) is not passed to it
CARGO := MAKEFLAGS= cargo
GROUPS := $(PYTHON) tools/cargo_groups.py
RUST_LOG := artifacts/shared/logs/rust-deps.log
CHECK_TESTS := -m "not build and not slow"
# pytest runs on two workers (pytest-xdist): most tests wait on one child process at a time,
# so one worker left a core idle. Each file stays on one worker, except the cases marked
# `spread` (tests/conftest.py), which conftest puts first: --no-loadscope-reorder keeps that
# order (xdist would run the largest groups first, leaving the long one-case groups to the
# end). PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= 2
PYTEST := $(VENV)/bin/pytest -n $(PYTEST_WORKERS) --dist loadgroup --no-loadscope-reorder

.PHONY: run test check setup compile build rust-deps wheelhouse sshd arm64 arm64-if-possible apt-parts lint-python \
	test-rust test-python test-quick clean

setup: $(STAMP)

# uv installs the venv (pip puts uv itself in it): it resolves as pip does (the same 148
# distributions), downloads side by side and unpacks into its cache once, then links the files
# into each venv; it compiles every module's .pyc, as pip does, since where
# PYTHONDONTWRITEBYTECODE is set no import would ever write one (each process that imports
# torch then compiled it again: pytest took 22 min instead of 15). docs/setup-time.md has the
# figures. Its whole output goes to .venv/install.log; the terminal gets one progress line.
$(STAMP): pyproject.toml
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	@test -x $(VENV)/bin/uv || $(PIP_ENV) $(VENV)/bin/pip install -q $(UV)
	@$(UV_ENV) $(PYTHON) tools/install_progress.py $(VENV)/install.log -- \
	  $(VENV)/bin/uv pip install --compile-bytecode --python $(VENV)/bin/python -e '.[test]'
	@touch $@

# compileall: the editable install leaves our modules without .pyc files, and where
# PYTHONDONTWRITEBYTECODE is set every start would compile them again (~15 ms of the app's start).
compile: setup
	@$(VENV)/bin/python -m compileall -q src

# no cargo: nothing to do (the burn, tract and ort-run forms are then unavailable, with that reason).
# The second loop compiles burn-onnx's code generator (burn-onnx-gen's build dependency); its
# build script then stops for want of a1.onnx, which the build exports later: expected.
rust-deps:
	@mkdir -p $(dir $(RUST_LOG))
	@if command -v cargo >/dev/null; then \
	  echo "cargo: compiling the Rust dependencies in the background (log: $(RUST_LOG))"; \
	  ($(GROUPS) early | while read -r sel; do (cd rust && $(CARGO) build $(CARGO_FLAGS) $$sel) || exit 1; done \
	    && $(GROUPS) generated | while read -r sel; do (cd rust && $(CARGO) build $(CARGO_FLAGS) $$sel) \
	         || echo "(expected: no ONNX file yet)"; done) > $(RUST_LOG) 2>&1 \
	    && echo "cargo: dependencies compiled ($$(grep -c Compiling $(RUST_LOG)) crates)" \
	    || echo "cargo: the early build failed (see $(RUST_LOG)); deploytui build will say why"; \
	fi

build: compile
	MAKEFLAGS= $(VENV)/bin/deploytui build

# the test suite's SSH target: Debian's sshd unpacked into the cache (nothing installed, no service)
SSHD := $(CACHE)/sshd/usr/sbin/sshd
sshd: $(SSHD)
$(SSHD): tools/unpack_sshd.sh
	@sh tools/unpack_sshd.sh $(CACHE)/sshd

# the emulated arm64 target (docs/arm64.md): the tools (qemu-user-static, mmdebstrap, the aarch64
# cross compiler: apt-get as root), qemu-aarch64 registered with binfmt_misc, an arm64 Debian root
# (mmdebstrap) in $(CACHE)/arm64; each step skipped when done, one line each, one line and exit 1
# when this machine cannot (no root, no apt). `make test` goes on without it: the aarch64 tests
# then skip, saying why.
arm64:
	@sh tools/arm64_root.sh $(CACHE)/arm64
arm64-if-possible:
	@sh tools/arm64_root.sh $(CACHE)/arm64 || echo "arm64: not made; the aarch64 tests will skip"

# the wheels the Python ship checks install offline inside the sandbox: the exact pins of every
# Python runtime the build probed, downloaded once into $(CACHE)/wheelhouse (a no-op when there)
wheelhouse: build
	$(VENV)/bin/python -m deploytui.scenarios.isolated.shipping wheelhouse

run: compile
	$(VENV)/bin/deploytui

# clippy and the tests in one pass per group, reusing every crate `deploytui build` compiled:
# `cargo clippy` would check each group's dependencies again (check mode shares nothing with a
# build), so clippy-driver runs as the workspace members' compiler in the test build instead, as
# cargo-clippy itself sets it up (RUSTC_WORKSPACE_WRAPPER, its lints in CLIPPY_ARGS); the lints
# cover the libraries, programs, tests and examples that `cargo test` compiles.
CLIPPY := RUSTC_WORKSPACE_WRAPPER=clippy-driver CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
test-rust: build
	$(GROUPS) select | while read -r sel; do (cd rust && $(CLIPPY) $(CARGO) test $(CARGO_FLAGS) $$sel) || exit 1; done

lint-python: setup
	$(VENV)/bin/ruff check src tests bench tools
	$(VENV)/bin/ruff format --check src tests bench tools
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

test-python: build wheelhouse sshd
	$(PYTEST) --durations=25

# the tests that need no build (unit tests, snapshot tests on stored data, fuzzers on fixtures)
test-quick: setup sshd
	$(PYTEST) -q $(CHECK_TESTS)

check: lint-python test-quick

# Three lines: what waits on different things runs at once. First cargo compiling the Rust
# dependencies (the build's cargo steps wait for its lock) beside pip (network, disk) and then
# the Python export steps (one core each), and beside them what apt provides (the test sshd,
# the emulated arm64 root: network, and qemu's dpkg), which needs nothing from the others; then
# clippy and cargo test beside the wheelhouse download; then pytest. bench/fresh_setup.py runs
# these same lines.
test:
	@$(MAKE) --no-print-directory -j3 rust-deps apt-parts lint-python build
	@$(MAKE) --no-print-directory -j2 test-rust wheelhouse
	@$(MAKE) --no-print-directory test-python

# the test sshd and the arm64 root one after the other: both call apt (its locks, its lists)
apt-parts:
	@$(MAKE) --no-print-directory sshd
	@$(MAKE) --no-print-directory arm64-if-possible

clean:
	find artifacts -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +
