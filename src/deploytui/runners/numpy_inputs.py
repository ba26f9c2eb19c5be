"""The inputs file as numpy arrays by name, in call order, for the runners of runtimes fed by name
(ONNX Runtime, OpenVINO): a damaged or missing file fails with one line. Kept apart from
protocol.py, which the app reads through the defaults module: that one loads nothing heavy."""

from __future__ import annotations

from typing import Any

from deploytui.runners.protocol import call_order, fail


def numpy_inputs(path: str) -> dict[str, Any]:
    from safetensors import safe_open

    try:
        with safe_open(path, framework="np") as f:
            return {name: f.get_tensor(name) for name in call_order(list(f.keys()), f.metadata())}
    except Exception as e:  # a damaged or missing inputs file: one line
        fail(f"could not read inputs {path}: {type(e).__name__}: {e}")
