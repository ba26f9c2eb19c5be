"""Load this bundle's .onnx with ONNX Runtime (CPU, one thread) and run its forwards (a
standalone script: onnxruntime, numpy, safetensors; the runner protocol of protocol.py beside it).

usage: python load.py MODEL_FILE --inputs IN --outputs OUT [--repeat K]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "py"))

from protocol import Stages, emit_stages, fail, parse_args, timed_forwards  # type: ignore[import-not-found]  # noqa: E402


def main(argv: list[str]) -> None:
    stages = Stages()
    usage = "load.py MODEL_FILE --inputs IN --outputs OUT [--repeat K]"
    args = parse_args(argv, usage)
    if len(args.positional) != 1:
        fail(f"usage: {usage}", 2)
    path = args.positional[0]
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime as ort
    from safetensors.numpy import load_file, save_file

    stages.mark("import")
    try:
        inputs = [a for _, a in sorted((int(k[6:]), a) for k, a in load_file(args.inputs).items())]
    except Exception as e:
        fail(f"could not read inputs {args.inputs}: {type(e).__name__}: {e}")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    try:
        session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:
        fail(f"could not load {path}: {type(e).__name__}: {e}")
    stages.mark("load")
    feed = dict(zip([i.name for i in session.get_inputs()], inputs, strict=True))
    try:
        ys = timed_forwards(lambda: session.run(None, feed), args.repeat, stages)
        save_file({f"output_{i}": y for i, y in enumerate(ys)}, args.outputs)
    except Exception as e:
        fail(f"forward failed: {type(e).__name__}: {e}")
    emit_stages(stages, len(ys))


if __name__ == "__main__":
    main(sys.argv[1:])
