"""The app's start-up bookkeeping: its start timestamp, and the garbage collector held off until
the first frame.

Starting the app allocates a great many long-lived objects (Textual's modules, the parsed CSS,
the widgets): CPython's collector runs ~120 times meanwhile (~15 ms on our 2-core machine) and
finds nothing to free. `hold_gc` switches automatic collection off for that stretch and
`release_gc` (called when the first frame is up) freezes what start-up built, so later
collections skip it, and switches collection back on.
"""

import gc
import time

START_NS = time.perf_counter_ns()
_held = False


def hold_gc() -> None:
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_gc() -> None:
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()
