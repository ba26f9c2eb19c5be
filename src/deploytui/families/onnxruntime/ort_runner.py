"""Load an .onnx with ONNX Runtime (CPU; --threads intra-op threads, default 1, one inter-op) in
this fresh process and run its forwards.

usage: python -m deploytui.families.onnxruntime.ort_runner PATH --inputs IN --outputs OUT [--repeat K]
       [--warmup W] [--threads T]
(the runner protocol; session creation is the load stage). The inputs are fed by name to the
graph's inputs (the export names them as the inputs file does), the outputs written under the
graph's output names (the export names them after the model's outputs).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from deploytui.runners.named_io import numpy_inputs, run_and_save
from deploytui.runners.protocol import Stages, fail, model_file, parse_args


def _session(path: str, threads: int) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def run_protocol(argv: list[str], stages: Stages) -> None:
    usage = "ort_runner PATH --inputs IN --outputs OUT [--repeat K] [--warmup W] [--threads T]"
    args = parse_args(argv, usage)
    path = model_file(args, usage)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime  # noqa: F401  (timed as part of the import stage)

    stages.mark("import")
    inputs = numpy_inputs(args.inputs)
    before = set(sys.modules)
    try:
        session = _session(path, args.threads)
    except Exception as e:
        fail(f"could not load {path}: {type(e).__name__}: {e}")
    stages.mark("load")
    reported = session.get_session_options().intra_op_num_threads
    stages.threads = {"requested": args.threads, "reported": reported}
    added = set(sys.modules) - before
    names = [i.name for i in session.get_inputs()]
    if sorted(names) != sorted(inputs):
        fail(f"the model's inputs are {names}, the inputs file holds {list(inputs)}")
    outputs = [o.name for o in session.get_outputs()]
    run_and_save(lambda feed: session.run(None, feed), inputs, outputs, args, stages, added)


def main(argv: list[str]) -> None:
    run_protocol(argv, Stages())


if __name__ == "__main__":
    main(sys.argv[1:])
