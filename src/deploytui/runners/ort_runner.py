"""Load an .onnx with ONNX Runtime (CPU, one thread) in this fresh process and run its forwards.

usage: python -m deploytui.runners.ort_runner PATH --inputs IN --outputs OUT [--repeat K]
(the runner protocol; session creation is the load stage).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from deploytui.runners.protocol import Stages, emit_stages, fail, parse_args, timed_forwards


def _session(path: str) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def run_protocol(argv: list[str], stages: Stages) -> None:
    args = parse_args(argv, "ort_runner PATH --inputs IN --outputs OUT [--repeat K]")
    if len(args.positional) != 1:
        fail("usage: ort_runner PATH --inputs IN --outputs OUT [--repeat K]", 2)
    path = args.positional[0]
    if not os.path.isfile(path):
        fail(f"model file not found: {path}")
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime  # noqa: F401  (timed as part of the import stage)
    from safetensors.numpy import load_file, save_file

    stages.mark("import")
    try:
        inputs = [a for _, a in sorted((int(k[6:]), a) for k, a in load_file(args.inputs).items())]
    except Exception as e:  # a damaged or missing inputs file: one line
        fail(f"could not read inputs {args.inputs}: {type(e).__name__}: {e}")
    before = set(sys.modules)
    try:
        session = _session(path)
    except Exception as e:
        fail(f"could not load {path}: {type(e).__name__}: {e}")
    stages.mark("load")
    added = set(sys.modules) - before
    names = [i.name for i in session.get_inputs()]
    if len(names) != len(inputs):
        fail(f"the model takes {len(names)} inputs, the inputs file holds {len(inputs)}")
    feed = dict(zip(names, inputs, strict=True))
    try:
        ys = timed_forwards(lambda: session.run(None, feed), args.repeat, stages)
        save_file({f"output_{i}": y for i, y in enumerate(ys)}, args.outputs)
    except Exception as e:
        fail(f"forward failed: {type(e).__name__}: {e}")
    emit_stages(stages, len(ys), added)


def main(argv: list[str]) -> None:
    run_protocol(argv, Stages())


if __name__ == "__main__":
    main(sys.argv[1:])
