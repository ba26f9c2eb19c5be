"""Load this bundle's .onnx with ONNX Runtime (CPU, one thread) and run it once (a standalone
script: onnxruntime, numpy).

usage: python load.py MODEL_FILE   The input is input.json beside this script; prints one JSON
line {"logits": [[...]]}.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: load.py MODEL_FILE", file=sys.stderr)
        return 2
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import numpy as np
    import onnxruntime as ort

    with open(os.path.join(HERE, "input.json")) as f:
        x = np.array(json.load(f)["input"], dtype=np.float32)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    try:
        session = ort.InferenceSession(argv[0], so, providers=["CPUExecutionProvider"])
    except Exception as e:
        print(f"error: could not load {argv[0]}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    (y,) = session.run(None, {session.get_inputs()[0].name: x})
    print(json.dumps({"logits": y.tolist()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
