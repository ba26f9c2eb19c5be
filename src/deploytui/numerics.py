"""Outputs against the eager reference: the numbers Polygraphy would report, not just OK."""

from __future__ import annotations

import math
from pathlib import Path

from deploytui import tensorfile
from deploytui.record import Element, OutputDiff


class ShapeError(ValueError):
    """The outputs do not have the reference's shape."""


# ---------------------------------------------------------------- outputs of any model

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-5
WORST_SHOWN = 10


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


def compare_files(got: Path, want: Path, atol: float, rtol: float) -> list[OutputDiff]:
    """Every output_N of the reference file against the same one in `got` (tensorfile, no numpy);
    raises ShapeError (a missing, extra or misshapen output) or TensorFileError (unreadable)."""
    g, w = tensorfile.read(got), tensorfile.read(want)
    want_list, got_list = tensorfile.ordered(w, "output_"), tensorfile.ordered(g, "output_")
    if len(got_list) != len(want_list):
        raise ShapeError(f"wrote {len(got_list)} output(s), eager has {len(want_list)}")
    return [
        compare_output(name, gt.values, list(gt.shape), wt.values, list(wt.shape), atol, rtol)
        for (name, wt), (_, gt) in zip(want_list, got_list, strict=True)
    ]
