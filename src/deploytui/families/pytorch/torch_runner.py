"""Load one PyTorch form in this fresh process and run its forwards (the runner protocol).

usage: python -m deploytui.families.pytorch.torch_runner MODE PATH --inputs IN --outputs OUT [--repeat K]
       [--warmup W] [--threads T] [--model REF]
MODE: eager (the model's source, REF, + its safetensors weights), jit (TorchScript),
export (torch.export .pt2), aoti (AOTInductor .pt2), aoti-lean (AOTInductor .pt2 exported with
link_libtorch=False).
"""

from __future__ import annotations

import sys
from typing import Any

from deploytui.runners.protocol import Stages, emit_stages, fail, own_stdout, parse_args
from deploytui.runners.torch_bundle import (
    call_with,
    forwards_to_file,
    load_weights,
    read_call,
    samples_to_files,
    torch_threads,
)

MODES = ("eager", "jit", "export", "aoti", "aoti-lean")


def load(mode: str, path: str, model_ref: str | None = None) -> Any:
    import torch

    if mode == "eager":
        from deploytui.core.modelref import parse
        from deploytui.models.load import load as load_model

        return load_weights(load_model(parse(model_ref)).module, path)
    if mode == "aoti-lean":
        # The package's .so does not link libtorch: its aoti_torch_* symbols must already be
        # global in the process, and Python loads torch's libraries without RTLD_GLOBAL.
        import ctypes
        import os

        ctypes.CDLL(
            os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"), mode=ctypes.RTLD_GLOBAL
        )
        mode = "aoti"
    from deploytui.runners.torch_bundle import load as load_archive  # jit, export, aoti: one place

    return load_archive(mode, path)


def run_protocol(argv: list[str], stages: Stages) -> None:
    import os

    usage = f"torch_runner {{{'|'.join(MODES)}}} PATH --inputs IN --outputs OUT [--repeat K] [--model REF]"
    args = parse_args(argv, usage)
    if len(args.positional) != 2 or args.positional[0] not in MODES:
        fail(f"usage: {usage}", 2)
    mode, path = args.positional
    if mode == "eager" and args.model is None:
        fail("eager needs --model REF (the model's source builds the module the weights load into)", 2)
    if not os.path.isfile(path):
        fail(f"model file not found: {path}")
    torch_threads(args, stages)
    out = own_stdout()  # the model's own prints (eager runs its code) go to stderr
    stages.mark("import")
    call, kwargs = read_call(args.inputs)
    before = set(sys.modules)
    try:
        model = load(mode, path, args.model)
    except Exception as e:  # any loader failure is reported as one line
        fail(f"could not load {path} ({mode}): {type(e).__name__}: {e}")
    stages.mark("load")
    added = set(sys.modules) - before
    from deploytui.models.load import output_tensors  # a wrong return is the model's error

    n = forwards_to_file(lambda: model(*call, **kwargs), args, stages, output_tensors)
    samples_to_files(args, call_with(model), output_tensors)
    emit_stages(stages, n, added, out)


def main(argv: list[str]) -> None:
    run_protocol(argv, Stages())


if __name__ == "__main__":
    main(sys.argv[1:])
