"""Outputs against the eager reference: the numbers Polygraphy would report, not just OK."""

from __future__ import annotations

import json
import math
from pathlib import Path

from deploytui.core import tensorfile
from deploytui.core.record_parts import Element, OutputDiff


class ShapeError(ValueError):
    """The outputs do not have the reference's shape."""


# ---------------------------------------------------------------- outputs of any model

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-5
# An output's atol is at most this share of its largest |value|: atol is a floor for values near
# zero, and an output whose values all lie under it would pass any answer near zero (torchvision's
# mobilenet_v3_small with random weights peaks at 5e-10, timm's efficientnet_b0 at 1e-5: all
# zeros was "within atol 1e-5"). For outputs of 1e-2 and more the model's atol stands.
ATOL_SHARE_OF_SCALE = 1e-3
# The least rtol of an output in a half-precision dtype: torch.testing.assert_close's default for
# that dtype. One rounding step of bfloat16 (2^-8 of the value) fails a float32 rtol; the forms of a
# model whose outputs are bfloat16 differ from eager by one or two such steps.
HALF_RTOL = {"F16": 1e-3, "BF16": 1.6e-2}
WORST_SHOWN = 10


def output_atol(atol: float, want: list[float] | list[int]) -> float:
    """The atol an output is judged by: the model's, or ATOL_SHARE_OF_SCALE of the output's
    largest finite |value| where that is smaller (an output of zeros keeps the model's)."""
    scale = max((abs(w) for w in want if math.isfinite(w)), default=0.0)
    return min(atol, ATOL_SHARE_OF_SCALE * scale) if scale > 0 else atol


def _unravel(flat: int, shape: list[int]) -> list[int]:
    index = []
    for dim in reversed(shape):
        flat, r = divmod(flat, dim) if dim else (flat, 0)
        index.append(r)
    return index[::-1]


def element_diff(g: float, w: float) -> float:
    """|g - w|: 0 where they are equal, the same infinity, or NaN both (eager's NaN is the answer,
    as numpy's allclose with equal_nan); infinite where one is NaN or an infinity and the other
    is not."""
    if g == w or (math.isnan(g) and math.isnan(w)):
        return 0.0
    d = abs(g - w)
    return math.inf if math.isnan(d) else d


def _rel(d: float, w: float) -> float:
    if d == 0:
        return 0.0
    return d / abs(w) if w and math.isfinite(w) else math.inf


def _need(d: float, w: float, rtol: float) -> float:
    """The atol this element needs at `rtol`: its difference less rtol·|w| (where w is finite:
    a NaN or infinite want is met exactly or not at all)."""
    return d - rtol * abs(w) if math.isfinite(w) else d


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
    diffs = [element_diff(g, w) for g, w in zip(got, want, strict=True)]
    n = len(diffs)
    rels = [_rel(d, w) for d, w in zip(diffs, want, strict=True)]
    need = [_need(d, w, rtol) for d, w in zip(diffs, want, strict=True)]
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


OUTPUTS_KEY = "outputs"  # the reference's __metadata__: its output names in flattening order (JSON)


def reference_names(want: dict[str, tensorfile.Tensor], metadata: dict[str, str]) -> list[str]:
    """The reference's outputs in the model's order: as its metadata lists them, else (a file
    written before outputs had names) output_0, output_1, ..."""
    listed = metadata.get(OUTPUTS_KEY)
    if listed is None:
        return [k for k, _ in tensorfile.ordered(want, "output_")]
    try:
        names = json.loads(listed)
    except ValueError:
        names = None
    if not isinstance(names, list) or sorted(map(str, names)) != sorted(want):
        raise ShapeError(f"the reference's output list {listed[:80]!r} does not match its tensors")
    return [str(n) for n in names]


def match_outputs(got: dict[str, tensorfile.Tensor], names: list[str]) -> list[tensorfile.Tensor]:
    """A form's outputs in the reference's order: by name where the runtime wrote the model's
    names (Python runners, ONNX graphs, TorchScript dicts), else by position where it wrote
    output_0, output_1, ... (a flat list: AOTInductor, ExecuTorch, burn-onnx). ShapeError when
    neither fits."""
    if set(got) == set(names):
        return [got[n] for n in names]
    positional = tensorfile.ordered(got, "output_")
    if len(positional) == len(got) and [k for k, _ in positional] == [f"output_{i}" for i in range(len(got))]:
        if len(got) != len(names):
            raise ShapeError(f"wrote {len(got)} output(s), eager has {len(names)}")
        return [t for _, t in positional]
    raise ShapeError(f"wrote outputs {sorted(got)[:6]}, eager's are {names[:6]}")


def compare_files(got: Path, want: Path, atol: float, rtol: float) -> list[OutputDiff]:
    """Every output of the reference file against the same one in `got` (tensorfile, no numpy),
    named as the reference names them, each at its `output_atol` of the model's `atol` and at
    least its dtype's HALF_RTOL (the record keeps the tolerance applied); raises ShapeError (a
    missing, extra or misshapen output) or TensorFileError (unreadable)."""
    w, meta = tensorfile.read_all(want)
    names = reference_names(w, meta)
    got_list = match_outputs(tensorfile.read(got), names)
    return [
        compare_output(
            name,
            gt.values,
            list(gt.shape),
            w[name].values,
            list(w[name].shape),
            output_atol(atol, w[name].values),
            max(rtol, HALF_RTOL.get(w[name].dtype, 0.0)),
        )
        for name, gt in zip(names, got_list, strict=True)
    ]
