"""The fit of a sweep: how each form's costs grow with the model's parameter count.

Per form and measure (start-up, load, peak RSS, ship size, steady forward: the p50 of the runner's
timed forwards in the same runs) a least-squares line
`cost = fixed + per_mparam · (parameters / 10⁶)` over the sizes where the form ran, with R²;
the weight-copy ratio (peak RSS at the largest size − peak RSS at the smallest) ÷ the weights'
bytes at the largest, i.e. how many copies of the weights the form holds at its peak; and the
cross-over: the size at which the per-parameter cost equals the fixed cost (fixed ÷ per_mparam).
A line needs three sizes (through two it fits their noise), the ratio 16 MiB of weights.
Pure Python (the app imports it); the points are `sweep_store.Point`s.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from deploytui.core.record import RunRecord
from deploytui.scenarios.sweep.store import Point

MEASURES = ("startup", "load", "rss", "ship", "steady")
MIN_POINTS = 3  # a line through two sizes fits their noise exactly: no line under three
MIN_COPY_BYTES = 16 << 20  # the weight-copy ratio wants weights well above the RSS noise (~1 MiB)
UNITS = {"startup": "s", "load": "s", "rss": "bytes", "ship": "bytes", "steady": "s"}


@dataclass(frozen=True)
class Line:
    """`fixed + per_mparam · Mparams`, fitted on `n` points; `r2` None when it cannot be told
    (fewer than 3 points, or every cost the same)."""

    fixed: float
    per_mparam: float
    r2: float | None
    n: int

    @property
    def crossover_params(self) -> float | None:
        """Parameters at which the per-parameter part equals the fixed part; None when either is
        not positive (nothing to cross)."""
        if self.fixed <= 0 or self.per_mparam <= 0:
            return None
        return self.fixed / self.per_mparam * 1e6


def least_squares(xs: list[float], ys: list[float]) -> Line | None:
    """Ordinary least squares of ys on xs; None with fewer than 2 distinct xs."""
    if len(xs) < 2 or len(set(xs)) < 2:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    fixed = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - fixed - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 and len(xs) > 2 else None
    return Line(fixed, slope, r2, len(xs))


def measured(rec: RunRecord | None) -> bool:
    """The form ran (its numbers are real), whether or not its outputs were within tolerance."""
    return rec is not None and rec.measured


def cost(point: Point, form: str, measure: str) -> float | None:
    """One measure of one form at one point: median start-up (s), median load stage (s), median
    peak RSS (bytes), ship size (bytes), the p50 of its timed forwards (s; a record older than
    them: its steady_forward stage); None where the form did not run there."""
    rec = point.records.get(form)
    if measure == "ship":
        size = point.ship_bytes.get(form)
        return float(size) if size is not None and measured(rec) else None
    if rec is None or not measured(rec):
        return None
    if measure == "startup":
        return rec.wall.median if rec.wall else None
    if measure == "rss":
        return rec.rss.median if rec.rss else None
    if measure == "steady":
        steady = rec.forwards.p50_ms if rec.forwards else (rec.stages_ms or {}).get("steady_forward")
        return steady / 1000 if steady is not None else None
    load = (rec.stages_ms or {}).get("load")
    return load / 1000 if load is not None else None


@dataclass(frozen=True)
class FormFit:
    form: str
    lines: dict[str, Line | None]  # by measure
    copy_ratio: float | None
    points: int  # sizes where the form ran
    failures: list[tuple[int, str]]  # (parameters, why) where it did not


def fit_form(points: list[Point], form: str) -> FormFit:
    pts = sorted(points, key=lambda p: p.params)
    lines: dict[str, Line | None] = {}
    for m in MEASURES:
        xs, ys = [], []
        for p in pts:
            y = cost(p, form, m)
            if y is not None:
                xs.append(p.params / 1e6)
                ys.append(y)
        lines[m] = least_squares(xs, ys) if len(xs) >= MIN_POINTS else None
    ran = [p for p in pts if measured(p.records.get(form))]
    ratio = None
    if len(ran) >= 2 and high_weights(ran[-1], ran[0]) >= MIN_COPY_BYTES:
        low, high = cost(ran[0], form, "rss"), cost(ran[-1], form, "rss")
        if low is not None and high is not None:
            ratio = (high - low) / high_weights(ran[-1], ran[0])
    failures = [
        (p.params, failure(p.records[form]))
        for p in pts
        if form in p.records and not measured(p.records[form])
    ]
    return FormFit(form, lines, ratio, len(ran), failures)


def high_weights(high: Point, low: Point) -> int:
    """The weights' bytes the RSS difference is set against (the largest size's, less the
    smallest's: at 10² parameters they are nothing, but a short sweep may start higher)."""
    return max(high.weight_bytes - low.weight_bytes, 1)


def failure(rec: RunRecord) -> str:
    """The one line that says why a form did not run at a size."""
    if rec.status == "not-applicable":
        return rec.error or "not applicable"
    return ((rec.error or rec.status).splitlines() or [rec.status])[0]


def winners(points: list[Point], forms: list[str], measure: str) -> list[tuple[Point, str, float]]:
    """Per size, the form with the lowest measured cost (the point, the form, its cost)."""
    out = []
    for p in sorted(points, key=lambda p: p.params):
        costs = [(c, f) for f in forms if (c := cost(p, f, measure)) is not None]
        if costs:
            c, f = min(costs)
            out.append((p, f, c))
    return out


def fit_all(points: list[Point], forms: list[str]) -> list[FormFit]:
    return [fit_form(points, f) for f in forms if any(f in p.records for p in points)]


Formatter = Callable[[float], str]
