"""torch_runner's counterpart in a Python bundle (`deploytui ship`): it ships as py/torch_bundle.py
beside py/protocol.py, the one module of this project it needs (`ship.pysource` rewrites that
line), so the bundle runs on torch, safetensors and numpy alone. For eager the model's factory is the one
py/model.json names, in the source copied beside it.

usage: python torch_bundle.py MODE MODEL_FILE --inputs IN --outputs OUT [--repeat K]
MODE: eager (py/model.json's factory + the safetensors weights), jit (TorchScript), export
(torch.export .pt2), aoti (AOTInductor .pt2).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from deploytui.runners.protocol import ProtocolArgs, Stages, emit_stages, fail, parse_args, timed_forwards

HERE = os.path.dirname(os.path.abspath(__file__))  # py/ in a bundle: the model's source is here too

MODES = ("eager", "jit", "export", "aoti")


def load(mode: str, path: str) -> Any:
    import torch

    if mode == "eager":
        from safetensors.torch import load_file

        with open(os.path.join(HERE, "model.json")) as f:
            where = json.load(f)
        factory = getattr(importlib.import_module(where["module"]), where["factory"])
        model = factory(**where["kwargs"])[0].eval()
        model.load_state_dict(load_file(path))
        return model
    if mode == "jit":
        return torch.jit.load(path)
    if mode == "export":
        return torch.export.load(path).module()
    return torch._inductor.aoti_load_package(path)


def torch_inputs(path: str) -> list[Any]:
    """input_0, input_1, ... of an inputs file as torch tensors, or the one error line. Cloned: a
    tensor read from the file may sit at any alignment, and the CPU kernels then take another
    path (a1's eager output differed from eager's by 1 ulp without the copy)."""
    from safetensors.torch import load_file

    try:
        return [t.clone() for _, t in sorted((int(k[6:]), t) for k, t in load_file(path).items())]
    except Exception as e:  # a damaged or missing inputs file: one line
        fail(f"could not read inputs {path}: {type(e).__name__}: {e}")


def output_tensors(y: Any) -> dict[str, Any]:
    """A forward's result (a tensor, or nested tuples/lists of them) as output_0, output_1, ...;
    TypeError for anything else."""
    import torch

    found: list[Any] = []

    def walk(x: Any) -> None:
        if isinstance(x, torch.Tensor):
            found.append(x.detach().contiguous())
        elif isinstance(x, (tuple, list)):
            for item in x:
                walk(item)
        else:
            raise TypeError(f"the model returned a {type(x).__name__}; outputs must be tensors or tuples")

    walk(y)
    return {f"output_{i}": t for i, t in enumerate(found)}


def forwards_to_file(
    forward: Callable[[], Any],
    args: ProtocolArgs,
    stages: Stages,
    outputs_of: Callable[[Any], dict[str, Any]] = output_tensors,
) -> int:
    """The timed forwards in inference mode, the last one's outputs saved to --outputs; how many
    outputs. Any failure is the one `forward failed:` line."""
    import torch
    from safetensors.torch import save_file

    try:
        with torch.inference_mode():
            outputs = outputs_of(timed_forwards(forward, args.repeat, stages))
        save_file(outputs, args.outputs)
    except Exception as e:
        fail(f"forward failed: {type(e).__name__}: {e}")
    return len(outputs)


def main(argv: list[str]) -> None:
    stages = Stages()
    usage = f"load.py {{{'|'.join(MODES)}}} MODEL_FILE --inputs IN --outputs OUT [--repeat K]"
    args = parse_args(argv, usage)
    if len(args.positional) != 2 or args.positional[0] not in MODES:
        fail(f"usage: {usage}", 2)
    mode, path = args.positional
    import torch

    torch.set_num_threads(1)
    stages.mark("import")
    inputs = torch_inputs(args.inputs)
    try:
        model = load(mode, path)
    except Exception as e:
        fail(f"could not load {path} ({mode}): {type(e).__name__}: {e}")
    stages.mark("load")
    emit_stages(stages, forwards_to_file(lambda: model(*inputs), args, stages))


if __name__ == "__main__":
    main(sys.argv[1:])
