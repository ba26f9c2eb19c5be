"""The ONNX graph (opset, inputs, initializers, nodes), read with the onnx package in a subprocess.

The app never imports onnx itself: `summary(path)` runs `onnx_graph_read` as a script, so a heavy
import (or a parser crash on a damaged file) stays out of the UI process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from deploytui.inspectors import InspectError


def summary(path: Path, timeout_s: float = 60.0) -> dict[str, Any]:
    if not path.exists():
        raise InspectError(f"{path.name} is missing ({path})")
    try:
        res = subprocess.run(
            [sys.executable, "-m", "deploytui.inspectors.onnx_graph_read", str(path)],
            check=False,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        raise InspectError(f"{path.name}: reading the graph took over {timeout_s:g} s") from None
    if res.returncode != 0:
        why = (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1]
        raise InspectError(f"{path.name} is not a readable ONNX model: {why[:300]}")
    try:
        graph: dict[str, Any] = json.loads(res.stdout)
        return graph
    except ValueError:
        raise InspectError(f"{path.name}: the graph reader printed no JSON") from None
