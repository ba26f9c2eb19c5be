"""The run in flight, as the app knows it (kept apart from the Run widget so the app can
start without importing that widget)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LiveRun:
    """What the app knows about the run in flight (fed by RunProgress messages)."""

    form: str
    total: int  # warm-up runs + counted runs
    warmup: int
    done: int = 0
    rss: int = 0
    elapsed: float = 0.0
    walls: list[float] = field(default_factory=list)
    peak_rss: int = 0
    max_elapsed: float = 0.0
    failed: str = ""
