"""plotext 6 figures as text: the app's charts and the scale chart (CLI, report, app).

plotext 6 has no public independent figure: we take a private terminal's master figure and lift
its size limit (`limit(False, False)`), else it is capped at the real tty size. plotext is
imported on first draw (~130-150 ms), or ahead of it by `preload` (the app does, off its UI thread).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from deploytui.core import shorten

ANSI = re.compile(r"\x1b\[[0-9;]*m")
MARKERS = "abcdefghijklmnopqrstuvwxyz"  # one letter per line: readable without colour


def preload() -> None:
    """Import plotext now, so that no chart's first draw waits for it."""
    import plotext._kernel.terminal  # noqa: F401


def figure(width: int, height: int) -> Any:
    import plotext._kernel.terminal as term_mod

    term = term_mod.terminal()
    term.limit(False, False)
    fig = term._master
    fig.plot_size(width, height)
    return fig


def plain(text: str) -> str:
    """A chart without its colour codes (files, pipes)."""
    return ANSI.sub("", text)


def _decades(lo: float, hi: float) -> list[float]:
    """The powers of ten within [lo, hi]; the ends themselves when there is none or one."""
    a, b = math.ceil(math.log10(lo)), math.floor(math.log10(hi))
    inside = [10.0**k for k in range(a, b + 1)]
    return inside if len(inside) >= 2 else sorted({lo, *inside, hi})


def _byte_decades(lo: float, hi: float) -> list[float]:
    """1, 10, 100 of B, KiB, MiB, GiB, TiB within [lo, hi]; the ends when there are fewer than two."""
    inside = sorted(v for k in range(5) for j in range(3) if lo <= (v := float((1 << 10 * k) * 10**j)) <= hi)
    return inside if len(inside) >= 2 else sorted({lo, *inside, hi})


def loglog(
    lines: list[tuple[str, list[float], list[float]]],
    *,
    title: str,
    x_text: Callable[[float], str],
    y_text: Callable[[float], str],
) -> Callable[[int, int], str]:
    """Lines (label, xs, ys) on log-log axes, the i-th drawn with the letter MARKERS[i] (the
    caller's legend names them), ticks at the decades labelled by x_text / y_text. The axes are
    linear in log10 of the values, the ticks say the values (plotext 6's own log scale counts
    custom ticks unlogged in its limits)."""

    def draw(width: int, height: int) -> str:
        fig = figure(width, height)
        xs = [x for _, lx, _ in lines for x in lx if x > 0]
        ys = [y for _, _, ly in lines for y in ly if y > 0]
        for i, (_label, lx, ly) in enumerate(lines):
            pts = [(math.log10(x), math.log10(y)) for x, y in zip(lx, ly, strict=True) if x > 0 and y > 0]
            if pts:
                sig = fig.signal([p[0] for p in pts], [p[1] for p in pts], marker=MARKERS[i % len(MARKERS)])
                fig.draw(sig.lines(True))
        if xs and ys:
            xt, yt = _decades(min(xs), max(xs)), _decades(min(ys), max(ys))
            xv, xl = thin(xt, [x_text(v) for v in xt], width - 10)
            yv, yl = thin(yt, [y_text(v) for v in yt], height - 4, across=False)
            fig.ruler(axis="x").ticks([math.log10(v) for v in xv], xl)
            fig.ruler(axis="y").ticks([math.log10(v) for v in yv], yl)
        fig.title(title)
        return str(fig.build())

    return draw


