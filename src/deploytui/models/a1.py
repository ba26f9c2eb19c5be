"""The reference page's main-line model "A1", as plain numbers (no torch).

One place for the model's shape, its closed-form weights and the reference input. The torch
module (`deploytui.models.a1_module`) is built from these; the Rust and C++ runners rebuild the same input
with the same formula (element k = 0.1*k - 0.5, computed in f64, stored as f32).
"""

from __future__ import annotations

from typing import Any

from deploytui.core.units import f32

D_IN, D_HIDDEN, D_OUT = 4, 8, 3
BATCH = 4
INPUT_SHAPE = (BATCH, D_IN)
OUTPUT_SHAPE = (BATCH, D_OUT)


def input_values() -> list[list[float]]:
    """The [4, 4] input: element k (row-major) is 0.1*k - 0.5, computed in f64, stored as f32."""
    flat = [f32(0.1 * k - 0.5) for k in range(BATCH * D_IN)]
    return [flat[r * D_IN : (r + 1) * D_IN] for r in range(BATCH)]


def weights() -> dict[str, list[Any]]:
    """PyTorch-layout parameters ([out, in] for weights), each value rounded to f32."""
    return {
        "fc1.weight": [[f32(((4 * i + j) % 7 - 3) * 0.1) for j in range(D_IN)] for i in range(D_HIDDEN)],
        "fc1.bias": [f32(0.05 * (i - 4)) for i in range(D_HIDDEN)],
        "fc2.weight": [[f32(((8 * i + j) % 5 - 2) * 0.1) for j in range(D_HIDDEN)] for i in range(D_OUT)],
        "fc2.bias": [f32(0.1 * (i - 1)) for i in range(D_OUT)],
    }


def param_count() -> int:
    return D_HIDDEN * D_IN + D_HIDDEN + D_OUT * D_HIDDEN + D_OUT
