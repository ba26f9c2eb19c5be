"""Load an OpenVINO IR (.xml + .bin) with OpenVINO's CPU plugin in this fresh process and run its
forwards.

usage: python -m deploytui.families.openvino.openvino_runner PATH.xml --inputs IN --outputs OUT [--repeat K]
       [--warmup W] [--threads T]
(the runner protocol; reading and compiling the model for the CPU is the load stage). The CPU
plugin is asked for f32 inference precision (it would pick bf16 on a CPU that has it) and
`--threads` inference threads (default 1, like every runner here); the compiled model's own
count is reported. The export names the IR's inputs as the inputs file does and its
outputs after the model's outputs: inputs are fed by name, outputs written under the IR's names
(read from the IR, not the compiled model: compiling may drop a Convert before an output and
give that output the Convert's input's name as well, which `get_any_name` can return).
Imports no more of this project than runners.protocol and runners.named_io: it ships as
itself (with the two beside it).
"""

from __future__ import annotations

import sys
from typing import Any

from deploytui.runners.named_io import numpy_inputs, run_and_save
from deploytui.runners.protocol import Stages, fail, model_file, parse_args

USAGE = "openvino_runner PATH.xml --inputs IN --outputs OUT [--repeat K] [--warmup W] [--threads T]"
CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": "1"}


def _compiled(path: str, threads: int) -> tuple[Any, list[str]]:
    """The model compiled for the CPU, and its outputs' names as the IR holds them (in the
    compiled model's order, which is the IR's)."""
    import openvino as ov

    core = ov.Core()
    model = core.read_model(path)
    names = [p.get_any_name() for p in model.outputs]
    return core.compile_model(model, "CPU", {**CONFIG, "INFERENCE_NUM_THREADS": str(threads)}), names


def run_protocol(argv: list[str], stages: Stages) -> None:
    args = parse_args(argv, USAGE)
    path = model_file(args, USAGE)
    # OpenVINO's converter reports usage unless its telemetry package cannot be imported
    sys.modules.setdefault("openvino_telemetry", None)  # type: ignore[arg-type]
    import openvino  # noqa: F401  (timed as part of the import stage)

    stages.mark("import")
    inputs = numpy_inputs(args.inputs)
    before = set(sys.modules)
    try:
        compiled, outputs = _compiled(path, args.threads)
    except Exception as e:
        fail(f"could not load {path}: {type(e).__name__}: {e}")
    stages.mark("load")
    added = set(sys.modules) - before
    names = [p.get_any_name() for p in compiled.inputs]
    if sorted(names) != sorted(inputs):
        fail(f"the model's inputs are {names}, the inputs file holds {list(inputs)}")
    reported = compiled.get_property("INFERENCE_NUM_THREADS")
    stages.threads = {"requested": args.threads, "reported": reported if isinstance(reported, int) else None}
    request = compiled.create_infer_request()

    def forward(feed: dict[str, Any]) -> list[Any]:
        result = request.infer(feed)
        return [result[p].copy() for p in compiled.outputs]

    run_and_save(forward, inputs, outputs, args, stages, added)


def main(argv: list[str]) -> None:
    run_protocol(argv, Stages())


if __name__ == "__main__":
    main(sys.argv[1:])
