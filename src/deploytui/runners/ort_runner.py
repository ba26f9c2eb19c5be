"""Load a1.onnx with ONNX Runtime (CPU, one thread) in this fresh process and run one forward.

usage: python -m deploytui.runners.ort_runner PATH
"""

from __future__ import annotations

import os
import sys

from deploytui.runners.protocol import Stages, emit, fail


def main(argv: list[str]) -> None:
    stages = Stages()
    if len(argv) != 1:
        fail("usage: ort_runner PATH", 2)
    path = argv[0]
    if not os.path.isfile(path):
        fail(f"model file not found: {path}")
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import numpy as np
    import onnxruntime as ort

    from deploytui import a1

    stages.mark("import")
    before = set(sys.modules)
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:
        fail(f"could not load {path}: {type(e).__name__}: {e}")
    stages.mark("load")
    added = set(sys.modules) - before
    x = np.array(a1.input_values(), dtype=np.float32)
    try:
        (y,) = session.run(None, {session.get_inputs()[0].name: x})
    except Exception as e:
        fail(f"forward failed: {type(e).__name__}: {e}")
    stages.mark("forward")
    emit(y.tolist(), stages, added)


if __name__ == "__main__":
    main(sys.argv[1:])
