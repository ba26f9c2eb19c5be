"""Load an OpenVINO IR (.xml + .bin) with OpenVINO's CPU plugin in this fresh process and run its
forwards.

usage: python -m deploytui.families.openvino.openvino_runner PATH.xml --inputs IN --outputs OUT [--repeat K]
       [--warmup W] [--threads T]
(the runner protocol; reading and compiling the model for the CPU is the load stage). The CPU
plugin is asked for f32 inference precision (it would pick bf16 on a CPU that has it) and
`--threads` inference threads (default 1, like every runner here); the compiled model's own
count is reported. The export names the IR's inputs as the inputs file does and its
outputs after the model's outputs: inputs are fed and outputs written under the IR's names (read
from the IR, not the compiled model: compiling may drop a Convert beside an input or output and
give the port the Convert's other name as well, which `get_any_name` can return).
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


def _compiled(path: str, threads: int) -> tuple[Any, list[str], list[str]]:
    """The model compiled for the CPU, and its inputs' and outputs' names as the IR holds them (in
    the compiled model's order, which is the IR's)."""
    import openvino as ov

    core = ov.Core()
    model = core.read_model(path)
    names_in, names_out = ([p.get_any_name() for p in ports] for ports in (model.inputs, model.outputs))
    compiled = core.compile_model(model, "CPU", {**CONFIG, "INFERENCE_NUM_THREADS": str(threads)})
    return compiled, names_in, names_out


def _bf16_as_f32(values: Any) -> Any:
    """A bfloat16 output as float32 (exact). numpy has no bfloat16: OpenVINO hands its bits over
    as a float16 array, whose values are not the output's."""
    import numpy as np

    return (values.view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def run_protocol(argv: list[str], stages: Stages) -> None:
    args = parse_args(argv, USAGE)
    path = model_file(args, USAGE)
    # OpenVINO's converter reports usage unless its telemetry package cannot be imported
    sys.modules.setdefault("openvino_telemetry", None)  # type: ignore[arg-type]
    import openvino  # timed as part of the import stage

    stages.mark("import")
    inputs = numpy_inputs(args.inputs)
    before = set(sys.modules)
    try:
        compiled, names, outputs = _compiled(path, args.threads)
    except Exception as e:
        fail(f"could not load {path}: {type(e).__name__}: {e}")
    stages.mark("load")
    added = set(sys.modules) - before
    if sorted(names) != sorted(inputs):
        fail(f"the model's inputs are {names}, the inputs file holds {list(inputs)}")
    reported = compiled.get_property("INFERENCE_NUM_THREADS")
    stages.threads = {"requested": args.threads, "reported": reported if isinstance(reported, int) else None}
    request = compiled.create_infer_request()
    bf16 = [p.get_element_type() == openvino.Type.bf16 for p in compiled.outputs]

    def forward(feed: dict[str, Any]) -> list[Any]:
        result = request.infer(feed)
        return [
            _bf16_as_f32(result[p]) if b else result[p].copy()
            for p, b in zip(compiled.outputs, bf16, strict=True)
        ]

    run_and_save(forward, inputs, outputs, args, stages, added)


def main(argv: list[str]) -> None:
    run_protocol(argv, Stages())


if __name__ == "__main__":
    main(sys.argv[1:])
