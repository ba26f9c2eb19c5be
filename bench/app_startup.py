"""Time-to-ready of the deploytui app against a bare Textual app, in the same run.

Each sample is a fresh process. Time-to-ready runs from just before the spawn to the moment the
app's `on_ready` fires (the child prints CLOCK_MONOTONIC there; the parent read the same clock
before spawning), so interpreter start and imports count, shutdown does not. The deploytui app
exits in `on_ready` when DEPLOYTUI_EXIT_ON_READY is set. Samples alternate between the two apps.
Prints JSON: the medians, the ratio (goal: at most 1.25) and the app's own "ready in" figure.

    .venv/bin/python bench/app_startup.py [-n 9]
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

DEPLOYTUI = """
import time
from deploytui.tui.app import DeployApp
app = DeployApp()
app.run(headless=True)
print(f"READY_AT {app.ready_at_ns} {app.ready_ms:.1f}", flush=True)
"""


def once(code: str, env: dict) -> tuple[float, float | None]:
    """(seconds from spawn to on_ready, the app's own ready-in ms when it reports one)."""
    t0 = time.monotonic_ns()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise SystemExit(f"failed: {out.stderr[-1500:]}")
    fields = next(ln.split() for ln in out.stdout.splitlines() if ln.startswith("READY_AT "))
    own = float(fields[2]) if len(fields) > 2 else None
    return (int(fields[1]) - t0) / 1e9, own


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=9, help="samples of each (alternating)")
    args = ap.parse_args()
    env = {**os.environ, "DEPLOYTUI_EXIT_ON_READY": "1"}
    once(BARE, env), once(DEPLOYTUI, env)   # warm the page cache and .pyc files
    bare, app, own = [], [], []
    for _ in range(args.n):
        bare.append(once(BARE, env)[0])
        wall, ready_ms = once(DEPLOYTUI, env)
        app.append(wall)
        own.append(ready_ms)
    b, a = statistics.median(bare), statistics.median(app)
    print(json.dumps({
        "n": args.n, "bare_textual_ready_ms": round(b * 1e3, 1), "deploytui_ready_ms": round(a * 1e3, 1),
        "ratio": round(a / b, 3), "goal": 1.25, "within_goal": a / b <= 1.25,
        "deploytui_ready_in_ms_own_clock": round(statistics.median(own), 1),
        "bare_min_ms": round(min(bare) * 1e3, 1), "deploytui_min_ms": round(min(app) * 1e3, 1),
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
