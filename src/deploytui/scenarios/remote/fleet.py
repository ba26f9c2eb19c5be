"""Several targets at once: a thread per target, each doing its work (its forms, its serving
cells) one thing after another. A target measures one thing at a time (its lock keeps two
deploytui processes apart there); different targets measure in parallel, so a fleet of boards
costs the time of its slowest one, not the sum. The CLI (`bench --target a,b`) and the app
(`A`, run all on every target) both go through here."""

from __future__ import annotations

import threading
from collections.abc import Callable

from deploytui.launchers.targets import Target


def each_target(
    found: list[Target], work: Callable[[Target], None], cancel: threading.Event | None = None
) -> dict[str, str]:
    """`work(target)` on every target at once, a thread each, waiting for all of them; returns
    what each target whose work raised said (name -> `Type: message`), the others having
    finished: one target's fault never stops another's runs. An interrupt while waiting sets
    `cancel` (which the works watch), waits for them to stop, and goes on."""
    failed: dict[str, str] = {}

    def on(target: Target) -> None:
        try:
            work(target)
        except Exception as e:  # said by the caller, in its own words; the other threads go on
            failed[target.name] = f"{type(e).__name__}: {e}"

    threads = [threading.Thread(target=on, args=(t,), name=f"target-{t.name}") for t in found]
    for th in threads:
        th.start()
    try:
        for th in threads:
            th.join()
    except KeyboardInterrupt:
        if cancel is not None:
            cancel.set()
        for th in threads:
            th.join()
        raise
    return failed
