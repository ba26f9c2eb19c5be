"""The torch family's exports (each run by export_cmd in a process of its own, the model loaded):
the weights with the example and eager's outputs (the reference every form is diffed against),
TorchScript, torch.export, AOTInductor (the libtorch forms load the same packages), torchao's int8
and the dynamic-batch programs. Each takes the loaded model, the model's folder and its slug,
writes its files there and returns its facts (kept in the manifest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deploytui.families.common.torch_export import aoti_package, dynamic_program, program

# what the build's fork server imports once for these exports (deploytui.builder.forkserver)
PRELOAD = ("torch._inductor.compile_fx", "torchao.quantization", "safetensors.torch")

LEAN = {"aot_inductor.link_libtorch": False}  # the lean package: its runner links no libtorch


def export_model(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """Weights for the eager form; inputs and eager's outputs: the reference every form is diffed
    against. The weights are written with safetensors' save_model: a tied or shared parameter is
    stored once (its other names in the file's metadata) and load_model ties it again."""
    import torch
    from safetensors.torch import save_file, save_model

    from deploytui.judge.numerics import OUTPUTS_KEY
    from deploytui.models.load import output_tensors

    save_model(m.module, str(out / f"{stem}.safetensors"))
    save_file(m.inputs, str(out / "inputs.safetensors"), metadata=m.inputs_metadata())
    with torch.inference_mode():
        y = m.module(*m.args, **m.kwargs)
    outputs = output_tensors(y)
    save_file(outputs, str(out / "reference.safetensors"), metadata={OUTPUTS_KEY: json.dumps(list(outputs))})
    info = m.describe()
    info["outputs"] = [
        {
            "name": name,
            "dtype": str(t.dtype).removeprefix("torch."),
            "shape": list(t.shape),
            # NaN or infinities on the example input: every form is judged against them
            "nonfinite": int((~torch.isfinite(t)).sum()) if t.is_floating_point() else 0,
        }
        for name, t in outputs.items()
    ]
    info["unique_param_bytes"] = m.unique_param_bytes()
    (out / "model.json").write_text(json.dumps(info, indent=1) + "\n")
    return {"params": info["params"], "unique_param_bytes": info["unique_param_bytes"]}


def export_script(m: Any, out: Path, stem: str) -> dict[str, Any]:
    import torch

    torch.jit.script(m.module).save(str(out / f"{stem}_script.pt"))
    return {}


def export_trace(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """torch.jit.trace with keyword inputs given by the names forward binds them to (trace takes
    positional or keyword examples, not both); strict=False so a dict or ModelOutput comes back
    as a Dict[str, Tensor] with its keys."""
    import inspect

    import torch

    if not m.kwargs:
        traced = torch.jit.trace(m.module, m.args, strict=False)
    else:
        try:
            bound = inspect.signature(m.module.forward).bind(*m.args, **m.kwargs)
        except TypeError as e:
            raise TypeError(f"positional only: forward does not take these inputs by name ({e})") from None
        named = dict(bound.arguments)  # a value may be nested (a dict, a list): trace takes it
        gathered = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        if any(bound.signature.parameters[n].kind in gathered for n in named):
            raise TypeError(
                "positional only: forward gathers its inputs in *args/**kwargs, trace cannot name them"
            )
        traced = torch.jit.trace(m.module, example_kwarg_inputs=named, strict=False)
    traced.save(str(out / f"{stem}_trace.pt"))
    return {}


def export_torch_export(m: Any, out: Path, stem: str) -> dict[str, Any]:
    import torch

    ep = program(m)
    (out / f"{stem}_export_graph.py").write_text(ep.graph_module.code)
    torch.export.save(ep, str(out / f"{stem}_export.pt2"))
    return {}


def export_aoti(m: Any, out: Path, stem: str) -> dict[str, Any]:
    return aoti_package(program(m), out / f"{stem}_aoti.pt2", None)


def export_aoti_lean(m: Any, out: Path, stem: str) -> dict[str, Any]:
    return aoti_package(program(m), out / f"{stem}_aoti_lean.pt2", LEAN)


def torchao_int8(m: Any) -> tuple[Any, dict[str, Any]]:
    """A copy of the loaded model with torchao's dynamic int8 (`quantize_` with
    `Int8DynamicActivationInt8WeightConfig`: int8 weights, activations quantised per token at run
    time) on its nn.Linear layers (torchao's default filter: convolutions stay fp32); ValueError
    when there is none. The copy is what AOTInductor then compiles."""
    import copy
    import dataclasses
    from importlib.metadata import version

    import torch
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig, quantize_

    module = copy.deepcopy(m.module)
    linears = sum(isinstance(x, torch.nn.Linear) for x in module.modules())
    if not linears:
        raise ValueError("torchao int8 quantises nn.Linear layers and the model has none")
    quantize_(module, Int8DynamicActivationInt8WeightConfig())
    facts = {
        "torchao": version("torchao"),
        "config": "Int8DynamicActivationInt8WeightConfig",
        "linears": linears,
    }
    return dataclasses.replace(m, module=module), facts


def export_aoti_int8(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """torchao's dynamic int8 of the model's Linear layers, then AOTInductor like export_aoti
    (quantised models that AOTInductor refuses are known upstream: pytorch/ao#2690)."""
    quantized, facts = torchao_int8(m)
    return {**facts, **aoti_package(program(quantized), out / f"{stem}_aoti_int8.pt2", None)}


def export_dyn_torch_export(m: Any, out: Path, stem: str) -> dict[str, Any]:
    import torch

    def save(ep: Any) -> None:
        torch.export.save(ep, str(out / f"{stem}_export_dyn.pt2"))

    return dynamic_program(m, save)


def export_dyn_aoti(m: Any, out: Path, stem: str) -> dict[str, Any]:
    return dynamic_program(m, lambda ep: aoti_package(ep, out / f"{stem}_aoti_dyn.pt2", None))


def export_dyn_aoti_lean(m: Any, out: Path, stem: str) -> dict[str, Any]:
    return dynamic_program(m, lambda ep: aoti_package(ep, out / f"{stem}_aoti_lean_dyn.pt2", LEAN))
