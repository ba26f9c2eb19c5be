"""Time-to-ready of the deploytui app against a bare Textual app, in the same run.

Each sample is a fresh process. Time-to-ready runs from just before the spawn to the moment the
app's `on_ready` fires (the child prints CLOCK_MONOTONIC there; the parent read the same clock
before spawning), so interpreter start and imports count, shutdown does not. deploytui starts
through `run_app`, the entry a bare `deploytui` uses, and exits in `on_ready` when
DEPLOYTUI_EXIT_ON_READY is set. Samples alternate between the apps.

The app holds the garbage collector off until its first frame (see `tui/_start.py`). The goal
compares it with a bare Textual app as anyone writes one; the third app, a bare one with the
collector off too, shows what is left once that trick is granted to both.
Prints JSON: the medians, the ratio (goal: at most GOAL, 1.15), that second ratio and the minima.

    .venv/bin/python bench/app_startup.py [-n 15] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

BARE = """
import time
from textual.app import App
class Bare(App):
    def on_ready(self):
        print(f"READY_AT {time.monotonic_ns()}", flush=True)
        self.exit()
Bare().run(headless=True)
"""

BARE_GC_HELD = "import gc\ngc.disable()\n" + BARE

DEPLOYTUI = """
from deploytui.views.tui import run_app
from deploytui.core.workspace import Workspace
app = run_app(Workspace.from_env(), headless=True)  # the entry point: DEPLOYTUI_ARTIFACTS or the default
print(f"READY_AT {app.ready_at_ns}", flush=True)
"""

APPS = {"bare": BARE, "bare_gc_held": BARE_GC_HELD, "deploytui": DEPLOYTUI}
GOAL = 1.15  # deploytui ready within 1.15x a bare Textual app (issue 32)


def once(code: str, env: dict) -> float:
    """Seconds from spawn to on_ready."""
    t0 = time.monotonic_ns()
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"failed: {out.stderr[-1500:]}")
    fields = next(ln.split() for ln in out.stdout.splitlines() if ln.startswith("READY_AT "))
    return (int(fields[1]) - t0) / 1e9


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=15, help="samples of each (taking turns)")
    ap.add_argument("--quick", action="store_true", help="2 samples of each (the test suite's)")
    args = ap.parse_args()
    if args.quick:
        args.n = 2
    env = {**os.environ, "DEPLOYTUI_EXIT_ON_READY": "1"}
    for code in APPS.values():  # warm the page cache
        once(code, env)
    samples: dict[str, list[float]] = {name: [] for name in APPS}
    for _ in range(args.n):
        for name, code in APPS.items():
            samples[name].append(once(code, env))
    med = {name: statistics.median(s) for name, s in samples.items()}
    ratio = med["deploytui"] / med["bare"]
    print(
        json.dumps(
            {
                "n": args.n,
                "ready_ms_median": {name: round(m * 1e3, 1) for name, m in med.items()},
                "ready_ms_min": {name: round(min(s) * 1e3, 1) for name, s in samples.items()},
                "ratio": round(ratio, 3),
                "goal": GOAL,
                "within_goal": ratio <= GOAL,
                "ratio_vs_bare_gc_held": round(med["deploytui"] / med["bare_gc_held"], 3),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
