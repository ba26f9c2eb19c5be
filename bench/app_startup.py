"""Time-to-ready of the deploytui app against a bare Textual app, in the same run.

Each sample is a fresh process, spawn to exit, where the app exits in `on_ready` (headless).
The deploytui app exits there when DEPLOYTUI_EXIT_ON_READY is set. Prints JSON: the medians,
the ratio (goal: at most 1.25) and the app's own "ready in" figure.

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
from textual.app import App
class Bare(App):
    def on_ready(self):
        self.exit()
Bare().run(headless=True)
"""

DEPLOYTUI = """
from deploytui.tui.app import DeployApp
app = DeployApp()
app.run(headless=True)
print(f"READY {app.return_value:.1f}")
"""


def once(code: str, env: dict) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"failed: {out.stderr[-1500:]}")
    return wall, out.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=9, help="samples of each (alternating)")
    args = ap.parse_args()
    env = {**os.environ, "DEPLOYTUI_EXIT_ON_READY": "1"}
    once(BARE, env), once(DEPLOYTUI, env)   # warm the page cache and .pyc files
    bare, app, ready = [], [], []
    for _ in range(args.n):
        bare.append(once(BARE, env)[0])
        wall, out = once(DEPLOYTUI, env)
        app.append(wall)
        ready += [float(ln.split()[1]) for ln in out.splitlines() if ln.startswith("READY ")]
    b, a = statistics.median(bare), statistics.median(app)
    print(json.dumps({
        "n": args.n, "bare_textual_ms": round(b * 1e3, 1), "deploytui_ms": round(a * 1e3, 1),
        "ratio": round(a / b, 3), "goal": 1.25, "within_goal": a / b <= 1.25,
        "deploytui_ready_in_ms_median": round(statistics.median(ready), 1) if ready else None,
        "bare_min_ms": round(min(bare) * 1e3, 1), "deploytui_min_ms": round(min(app) * 1e3, 1),
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
