"""The app's start-up clock, and how its garbage collector runs: never in a key's turn.

Starting the app allocates a great many long-lived objects (Textual's modules, the parsed CSS,
the widgets): CPython's collector runs ~120 times meanwhile (~15 ms on our 2-core machine) and
finds nothing to free. `hold_gc` switches automatic collection off for that stretch;
`release_gc` (called when the first frame is up) freezes what start-up built, so later
collections skip it, and switches collection back on, without full collections.

A full collection (the oldest generation: every object the app keeps, ~60k of them once the tabs
are mounted) took 36–70 ms, and it came every ~4 s, triggered by the allocations of a key's
redraw: the user waited for it (bench/ui_latency.py's p95 was that collection). So the young
generations are collected as CPython does, and the full collection runs on the app's timer
instead (`collect_at_rest`, every FULL_EVERY_S, when as many young collections have gone by as
CPython would have waited for), out of step with the keys; `settle_gc` (the app's warm-up, once
the detail tabs are mounted and plotext imported) freezes what start-up left, which lives as
long as the app.
"""

import gc
import time

START_NS = time.perf_counter_ns()
FULL_EVERY_S = 2.0  # how often the app's timer looks whether a full collection is due
_NEVER = 1 << 30  # a threshold the oldest generation's count never reaches
_held = False
_full_at_rest = False  # full collections run on the app's timer (set by release_gc)


def hold_gc() -> None:
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_gc() -> None:
    global _held, _full_at_rest
    if _held:
        _held = False
        gc.freeze()
        young, middle, full = gc.get_threshold()
        if full < _NEVER:
            gc.set_threshold(young, middle, _NEVER)
            _full_at_rest = True
        gc.enable()


def settle_gc() -> None:
    """Freeze what the app built since its first frame (the detail tabs, the modules imported
    since), after collecting the young garbage among it."""
    if _full_at_rest:
        gc.collect(1)
        gc.freeze()


def collect_at_rest() -> None:
    """A full collection when one is due: as many young collections since the last one as
    CPython's default threshold waits for."""
    if _full_at_rest and gc.get_count()[2] >= 10:
        gc.collect()
