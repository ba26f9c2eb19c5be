"""The launcher seam: what a scenario asks of the place a form's process runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from deploytui.core.measure import Measurement, Progress


class Launcher(Protocol):
    """Runs `argv` there `warmup` + `n` times through the measuring launcher, each run a fresh
    process measured where it runs (its start-up, peak RSS and exit), and says where that is."""

    @property
    def where(self) -> str: ...

    def measure(
        self,
        argv: list[str],
        *,
        n: int,
        warmup: int,
        timeout_s: float,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Measurement: ...
