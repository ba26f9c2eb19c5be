"""Logits against the eager reference: the numbers Polygraphy would report, not just OK."""

from __future__ import annotations

import math
import struct

from deploytui.record import Diff

DEFAULT_TOL = 1e-6


class ShapeError(ValueError):
    """The logits are not a rectangular list of numbers of the reference's shape."""


def as_f32(x: float) -> float:
    value: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return value


def _matrix(values: object, name: str) -> list[list[float]]:
    if not isinstance(values, list) or not values or not all(isinstance(r, list) for r in values):
        raise ShapeError(f"{name} is not a 2-D list")
    width = len(values[0])
    if any(len(r) != width for r in values):
        raise ShapeError(f"{name} rows have different lengths")
    out = []
    for r in values:
        row = []
        for v in r:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ShapeError(f"{name} holds a non-finite or non-numeric value: {v!r}")
            row.append(as_f32(float(v)))
        out.append(row)
    return out


def compare(got: object, want: object, tol: float = DEFAULT_TOL) -> Diff:
    """Element-wise comparison as f32 values; raises ShapeError on a malformed or mismatched `got`."""
    g, w = _matrix(got, "logits"), _matrix(want, "reference")
    if (len(g), len(g[0])) != (len(w), len(w[0])):
        raise ShapeError(f"logits have shape [{len(g)}, {len(g[0])}], expected [{len(w)}, {len(w[0])}]")
    abs_d = [[abs(a - b) for a, b in zip(rg, rw, strict=False)] for rg, rw in zip(g, w, strict=False)]
    flat = [(d, i, j) for i, row in enumerate(abs_d) for j, d in enumerate(row)]
    worst, wi, wj = max(flat, key=lambda t: t[0])  # the first of equal ones
    rel = max(d / abs(w[i][j]) if w[i][j] != 0 else (0.0 if d == 0 else math.inf) for d, i, j in flat)
    return Diff(
        shape=[len(w), len(w[0])],
        n=len(flat),
        max_abs=worst,
        mean_abs=sum(d for d, _, _ in flat) / len(flat),
        max_rel=rel,
        worst_index=[wi, wj],
        worst_got=g[wi][wj],
        worst_want=w[wi][wj],
        tol=tol,
        within_tol=worst <= tol,
        abs_diffs=abs_d,
    )
