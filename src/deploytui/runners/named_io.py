"""Inputs and outputs by name, as numpy arrays, for the runners of runtimes fed by name (ONNX
Runtime, OpenVINO): the inputs file read in call order (a damaged or missing file fails with one
line), and the timed forwards whose last outputs are written under the model's names. Kept apart
from protocol.py, which the app reads through the defaults module: that one loads nothing heavy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deploytui.runners.protocol import ProtocolArgs, Stages, call_order, emit_stages, fail, timed_forwards


def numpy_inputs(path: str) -> dict[str, Any]:
    from safetensors import safe_open

    try:
        with safe_open(path, framework="np") as f:
            return {name: f.get_tensor(name) for name in call_order(list(f.keys()), f.metadata())}
    except Exception as e:  # a damaged or missing inputs file: one line
        fail(f"could not read inputs {path}: {type(e).__name__}: {e}")


def run_and_save(
    forward_on: Callable[[dict[str, Any]], list[Any]],
    inputs: dict[str, Any],
    outputs: list[str],
    args: ProtocolArgs,
    stages: Stages,
    added: set[str],
) -> None:
    """The protocol's timed forwards on `inputs`, the last one's outputs saved as `outputs` names
    them; --samples' forwards, each on its file's inputs; then the protocol's line. A failing
    forward or write is one line."""
    from safetensors.numpy import save_file

    try:
        ys = timed_forwards(lambda: forward_on(inputs), args.repeat, stages, args.warmup)
        save_file(dict(zip(outputs, ys, strict=True)), args.outputs)
    except Exception as e:
        fail(f"forward failed: {type(e).__name__}: {e}")
    for sample, out in args.samples:
        named = numpy_inputs(sample)
        try:
            save_file(dict(zip(outputs, forward_on(named), strict=True)), out)
        except Exception as e:
            fail(f"sample {sample}: forward failed: {type(e).__name__}: {e}")
    emit_stages(stages, len(ys), added)
