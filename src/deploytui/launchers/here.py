"""This machine: a form's runs spawned here by the measuring launcher (core/measure.py and
launcher.c) from the checkout, with the runners' environment (core/runenv.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from deploytui.core import paths
from deploytui.core.measure import Measurement, Progress, measure
from deploytui.core.runenv import runner_env


@dataclass(frozen=True)
class Here:
    where: str = "this machine"

    def measure(
        self,
        argv: list[str],
        *,
        n: int,
        warmup: int,
        timeout_s: float,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Measurement:
        return measure(
            argv,
            n=n,
            warmup=warmup,
            timeout_s=timeout_s,
            cwd=paths.ROOT,
            env=runner_env(),
            on_progress=on_progress,
            cancel=cancel,
        )


HERE = Here()
