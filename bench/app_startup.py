"""Time-to-ready of the deploytui app against a bare Textual app, in the same run.

Each sample is a fresh process. Time-to-ready runs from just before the spawn to the moment the
app's `on_ready` fires (the child prints CLOCK_MONOTONIC there; the parent read the same clock
before spawning), so interpreter start and imports count, shutdown does not. deploytui starts
through `run_app`, the entry a bare `deploytui` uses, and exits in `on_ready` when
DEPLOYTUI_EXIT_ON_READY is set.

Rounds, as bench/support/rounds.py has them: in each, K samples of every app, the apps taking
turns in alternating order (ABBA…); each round gives one ratio, deploytui's median over the
bare app's; the verdict is the median of those ratios, with their spread and the medians of the
first and the second half of the rounds. It counts as settled when both halves fall on the same
side of the goal as the whole; while they do not, four rounds more at a time, up to
--max-rounds (single samples moved the ratio by ±0.1 from run to run). Every sample runs on one
core (--core, the last by default): on this project's VMs the cores differ in speed.

The app holds the garbage collector off until its first frame (see `tui/_start.py`). The goal
compares it with a bare Textual app as anyone writes one; the third app, a bare one with the
collector off too, shows what is left once that trick is granted to both; the fourth, Textual
alone with the main screen's kinds and numbers of widgets (collector off), shows how much of the
gap is Textual's own cost of that screen and how much deploytui's; the fifth, that same app after
importing every deploytui module the app had imported by its first frame (read from a first run),
splits deploytui's part into its imports and the rest of its first frame (its stores read, its rows,
its CSS).
Prints JSON: the medians, the ratio (goal: at most GOAL, 1.15) with its rounds, the other ratios and
the minima; exits 1 when the goal is missed or the verdict is not settled.

    .venv/bin/python bench/app_startup.py [--rounds R] [--max-rounds M] [-k K] [--core C] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import replace

from support.rounds import Verdict, run, verdict

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

# Textual's own cost of the main screen's widgets, without deploytui: the header lines, a list of
# 37 one-line options (the form list: 30 forms, 7 families), the detail's title, a footer of 16 keys
SAME_WIDGETS = """
import gc, time
gc.disable()
{imports}
from textual.app import App
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
class Main(Screen):
    BINDINGS = [Binding(k, "noop", k.upper()) for k in "abcdefghijklmnop"]
    def compose(self):
        for line in ("deploytui · a1 · 1x16 float32", "built 30 of 30", "targets", ""):
            yield Static(line)
        with Horizontal():
            yield OptionList(*[f"● form-{i:02d}-key      12.3ms  45.6M ✓" for i in range(37)])
            with Vertical():
                yield Static("form-00-key\\nits runtime\\nits files")
        yield Footer()
class Same(App):
    def get_default_screen(self):
        return Main()
    def on_ready(self):
        print(f"READY_AT {time.monotonic_ns()}", flush=True)
        self.exit()
