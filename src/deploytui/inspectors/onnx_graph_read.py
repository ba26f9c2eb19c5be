"""Reads an ONNX file with the onnx package and prints its graph as one JSON object.

Run only as a subprocess by `onnx_graph.summary`: `python -m deploytui.inspectors.onnx_graph_read FILE`.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _dims(value_info: Any) -> list[Any]:
    return [
        d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
        for d in value_info.type.tensor_type.shape.dim
    ]


def _read(path: str) -> dict[str, Any]:
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
        "nodes": [
            {
                "op": n.op_type,
                "name": n.name,
                "inputs": list(n.input),
                "outputs": list(n.output),
                "attributes": {a.name: str(helper.get_attribute_value(a)) for a in n.attribute},
            }
            for n in m.graph.node
        ],
    }


if __name__ == "__main__":
    try:
        print(json.dumps(_read(sys.argv[1])))
    except Exception as e:  # one line for the parent, whatever went wrong
        print(f"{type(e).__name__}: {e}".replace("\n", " ")[:400], file=sys.stderr)
        sys.exit(1)
