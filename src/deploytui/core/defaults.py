"""Every default of a measurement and of a build's limits, in one place: the CLI's options, the
app's settings, the bench, the ship check and the sweep read them here."""

from __future__ import annotations

from deploytui.runners.protocol import DEFAULT_REPEAT

RUNS = 20  # counted runs of a form (`deploytui bench -n`, the app's r / a)
WARMUP = 1  # runs before counting
RUN_TIMEOUT_S = 120.0  # a run still going after this is killed
REPEAT = DEFAULT_REPEAT  # steady-state forwards per run after the first (the runners' --repeat)
SHIP_RUNS = 5  # counted runs of an isolated ship check
SWEEP_RUNS = 5  # counted runs per form and size of the sweep
SWEEP_RUN_BUDGET_S = 10.0  # the sweep's counted runs per form and size: about this long, at least 2
BUILD_TIMEOUT_S = 1800.0  # a build step (or a bundle's venv setup) still going after this is killed
BUILD_MEMORY_LIMIT = 10 << 30  # the sweep kills a build step whose process tree passes this (10 GiB)
CHILD_TIMEOUT_S = 120.0  # a model check (`models.describe`) still going after this is killed
SERVE_REPEAT = 100  # `bench --batch/--threads`: timed forwards per cell (the runners' --repeat)
SERVE_WARMUP = 5  # and untimed forwards before them (the runners' --warmup)
SERVE_BATCHES = (1, 8, 32)  # the app's serving run (Serve screen, w): these batch sizes
SERVE_THREADS = (1, 2)  # and these thread counts, every form