Same().run(headless=True)
"""

DEPLOYTUI = """
from deploytui.views.tui import run_app
from deploytui.core.workspace import Workspace
app = run_app(Workspace.from_env(), headless=True)  # the entry point: DEPLOYTUI_ARTIFACTS or the default
print(f"READY_AT {app.ready_at_ns}", flush=True)
import sys
print("MODULES", *sorted(m for m in sys.modules if m.startswith("deploytui")), flush=True)
"""
GOAL = 1.15  # deploytui ready within 1.15x a bare Textual app (issue 32)


def once(code: str, env: dict) -> float:
    """Seconds from spawn to on_ready."""
    return spawn(code, env)[0]


def spawn(code: str, env: dict) -> tuple[float, str]:
    """Seconds from spawn to on_ready, and what the app printed."""
    t0 = time.monotonic_ns()
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"failed: {out.stderr[-1500:]}")
    fields = next(ln.split() for ln in out.stdout.splitlines() if ln.startswith("READY_AT "))
    return (int(fields[1]) - t0) / 1e9, out.stdout


def apps(env: dict) -> tuple[dict[str, str], int]:
    """The apps, the one of deploytui's imports made of the modules a first run of the app had
    imported by its first frame (and how many those are)."""
    printed = spawn(DEPLOYTUI, env)[1]
    modules = next(ln.split()[1:] for ln in printed.splitlines() if ln.startswith("MODULES "))
    imports = "\n".join(f"import {m}" for m in modules)
    return {
        "bare": BARE,
        "bare_gc_held": BARE_GC_HELD,
        "same_widgets": SAME_WIDGETS.replace("{imports}", ""),
        "imports_same_widgets": SAME_WIDGETS.replace("{imports}", imports),
        "deploytui": DEPLOYTUI,
    }, len(modules)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8, help="rounds at least")
    ap.add_argument("--max-rounds", type=int, default=24, help="at most, while not settled")
    ap.add_argument("-k", type=int, default=3, help="samples of each app a round")
    ap.add_argument(
        "--core", type=int, default=max(os.sched_getaffinity(0)), help="the core every sample runs on"
    )
    ap.add_argument("--quick", action="store_true", help="2 rounds of 1 sample (the test suite's)")
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.core})  # the apps inherit it: cores differ (serve_fidelity.py)
    if args.quick:
        args.rounds, args.max_rounds, args.k = 2, 2, 1
    env = {**os.environ, "DEPLOYTUI_EXIT_ON_READY": "1"}
    codes, n_modules = apps(env)
    for code in codes.values():  # warm the page cache
        once(code, env)
    samples: dict[str, list[float]] = {name: [] for name in codes}

    def one_round(in_order: bool) -> dict[str, float]:
        got: dict[str, list[float]] = {name: [] for name in codes}
        for _ in range(args.k):
            for name in list(codes) if in_order else list(codes)[::-1]:
                got[name].append(once(codes[name], env))
        for name, s in got.items():
            samples[name].extend(s)
        return {"ready": statistics.median(got["deploytui"]) / statistics.median(got["bare"])}

    def settled(_measure: str, ratios: list[float]) -> Verdict:
        """Both halves on the goal's side the whole is on (`stable` is what the rounds read)."""
        whole = verdict(ratios, target=0.0)
        return replace(whole, stable=len({r <= GOAL for r in (whole.ratio, *whole.halves)}) == 1)

    verdicts, round_ratios = run(one_round, args.rounds, args.max_rounds, settled)
    v = verdicts["ready"]
    med = {name: statistics.median(s) for name, s in samples.items()}
    print(
        f"deploytui ready {med['deploytui'] * 1e3:.1f} ms, bare Textual {med['bare'] * 1e3:.1f} ms: "
        f"{v.line()}, {v.rounds} rounds of {args.k}: "
        f"{'within' if v.ratio <= GOAL else 'over'} {GOAL}, {'settled' if v.stable else 'NOT settled'}",
        flush=True,
    )
    print(
        json.dumps(
            {
                "rounds": v.rounds,
                "k": args.k,
                "ready_ms_median": {name: round(m * 1e3, 1) for name, m in med.items()},
                "ready_ms_min": {name: round(min(s) * 1e3, 1) for name, s in samples.items()},
                "ratio": round(v.ratio, 3),
                "round_ratios": [round(r, 3) for r in round_ratios["ready"]],
                "spread": [round(x, 3) for x in v.spread],
                "halves": [round(x, 3) for x in v.halves],
                "settled": v.stable,
                "goal": GOAL,
                "within_goal": v.ratio <= GOAL,
                "ratio_vs_bare_gc_held": round(med["deploytui"] / med["bare_gc_held"], 3),
                # how far Textual alone gets with the main screen's widgets, and deploytui's own part
                "same_widgets_vs_bare": round(med["same_widgets"] / med["bare"], 3),
                "ratio_vs_same_widgets": round(med["deploytui"] / med["same_widgets"], 3),
                # deploytui's part split: its imports (the modules it had by its first frame), the rest
                "modules_imported": n_modules,
                "imports_ms": round((med["imports_same_widgets"] - med["same_widgets"]) * 1e3, 1),
                "first_frame_rest_ms": round((med["deploytui"] - med["imports_same_widgets"]) * 1e3, 1),
            },
            indent=1,
        )
    )
    return 0 if v.ratio <= GOAL and v.stable else 1


if __name__ == "__main__":
    raise SystemExit(main())
