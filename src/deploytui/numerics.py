"""Logits against the eager reference: the numbers Polygraphy would report, not just OK."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from deploytui.record import Diff
from deploytui.units import f32

DEFAULT_TOL = 1e-6


class ShapeError(ValueError):
    """The logits are not a rectangular list of numbers of the reference's shape."""


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
            row.append(f32(float(v)))
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


# ---------------------------------------------------------------- outputs of any model

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-5
WORST_SHOWN = 10


@dataclass
class Element:
    index: list[int]
    got: float
    want: float
    abs_diff: float


@dataclass
class OutputDiff:
    """One output against the eager reference, elementwise |got - want| <= atol + rtol*|want|."""

    name: str
    shape: list[int]
    n: int
    max_abs: float
    mean_abs: float
    max_rel: float
    worst: list[Element]  # the largest absolute differences, worst first (at most WORST_SHOWN)
    atol: float
    rtol: float
    min_atol: float  # the smallest atol that would pass at this rtol
    failing: int  # elements outside the tolerance
    within_tol: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        verdict = "OK" if self.within_tol else f"FAIL ({self.failing} of {self.n} outside)"
        where = tuple(self.worst[0].index) if self.worst else ()
        return (
            f"{self.name} {self.shape} max|diff|={self.max_abs:.3g} max rel={self.max_rel:.3g} "
            f"worst={where} atol={self.atol:g} rtol={self.rtol:g} {verdict}"
        )


def _unravel(flat: int, shape: list[int]) -> list[int]:
    index = []
    for dim in reversed(shape):
        flat, r = divmod(flat, dim) if dim else (flat, 0)
        index.append(r)
    return index[::-1]


def _diff(g: float, w: float) -> float:
    if g == w:  # equal, including the same infinity
        return 0.0
    d = abs(g - w)
    return math.inf if math.isnan(d) else d


def compare_output(
    name: str,
    got: list[float] | list[int],
    got_shape: list[int],
    want: list[float] | list[int],
    want_shape: list[int],
    atol: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
) -> OutputDiff:
    """Both sides as flat row-major values (f32 values read as Python floats)."""
    if list(got_shape) != list(want_shape):
        raise ShapeError(f"{name} has shape {list(got_shape)}, expected {list(want_shape)}")
    if len(got) != len(want):
        raise ShapeError(f"{name} holds {len(got)} values for shape {list(want_shape)}")
    diffs = [_diff(g, w) for g, w in zip(got, want, strict=True)]
    n = len(diffs)
    rels = [d / abs(w) if w else (0.0 if d == 0 else math.inf) for d, w in zip(diffs, want, strict=True)]
    need = [d - rtol * abs(w) for d, w in zip(diffs, want, strict=True)]
    order = sorted(range(n), key=lambda i: -diffs[i])[:WORST_SHOWN]
    failing = sum(1 for x in need if x > atol)
    return OutputDiff(
        name=name,
        shape=list(want_shape),
        n=n,
        max_abs=max(diffs, default=0.0),
        mean_abs=sum(diffs) / n if n else 0.0,
        max_rel=max(rels, default=0.0),
        worst=[Element(_unravel(i, list(want_shape)), got[i], want[i], diffs[i]) for i in order],
        atol=atol,
        rtol=rtol,
        min_atol=max(0.0, *need) if need else 0.0,
        failing=failing,
        within_tol=failing == 0,
    )