def pareto(
    points: list[tuple[str, float, float]],
    front: list[int],
    *,
    title: str,
    x_text: Callable[[float], str],
    y_text: Callable[[float], str],
    y_bytes: bool = False,
) -> Callable[[int, int], str]:
    """Points (marker, x, y) on log-log axes, the ones whose indices are in `front` joined by a
    line beneath them (in order of x), ticks at the decades (of KiB, MiB, GiB with `y_bytes`).
    Values must be > 0."""

    y_ticks = _byte_decades if y_bytes else _decades

    def draw(width: int, height: int) -> str:
        fig = figure(width, height)
        pts = [(m, math.log10(x), math.log10(y)) for m, x, y in points if x > 0 and y > 0]
        line = sorted((pts[i][1], pts[i][2]) for i in front if i < len(pts))
        if len(line) > 1:
            sig = fig.signal([p[0] for p in line], [p[1] for p in line], marker="·")
            fig.draw(sig.lines(True))
        for marker, x, y in pts:
            fig.draw(fig.signal([x], [y], marker=marker))
        if pts:
            axes = (("x", [p[1] for p in pts], x_text, _decades), ("y", [p[2] for p in pts], y_text, y_ticks))
            for axis, values, text, at in axes:
                lo, hi = min(values), max(values)
                pad = max(hi - lo, 0.5) * 0.08
                ruler = fig.ruler(axis=axis)
                ruler.lim(lo - pad, hi + pad)
                ticks = at(10 ** (lo - pad), 10 ** (hi + pad))
                room = width - 10 if axis == "x" else height - 4
                kept, names = thin(ticks, [text(v) for v in ticks], room, across=axis == "x")
                ruler.ticks([math.log10(v) for v in kept], names)
        fig.title(title)
        return str(fig.build())

    return draw


def thin(
    ticks: list[float], labels: list[str], room: int, across: bool = True
) -> tuple[list[float], list[str]]:
    """Every k-th tick (the first kept), k the least that fits the labels in `room` characters
    (`across`: side by side with a space between; else one a row): labels never run together."""
    if not ticks:
        return ticks, labels
    need = (max(len(label) for label in labels) + 2) if across else 2
    k = max(1, math.ceil(len(ticks) * need / max(room, 1)))
    return ticks[::k], labels[::k]


def hbars(
    labels: list[str],
    values: list[float],
    width: int,
    height: int,
    *,
    title: str = "",
    log: bool = False,
    value_text: Callable[[float], str] = str,
    colour: str = "\x1b[34m",
) -> str:
    """Horizontal bars as text, one row each: the label (cut with … to fit, never overlapping the
    next), the bar, the value after it. With `log` the lengths are log10 of the values. Rows past
    `height` (the title and a "… n more" line counted) are left out, and that line says so."""
    lines = [title[:width]] if title else []
    room = height - len(lines)
    rows = list(zip(labels, values, strict=True))
    if len(rows) > room:
        rows = rows[: max(room - 1, 0)]
    texts = [value_text(v) for _, v in rows]
    vw = max((len(t) for t in texts), default=0)
    lw = min(max((len(lab) for lab, _ in rows), default=0), max(width - vw - 2 - 8, 6))  # a bar of 8 at least
    lw = max(min(lw, width - vw - 3), 1)  # a bar of 1 at the least in a narrow chart
    bar_w = max(width - lw - vw - 2, 1)
    vals = [max(float(v), 0.0) for _, v in rows]
    if log and any(v > 0 for v in vals):
        floor = math.floor(math.log10(min(v for v in vals if v > 0)))
        vals = [math.log10(v) - floor + 0.3 if v > 0 else 0.0 for v in vals]
    top = max(vals, default=0.0) or 1.0
    for (label, _), v, text in zip(rows, vals, texts, strict=True):
        name = shorten.end(label, lw)
        n = round(v / top * bar_w) if v > 0 else 0
        bar = "█" * max(n, 1 if v > 0 else 0)
        lines.append(f"{name:<{lw}} {colour}{bar}\x1b[0m {text}")
    if len(labels) > len(rows):
        lines.append(f"… {len(labels) - len(rows)} more"[:width])
    return "\n".join(lines)


def table(columns: list[str], rows: list[list[str]]) -> str:
    """Columns padded to their widest cell, a dashed rule under the header."""
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)
