"""The sweep as text: the fitted figures, the measured grid, who wins where, what failed, and the
log-log charts. `deploytui sweep`, the report and the app's Scale screen all show these."""

from __future__ import annotations

from collections.abc import Callable

from deploytui.core import plot
from deploytui.core.units import seconds, short_size
from deploytui.scenarios.sweep import fit
from deploytui.scenarios.sweep.store import Point

CHARTS = (("startup", "start-up (median wall, s) against parameters"), ("rss", "peak RSS against parameters"))


def params_text(n: float) -> str:
    """1.2e+05 -> '120k', 2.0e+08 -> '200M'."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            v = n / scale
            return f"{v:.3g}{unit}"
    return f"{n:.0f}"


def value_text(measure: str) -> Callable[[float], str]:
    return seconds if fit.UNITS[measure] == "s" else short_size


def line_text(line: fit.Line | None, measure: str) -> str:
    """'45.2ms + 12.1ms/M (R² 0.998)'"""
    if line is None:
        return "–"
    fmt = value_text(measure)
    slope = fmt(abs(line.per_mparam))
    r2 = f" R²{line.r2:.3f}" if line.r2 is not None else ""
    fixed = fmt(line.fixed) if line.fixed >= 0 else "-" + fmt(-line.fixed)
    return f"{fixed} {'+' if line.per_mparam >= 0 else '-'} {slope}/M{r2}"


def fit_rows(points: list[Point], forms: list[str]) -> tuple[list[str], list[list[str]]]:
    columns = [
        "form",
        "ran",
        "start-up",
        "load",
        "peak RSS",
        "ship size",
        "steady fwd",
        "copies",
        "x-over start",
        "x-over RSS",
    ]
    rows = []
    for f in fit.fit_all(points, forms):
        cross = [line.crossover_params if (line := f.lines[m]) else None for m in ("startup", "rss")]
        rows.append(
            [
                f.form,
                f"{f.points}/{len(points)}",
                *(line_text(f.lines[m], m) for m in fit.MEASURES),
                f"{f.copy_ratio:.2f}" if f.copy_ratio is not None else "–",
                *(params_text(c) if c is not None else "–" for c in cross),
            ]
        )
    return columns, rows


def per_size(
    points: list[Point], forms: list[str], cell: Callable[[Point, str], str]
) -> tuple[list[str], list[list[str]]]:
    """Forms down (those the sweep has a record of), sizes across, `cell(point, form)` in each."""
    columns = ["form", *(params_text(p.params) for p in points)]
    rows = [
        [form, *(cell(p, form) for p in points)] for form in forms if any(form in p.records for p in points)
    ]
    return columns, rows


def grid_rows(points: list[Point], forms: list[str], measure: str) -> tuple[list[str], list[list[str]]]:
    """The measured cost, or `×` where the form did not run."""
    fmt = value_text(measure)

    def cell(p: Point, form: str) -> str:
        c = fit.cost(p, form, measure)
        return fmt(c) if c is not None else ("×" if form in p.records else "")

    return per_size(points, forms, cell)


def build_rows(points: list[Point], forms: list[str]) -> tuple[list[str], list[list[str]]]:
    """Seconds its model steps took / the build's peak memory (process tree, as the sweep watched
    it) / what ships, as the build recorded them."""

    def cell(p: Point, form: str) -> str:
        secs, peak, ship = p.build_s.get(form), p.build_peak_rss.get(form), p.ship_bytes.get(form)
        return f"{seconds(secs)} / {short_size(peak)} / {short_size(ship)}" if secs is not None else ""

    return per_size(points, forms, cell)


def winner_rows(points: list[Point], forms: list[str]) -> tuple[list[str], list[list[str]]]:
    columns = ["parameters", "model", "fastest start-up", "least peak RSS"]
    start = {p.model: (f, c) for p, f, c in fit.winners(points, forms, "startup")}
    rss = {p.model: (f, c) for p, f, c in fit.winners(points, forms, "rss")}
    rows = []
    for p in points:
        s, r = start.get(p.model), rss.get(p.model)
        rows.append(
            [
                params_text(p.params),
                p.model,
                f"{s[0]} {seconds(s[1])}" if s else "–",
                f"{r[0]} {short_size(r[1])}" if r else "–",
            ]
        )
    return columns, rows


def failure_lines(points: list[Point], forms: list[str]) -> list[str]:
    out = []
    for f in fit.fit_all(points, forms):
        for params, why in f.failures:
            if not why.startswith("not applicable"):
                out.append(f"{f.form} at {params_text(params)}: {why}")
    return out


def chart_lines(
    points: list[Point], forms: list[str], measure: str
) -> list[tuple[str, list[float], list[float]]]:
    out = []
    for form in forms:
        xs, ys = [], []
        for p in points:
            c = fit.cost(p, form, measure)
            if c is not None:
                xs.append(float(p.params))
                ys.append(c)
        if xs:
            out.append((form, xs, ys))
    return out


def chart(points: list[Point], forms: list[str], measure: str, title: str) -> Callable[[int, int], str]:
    return plot.loglog(
        chart_lines(points, forms, measure), title=title, x_text=params_text, y_text=value_text(measure)
    )


def legend(points: list[Point], forms: list[str], measure: str) -> str:
    names = [name for name, _, _ in chart_lines(points, forms, measure)]
    return "  ".join(f"{plot.MARKERS[i % len(plot.MARKERS)]} {n}" for i, n in enumerate(names))


def render(points: list[Point], forms: list[str], width: int = 100, height: int = 24) -> str:
    """Everything, as plain text (the CLI's output, the report's section)."""
    parts = [
        "Fit per form: cost = fixed + per-Mparam x parameters/10^6 (least squares, R²); copies = "
        "(peak RSS at the largest size - at the smallest) / weight bytes; x-over = the size where "
        "the per-parameter part equals the fixed part (start-up, peak RSS)",
        plot.table(*fit_rows(points, forms)),
        "Start-up (median wall) per size",
        plot.table(*grid_rows(points, forms, "startup")),
        "Peak RSS (median) per size",
        plot.table(*grid_rows(points, forms, "rss")),
        "Build per size: seconds of its model steps / peak memory of the build / ship size",
        plot.table(*build_rows(points, forms)),
        "Winners per size (measured, not fitted)",
        plot.table(*winner_rows(points, forms)),
    ]
    fails = failure_lines(points, forms)
    if fails:
        parts += ["Failed points", "\n".join(fails)]
    notes = [f"{k} at {params_text(p.params)}: {v}" for p in points for k, v in p.notes.items()]
    if notes:
        parts += ["Fewer runs", "\n".join(notes)]
    for measure, title in CHARTS:
        parts.append(plot.plain(chart(points, forms, measure, title)(width, height)))
        parts.append(legend(points, forms, measure))
    return "\n\n".join(parts)
