"""Load one PyTorch form in this fresh process and run one forward.

usage: python -m deploytui.runners.torch_runner MODE PATH
MODE: eager (model source + safetensors), jit (TorchScript), export (torch.export .pt2),
aoti (AOTInductor .pt2), aoti-lean (AOTInductor .pt2 exported with link_libtorch=False).
"""

from __future__ import annotations

import sys
from typing import Any

from deploytui.runners.protocol import Stages, emit, fail

MODES = ("eager", "jit", "export", "aoti", "aoti-lean")


def load(mode: str, path: str) -> Any:
    import torch

    if mode == "eager":
        from safetensors.torch import load_file

        from deploytui.model import Mlp

        model = Mlp().eval()
        model.load_state_dict(load_file(path))
        return model
    if mode == "jit":
        return torch.jit.load(path)
    if mode == "export":
        return torch.export.load(path).module()
    if mode == "aoti-lean":
        # The package's .so does not link libtorch: its aoti_torch_* symbols must already be
        # global in the process, and Python loads torch's libraries without RTLD_GLOBAL.
        import ctypes
        import os

        ctypes.CDLL(
            os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"), mode=ctypes.RTLD_GLOBAL
        )
    return torch._inductor.aoti_load_package(path)


def main(argv: list[str]) -> None:
    stages = Stages()
    if len(argv) != 2 or argv[0] not in MODES:
        fail(f"usage: torch_runner {{{'|'.join(MODES)}}} PATH", 2)
    mode, path = argv
    import os

    if not os.path.isfile(path):
        fail(f"model file not found: {path}")
    import torch

    from deploytui import a1

    torch.set_num_threads(1)
    stages.mark("import")
    before = set(sys.modules)
    try:
        model = load(mode, path)
    except Exception as e:  # any loader failure is reported as one line
        fail(f"could not load {path} ({mode}): {type(e).__name__}: {e}")
    stages.mark("load")
    added = set(sys.modules) - before
    x = torch.tensor(a1.input_values(), dtype=torch.float32)
    try:
        with torch.inference_mode():
            y = model(x)
        if isinstance(y, (list, tuple)):
            y = y[0]
        logits = y.tolist()
    except Exception as e:
        fail(f"forward failed: {type(e).__name__}: {e}")
    stages.mark("forward")
    emit(logits, stages, added)


if __name__ == "__main__":
    main(sys.argv[1:])
