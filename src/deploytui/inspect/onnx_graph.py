"""The ONNX graph (opset, inputs, initializers, nodes), read with the onnx package in a subprocess.

The app never imports onnx itself: `summary(path)` runs this module as a script, so a heavy
import (or a parser crash on a damaged file) stays out of the UI process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from deploytui.inspect import InspectError


def summary(path: Path, timeout_s: float = 60.0) -> dict:
    if not path.exists():
        raise InspectError(f"{path.name} is missing ({path})")
    try:
        res = subprocess.run([sys.executable, "-m", "deploytui.inspect.onnx_graph", str(path)],
                             capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise InspectError(f"{path.name}: reading the graph took over {timeout_s:g} s") from None
    if res.returncode != 0:
        why = (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1]
        raise InspectError(f"{path.name} is not a readable ONNX model: {why[:300]}")
    try:
        return json.loads(res.stdout)
    except ValueError:
        raise InspectError(f"{path.name}: the graph reader printed no JSON") from None


def _dims(value_info) -> list:
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
            for d in value_info.type.tensor_type.shape.dim]


def _read(path: str) -> dict:
    import onnx
    from onnx import helper

    m = onnx.load(path)
    return {
        "ir_version": m.ir_version,
        "producer": f"{m.producer_name} {m.producer_version}".strip(),
        "opset": [[o.domain or "ai.onnx", o.version] for o in m.opset_import],
        "inputs": [[i.name, _dims(i)] for i in m.graph.input],
        "outputs": [[o.name, _dims(o)] for o in m.graph.output],
        "initializers": [[t.name, list(t.dims)] for t in m.graph.initializer],
        "nodes": [{"op": n.op_type, "name": n.name, "inputs": list(n.input), "outputs": list(n.output),
                   "attributes": {a.name: str(helper.get_attribute_value(a)) for a in n.attribute}}
                  for n in m.graph.node],
    }


if __name__ == "__main__":
    try:
        print(json.dumps(_read(sys.argv[1])))
    except Exception as e:  # one line for the parent, whatever went wrong
        print(f"{type(e).__name__}: {e}".replace("\n", " ")[:400], file=sys.stderr)
        sys.exit(1)
