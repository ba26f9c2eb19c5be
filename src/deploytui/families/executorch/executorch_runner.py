"""Load a .pte with ExecuTorch's Python runtime in this fresh process and run its forwards.

usage: python -m deploytui.families.executorch.executorch_runner PATH --inputs IN --outputs OUT [--repeat K]
       [--warmup W] [--threads T]
(the runner protocol; --threads sizes ExecuTorch's threadpool, which XNNPACK runs on, and
torch's). `import` is executorch.runtime (and the torch it hands tensors through),
`load` reads the program and loads its `forward` method (XNNPACK delegates initialised there).
A program takes its inputs as one flat list (torch.export's flattening of args, then kwargs: the
inputs file's call order) and returns its outputs flat (output_0, output_1, ...).
"""

from __future__ import annotations

import sys
from typing import Any

from deploytui.runners.protocol import Stages, emit_stages, fail, model_file, parse_args
from deploytui.runners.torch_bundle import (
    flat_outputs,
    forwards_to_file,
    read_inputs,
    samples_to_files,
    torch_threads,
)

USAGE = "executorch_runner PATH --inputs IN --outputs OUT [--repeat K] [--warmup W] [--threads T]"


def _method(path: str) -> Any:
    from executorch.runtime import Runtime

    return Runtime.get().load_program(path).load_method("forward")


def run_protocol(argv: list[str], stages: Stages) -> None:
    args = parse_args(argv, USAGE)
    path = model_file(args, USAGE)
    from executorch import runtime  # noqa: F401  (timed as part of the import stage)
    from executorch.extension.pybindings import portable_lib

    torch_threads(args, stages)
    portable_lib._unsafe_reset_threadpool(args.threads)  # the pool XNNPACK's delegate runs on
    stages.threads["reported"] = portable_lib._threadpool_get_thread_count()
    stages.mark("import")
    inputs = [t for _, t in read_inputs(args.inputs)]  # the flat call order the export saw
    before = set(sys.modules)
    try:
        method = _method(path)
    except Exception as e:
        fail(f"could not load {path}: {type(e).__name__}: {e}")
    stages.mark("load")
    added = set(sys.modules) - before
    n = forwards_to_file(lambda: method.execute(inputs), args, stages, flat_outputs)
    samples_to_files(args, lambda path: method.execute([t for _, t in read_inputs(path)]), flat_outputs)
    emit_stages(stages, n, added)


def main(argv: list[str]) -> None:
    run_protocol(argv, Stages())


if __name__ == "__main__":
    main(sys.argv[1:])
