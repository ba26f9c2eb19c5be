"""torch_runner's counterpart in a Python bundle (`deploytui ship`): it ships as py/torch_bundle.py
beside py/protocol.py, the one module of this project it needs (`ship.pysource` rewrites that
line), so the bundle runs on torch, safetensors and numpy alone. For eager the model's factory is the one
py/model.json names, in the source copied beside it. What every Python runner of a torch-based form
shares lives here too: the inputs in call order (positional and keyword), the outputs named by
their pytree paths, a nested call rebuilt from the inputs file, the tied-weights load.

usage: python torch_bundle.py MODE MODEL_FILE --inputs IN --outputs OUT [--repeat K] [--warmup W]
       [--threads T]
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

from deploytui.runners.protocol import (
    CALL_KEY,
    ProtocolArgs,
    Stages,
    call_order,
    emit_stages,
    fail,
    parse_args,
    positional_index,
    timed_forwards,
)

HERE = os.path.dirname(os.path.abspath(__file__))  # py/ in a bundle: the model's source is here too

MODES = ("eager", "jit", "export", "aoti")


def load(mode: str, path: str) -> Any:
    import torch

    if mode == "eager":
        with open(os.path.join(HERE, "model.json")) as f:
            where = json.load(f)
        factory = getattr(importlib.import_module(where["module"]), where["factory"])
        return load_weights(factory(**where["kwargs"])[0].eval(), path)
    if mode == "jit":
        return torch.jit.load(path)
    if mode == "export":
        import_pytree_types(_archive_json(path))
        return torch.export.load(path).module()
    model = torch._inductor.aoti_load_package(path)
    import_pytree_types(" ".join(model.loader.get_call_spec()))
    return model


def _archive_json(path: str) -> str:
    import zipfile

    with zipfile.ZipFile(path) as z:
        return " ".join(z.read(n).decode(errors="replace") for n in z.namelist() if n.endswith(".json"))


def import_pytree_types(spec: str) -> None:
    """A program whose inputs or outputs are a library's pytree type (transformers' ModelOutput)
    is rebuilt only where that type is registered, which importing its module does: import the
    module of every type the program's serialized call spec names (as a user's script would)."""
    import re

    for module in set(re.findall(r'\\?"type\\?": \\?"([A-Za-z_][\w.]*)\.\w+\\?"', spec)):
        if module.split(".")[0] not in ("builtins", "collections", "torch"):
            try:
                importlib.import_module(module)
            except ImportError:
                pass  # the load names the type it cannot rebuild


def load_weights(model: Any, path: str) -> Any:
    """The eager form's safetensors into `model`, written by safetensors' save_model: a tied or
    shared parameter is stored once and stays tied after loading (load_model)."""
    from safetensors.torch import load_model

    missing, unexpected = load_model(model, path)
    if missing or unexpected:
        raise ValueError(
            f"the weights do not fit the model: missing {missing[:3]}, unexpected {unexpected[:3]}"
        )
    return model


def read_inputs(path: str) -> list[tuple[str, Any]]:
    """The inputs file's tensors in call order, by name, or the one error line. Cloned: a tensor
    read from the file may sit at any alignment, and the CPU kernels then take another path (a1's
    eager output differed from eager's by 1 ulp without the copy)."""
    from safetensors import safe_open

    try:
        with safe_open(path, framework="pt") as f:
            order = call_order(list(f.keys()), f.metadata())
            return [(name, f.get_tensor(name).clone()) for name in order]
    except Exception as e:  # a damaged or missing inputs file: one line
        fail(f"could not read inputs {path}: {type(e).__name__}: {e}")


def split_inputs(named: list[tuple[str, Any]]) -> tuple[list[Any], dict[str, Any]]:
    """(args, kwargs) of a call: input_N positionally, in order, every other name by keyword."""
    args = [t for n, t in named if positional_index(n) is not None]
    return args, {n: t for n, t in named if positional_index(n) is None}


def read_call(path: str) -> tuple[list[Any], dict[str, Any]]:
    """(args, kwargs) of the call the inputs file holds: rebuilt from its __metadata__ "call"
    (torch's treespec) when the model takes nested inputs, else by the names (split_inputs)."""
    from safetensors import safe_open
    from torch.utils import _pytree as pytree

    named = read_inputs(path)
    try:
        with safe_open(path, framework="pt") as f:
            spec = (f.metadata() or {}).get(CALL_KEY)
        if spec is None:
            return split_inputs(named)
        args, kwargs = pytree.tree_unflatten([t for _, t in named], pytree.treespec_loads(spec))
    except Exception as e:  # a call that does not fit its tensors: one line
        fail(f"could not rebuild the call from {path}: {type(e).__name__}: {e}")
    return list(args), dict(kwargs)


def output_name(path: tuple[Any, ...]) -> str:
    """A pytree key path as a name: dict keys and attributes by name, positions by number, joined
    by dots (`logits`, `0.1`); a bare tensor is `output`."""
    parts = []
    for k in path:
        for attr in ("key", "name", "idx"):
            if hasattr(k, attr):
                parts.append(str(getattr(k, attr)))
                break
        else:
            parts.append(str(k))
    return ".".join(parts) or "output"


def output_tensors(y: Any) -> dict[str, Any]:
    """A forward's result, any pytree torch knows (a tensor, tuples, lists, dicts, namedtuples,
    transformers' ModelOutput; None entries left out) as named tensors in its flattening order
    (torch.utils._pytree, as torch.export flattens it); TypeError for a leaf that is not a tensor."""
    import torch
    from torch.utils import _pytree as pytree

    try:
        leaves = [(output_name(p), x) for p, x in pytree.tree_flatten_with_path(y)[0]]
    except ValueError:  # a node type registered without key paths: positions only
        leaves = [(str(i), x) for i, x in enumerate(pytree.tree_leaves(y))]
    found: dict[str, Any] = {}
    for name, x in leaves:
        if x is None:  # an optional output not computed: no tensor to compare
            continue
        if not isinstance(x, torch.Tensor):
            where = "" if name == "output" else f" as {name!r}"
            raise TypeError(
                f"the model returned a {type(x).__name__}{where}; outputs must be tensors, "
                "in tuples, lists, dicts or ModelOutputs"
            )
        if name in found:
            raise TypeError(f"two outputs are named {name!r}")
        found[name] = x.detach().contiguous()
    if not found:
        raise TypeError("the model returned no tensor")
    return found


def flat_outputs(ys: Any) -> dict[str, Any]:
    """A runtime's flat list of outputs (ExecuTorch's) as output_0, output_1, ...: the protocol's
    positional names, matched against the reference by position (None entries left out, as the
    reference leaves them out)."""
    tensors = [y for y in ys if y is not None]
    return {f"output_{i}": y.detach().contiguous() for i, y in enumerate(tensors)}


def torch_threads(args: ProtocolArgs, stages: Stages) -> None:
    """--threads as torch's intra-op thread count; what torch then reports goes in the line."""
    import torch

    torch.set_num_threads(args.threads)
    stages.threads = {"requested": args.threads, "reported": torch.get_num_threads()}


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
            outputs = outputs_of(timed_forwards(forward, args.repeat, stages, args.warmup))
        save_file(outputs, args.outputs)
    except Exception as e:
        fail(f"forward failed: {type(e).__name__}: {e}")
    return len(outputs)


def samples_to_files(
    args: ProtocolArgs,
    forward_on: Callable[[str], Any],
    outputs_of: Callable[[Any], dict[str, Any]] = output_tensors,
) -> None:
    """--samples: one untimed forward on each listed inputs file (`forward_on(path)` reads it
    and runs), its outputs saved where the list says; a failure names the sample's file in the
    one line (a file it cannot read: read_inputs' line, which names it)."""
    import torch
    from safetensors.torch import save_file

    for inputs, outputs in args.samples:
        try:
            with torch.inference_mode():
                save_file(outputs_of(forward_on(inputs)), outputs)
        except Exception as e:
            fail(f"sample {inputs}: forward failed: {type(e).__name__}: {e}")


def call_with(model: Any) -> Callable[[str], Any]:
    """The model called on an inputs file's call (read_call: positional, keywords, nested)."""

    def call(path: str) -> Any:
        args, kwargs = read_call(path)
        return model(*args, **kwargs)

    return call


def main(argv: list[str]) -> None:
    stages = Stages()
    usage = f"load.py {{{'|'.join(MODES)}}} MODEL_FILE --inputs IN --outputs OUT [--repeat K]"
    args = parse_args(argv, usage)
    if len(args.positional) != 2 or args.positional[0] not in MODES:
        fail(f"usage: {usage}", 2)
    mode, path = args.positional
    torch_threads(args, stages)
    stages.mark("import")
    call, kwargs = read_call(args.inputs)
    try:
        model = load(mode, path)
    except Exception as e:
        fail(f"could not load {path} ({mode}): {type(e).__name__}: {e}")
    stages.mark("load")
    n = forwards_to_file(lambda: model(*call, **kwargs), args, stages)
    samples_to_files(args, call_with(model))
    emit_stages(stages, n)


if __name__ == "__main__":
    main(sys.argv[1:])
