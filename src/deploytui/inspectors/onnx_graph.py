"""The ONNX graph (opset, inputs, initializers, nodes), read with the onnx package in a subprocess.

The app never imports onnx itself: `summary(path)` runs `onnx_graph_read` as a script, so a heavy
import (or a parser crash on a damaged file) stays out of the UI process.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from deploytui.core import procs
from deploytui.inspectors import InspectError


def summary(path: Path, timeout_s: float = 60.0) -> dict[str, Any]:
    if not path.exists():
        raise InspectError(f"{path.name} is missing ({path})")
    res = procs.run(
        [sys.executable, "-m", "deploytui.inspectors.onnx_graph_read", str(path)], timeout_s=timeout_s
    )
    if res.killed:
        raise InspectError(f"{path.name}: reading the graph took over {timeout_s:g} s")
    if not res.ok:
        why = ([ln for ln in res.stderr if ln.strip()] or [res.why])[-1]
        raise InspectError(f"{path.name} is not a readable ONNX model: {why[:300]}")
    try:
        graph: dict[str, Any] = json.loads(res.text)
        return graph
    except ValueError:
        raise InspectError(f"{path.name}: the graph reader printed no JSON") from None
