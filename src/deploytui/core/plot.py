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
            fig.ruler(axis="x").ticks([math.log10(v) for v in xt], [x_text(v) for v in xt])
            fig.ruler(axis="y").ticks([math.log10(v) for v in yt], [y_text(v) for v in yt])
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
                ruler.ticks([math.log10(v) for v in ticks], [text(v) for v in ticks])
        fig.title(title)
        return str(fig.build())

    return draw


def table(columns: list[str], rows: list[list[str]]) -> str:
    """Columns padded to their widest cell, a dashed rule under the header."""
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)
