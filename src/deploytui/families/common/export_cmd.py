"""One PyTorch export of one model, in its own process.

usage: python -m deploytui.families.common.export_cmd WHAT OUT_DIR [--model REF]

WHAT is one of EXPORTS. Files are named after the model's slug (`a1.onnx`, `convnet_aoti.pt2`).
`model` writes what every form is compared against: the weights, the example inputs
(`inputs.safetensors`, named and in call order), eager's outputs (`reference.safetensors`, named
by their pytree paths) and `model.json`. Every export passes the model's args and kwargs the way
its exporter takes them. Prints one JSON object on stdout (the model's own prints go to stderr):
the export's wall time, the Python warnings it raised (the TorchScript deprecations, for
instance) and tool versions. An exporter that refuses
the model prints its traceback (the step's full log) and then one line
`error: <Type>: <the exporter's own first line>`, and exits 1.
"""

from __future__ import annotations

import json
import re
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

from deploytui.families.common import variant_exports
from deploytui.models import DEFAULT, ModelRefError, parse
from deploytui.runners.protocol import own_stdout


def export_model(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """Weights for the eager form; inputs and eager's outputs: the reference every form is diffed
    against. The weights are written with safetensors' save_model: a tied or shared parameter is
    stored once (its other names in the file's metadata) and load_model ties it again."""
    import torch
    from safetensors.torch import save_file, save_model

    from deploytui.models.load import output_tensors
    from deploytui.numerics import OUTPUTS_KEY
    from deploytui.runners.protocol import INPUTS_KEY

    save_model(m.module, str(out / f"{stem}.safetensors"))
    order = {INPUTS_KEY: ",".join(m.inputs)}
    save_file(m.inputs, str(out / "inputs.safetensors"), metadata=order)
    with torch.inference_mode():
        y = m.module(*m.args, **m.kwargs)
    outputs = output_tensors(y)
    save_file(outputs, str(out / "reference.safetensors"), metadata={OUTPUTS_KEY: json.dumps(list(outputs))})
    info = m.describe()
    info["outputs"] = [
        {"name": name, "dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape)}
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
        named = dict(bound.arguments)
        if not all(isinstance(v, torch.Tensor) for v in named.values()):
            raise TypeError(
                "positional only: forward gathers its inputs in *args/**kwargs, trace cannot name them"
            )
        traced = torch.jit.trace(m.module, example_kwarg_inputs=named, strict=False)
    traced.save(str(out / f"{stem}_trace.pt"))
    return {}


def _export(m: Any) -> Any:
    """torch.export of the model on its example args and kwargs; the program must take its inputs
    flat in the inputs file's order (args, then kwargs as given), which the runtimes that take a
    flat list (AOTInductor, ExecuTorch) feed."""
    import torch
    from torch.utils import _pytree as pytree

    ep = torch.export.export(m.module, m.args, m.kwargs)
    expected = pytree.tree_flatten((m.args, m.kwargs))[1]
    if ep.call_spec.in_spec != expected:
        raise ValueError(f"torch.export flattened the inputs as {ep.call_spec.in_spec}, not {expected}")
    return ep


def export_torch_export(m: Any, out: Path, stem: str) -> dict[str, Any]:
    import torch

    ep = _export(m)
    (out / f"{stem}_export_graph.py").write_text(ep.graph_module.code)
    torch.export.save(ep, str(out / f"{stem}_export.pt2"))
    return {}


def _aoti(m: Any, out: Path, name: str, inductor_configs: dict[str, Any] | None) -> dict[str, Any]:
    import torch

    torch._inductor.aoti_compile_and_package(
        _export(m), package_path=str(out / name), inductor_configs=inductor_configs
    )
    return {"inductor_configs": inductor_configs or {}}


def export_aoti(m: Any, out: Path, stem: str) -> dict[str, Any]:
    return _aoti(m, out, f"{stem}_aoti.pt2", None)


def export_aoti_lean(m: Any, out: Path, stem: str) -> dict[str, Any]:
    return _aoti(m, out, f"{stem}_aoti_lean.pt2", {"aot_inductor.link_libtorch": False})


def export_onnx(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """torch.onnx.export (dynamo) on args and kwargs; the graph's inputs are named as the inputs
    file names them, its outputs after the model's outputs (the reference's names)."""
    import onnx
    import torch

    from deploytui.models.load import output_tensors

    with torch.inference_mode():
        names = list(output_tensors(m.module(*m.args, **m.kwargs)))
    torch.onnx.export(
        m.module,
        m.args,
        str(out / f"{stem}.onnx"),
        kwargs=m.kwargs,
        input_names=list(m.inputs),
        output_names=names,
    )
    model = onnx.load(str(out / f"{stem}.onnx"), load_external_data=False)
    got_in = [i.name for i in model.graph.input]
    if got_in != list(m.inputs) or [o.name for o in model.graph.output] != names:
        raise ValueError(
            f"the ONNX graph takes {got_in} and returns {[o.name for o in model.graph.output]}, "
            f"not {list(m.inputs)} and {names}"
        )
    return {
        "opset": [[o.domain or "ai.onnx", o.version] for o in model.opset_import],
        "nodes": [n.op_type for n in model.graph.node],
        "external_data": (out / f"{stem}.onnx.data").exists(),
        "onnx": onnx.__version__,
    }


def export_executorch(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """torch.export, then ExecuTorch's edge dialect lowered to XNNPACK where it can be, to a .pte;
    ExecuTorch's own delegation report (which operators XNNPACK took) goes beside it as JSON."""
    from deploytui.families.executorch import pte

    return pte.lower(_export(m), out, stem)


def export_aoti_int8(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """torchao's dynamic int8 of the model's Linear layers, then AOTInductor like export_aoti
    (quantised models that AOTInductor refuses are known upstream: pytorch/ao#2690)."""
    quantized, facts = variant_exports.torchao_int8(m)
    return {**facts, **_aoti(quantized, out, f"{stem}_aoti_int8.pt2", None)}


def export_executorch_int8(m: Any, out: Path, stem: str) -> dict[str, Any]:
    return variant_exports.export_executorch_int8(m, out, stem, _export(m))


MAX_BATCH = 64  # the dynamic exports' batch dimension: 1 to this (ExecuTorch plans memory for it)


def _batched(m: Any, batch: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The example's args and kwargs with every tensor of rank >= 1 made of its first item
    repeated `batch` times along dim 0 (what `bench --batch` feeds)."""
    import torch
    from torch.utils import _pytree as pytree

    def rows(x: Any) -> Any:
        if isinstance(x, torch.Tensor) and x.dim() >= 1:
            return x[:1].repeat(batch, *([1] * (x.dim() - 1)))
        return x

    args, kwargs = pytree.tree_map(rows, (tuple(m.args), dict(m.kwargs)))
    return args, kwargs


def _dynamic_shapes(m: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """dim 0 of every tensor input of rank >= 1 as one `Dim("batch", 1..MAX_BATCH)`, by the
    names forward binds the inputs to (a tuple for positional-only models)."""
    import inspect

    import torch
    from torch.utils import _pytree as pytree

    batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)

    def spec(x: Any) -> Any:
        return {0: batch} if isinstance(x, torch.Tensor) and x.dim() >= 1 else None

    if not kwargs:
        return tuple(pytree.tree_map(spec, a) for a in args)
    bound = inspect.signature(m.module.forward).bind(*args, **kwargs)
    return {name: pytree.tree_map(spec, v) for name, v in bound.arguments.items()}


def _export_dynamic(m: Any) -> Any:
    """torch.export with a dynamic batch dimension (traced at batch 2: a size of 1 would be
    specialised); a model that fixes its batch (a reshape to a constant) fails here, in the
    exporter's own words. Called inside `_dynamic_tracing`."""
    import torch

    args, kwargs = _batched(m, 2)
    return torch.export.export(m.module, args, kwargs, dynamic_shapes=_dynamic_shapes(m, args, kwargs))


def _tracing(oblivious: bool) -> Any:
    """What keeps the batch range 1..MAX_BATCH through the exporter and the compilers that trace
    the program again (AOTInductor, ExecuTorch's edge lowering), each measured on convnet:
    - mkldnn and nnpack off while tracing: the fake convolution asks ATen which CPU kernel it
      would pick, and mkldnn's choice tests `batch >= 16`, a guard that narrowed the range to
      2..15 (AOTInductor's `expected to be <= 15`, ExecuTorch's memory planned for 15 items);
      the programs call aten.convolution as before, the runtime picks its kernel at run time;
    - `backed_size_oblivious` (torch.fx.experimental._config): a backed size ranges over
      [0, inf] instead of [2, inf] (0/1 specialisation), so AOTInductor's input check accepts 1.
      Experimental in torch 2.15, hence the retry without it (`_dynamic_program`)."""
    import contextlib

    import torch
    from torch.fx.experimental import _config as fx_config

    stack = contextlib.ExitStack()
    stack.enter_context(torch.backends.mkldnn.flags(enabled=False))
    stack.enter_context(torch.backends.nnpack.flags(enabled=False))
    stack.enter_context(fx_config.patch(backed_size_oblivious=oblivious))
    return stack


def _dynamic_program(m: Any, make: Any) -> dict[str, Any]:
    """`make(exported program)` on the dynamic-batch export, traced size-obliviously; where that
    fails (an experimental option), once more without it (batch 1 is then refused in the
    runtime's words). The facts say which, and why."""
    facts: dict[str, Any] = {"max_batch": MAX_BATCH}
    try:
        with _tracing(oblivious=True):
            facts.update(make(_export_dynamic(m)) or {})
        facts["size_oblivious"] = True
        return facts
    except Exception as e:
        why = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300]
        print(f"size-oblivious tracing failed, once more without it: {why}", file=sys.stderr, flush=True)
    with _tracing(oblivious=False):
        facts.update(make(_export_dynamic(m)) or {})
    facts.update(size_oblivious=False, size_oblivious_failed=why)
    return facts


def export_dyn_torch_export(m: Any, out: Path, stem: str) -> dict[str, Any]:
    import torch

    def save(ep: Any) -> None:
        torch.export.save(ep, str(out / f"{stem}_export_dyn.pt2"))

    return _dynamic_program(m, save)


def _dyn_aoti(m: Any, path: Path, inductor_configs: dict[str, Any] | None) -> dict[str, Any]:
    import torch

    def compile_package(ep: Any) -> None:
        torch._inductor.aoti_compile_and_package(
            ep, package_path=str(path), inductor_configs=inductor_configs
        )

    return {**_dynamic_program(m, compile_package), "inductor_configs": inductor_configs or {}}


def export_dyn_aoti(m: Any, out: Path, stem: str) -> dict[str, Any]:
    return _dyn_aoti(m, out / f"{stem}_aoti_dyn.pt2", None)


def export_dyn_aoti_lean(m: Any, out: Path, stem: str) -> dict[str, Any]:
    return _dyn_aoti(m, out / f"{stem}_aoti_lean_dyn.pt2", {"aot_inductor.link_libtorch": False})


def export_dyn_onnx(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """torch.onnx.export (dynamo) with the batch dimension dynamic: the graph's dim 0 is named."""
    import torch

    from deploytui.models.load import output_tensors

    with torch.inference_mode():
        names = list(output_tensors(m.module(*m.args, **m.kwargs)))
    args, kwargs = _batched(m, 2)
    with _tracing(oblivious=False):
        torch.onnx.export(
            m.module,
            args,
            str(out / f"{stem}_dyn.onnx"),
            kwargs=kwargs,
            input_names=list(m.inputs),
            output_names=names,
            dynamic_shapes=_dynamic_shapes(m, args, kwargs),
        )
    return {"max_batch": MAX_BATCH}


def export_dyn_executorch(m: Any, out: Path, stem: str) -> dict[str, Any]:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    def lower(ep: Any) -> dict[str, Any]:
        program = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
        (out / f"{stem}_dyn.pte").write_bytes(program.buffer)
        return {"pte_bytes": len(program.buffer)}

    return _dynamic_program(m, lower)


EXPORTS = {
    "model": export_model,
    "script": export_script,
    "trace": export_trace,
    "torch-export": export_torch_export,
    "aoti": export_aoti,
    "aoti-lean": export_aoti_lean,
    "onnx": export_onnx,
    "executorch": export_executorch,
    "dyn-torch-export": export_dyn_torch_export,
    "dyn-aoti": export_dyn_aoti,
    "dyn-onnx": export_dyn_onnx,
    "dyn-executorch": export_dyn_executorch,
    "openvino": variant_exports.export_openvino,
    "samples": variant_exports.export_samples,
    "onnx-int8": variant_exports.export_onnx_int8,
    "executorch-int8": export_executorch_int8,
    "openvino-int8": variant_exports.export_openvino_int8,
    "aoti-int8": export_aoti_int8,
    "dyn-aoti-lean": export_dyn_aoti_lean,
}


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _first_line(e: BaseException) -> str:
    text = ANSI.sub("", str(e))
    return f"{type(e).__name__}: " + next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def decisive(e: BaseException) -> str:
    """The exporter's own words: the root cause's type and first line (torch.onnx wraps
    torch.export's error, for instance), after the outer type when that differs."""
    root, seen = e, {id(e)}
    while (nxt := root.__cause__ or root.__context__) is not None and id(nxt) not in seen:
        root = nxt
        seen.add(id(root))
    line = _first_line(root)
    if root is not e and type(root) is not type(e):
        line = f"{type(e).__name__}: {line}"
    return line[:400]


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr, flush=True)
    return 1


def main(argv: list[str]) -> int:
    args = list(argv)
    ref_text = DEFAULT
    if "--model" in args:
        i = args.index("--model")
        ref_text = args[i + 1] if i + 1 < len(args) else ""
        del args[i : i + 2]
    if len(args) != 2 or args[0] not in EXPORTS:
        return fail(f"usage: torch_cmd {{{'|'.join(EXPORTS)}}} OUT_DIR [--model REF]")
    what, out = args[0], Path(args[1])
    out.mkdir(parents=True, exist_ok=True)
    own = own_stdout()  # the model's code may print: our one line stays alone on stdout
    t0 = time.perf_counter()
    import torch

    from deploytui.models.load import ModelError, load

    t_import = time.perf_counter() - t0
    try:
        ref = parse(ref_text)
        m = load(ref)
    except (ModelRefError, ModelError) as e:
        return fail(str(e))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        t1 = time.perf_counter()
        try:
            facts = EXPORTS[what](m, out, ref.slug)
        except Exception as e:  # the exporter refused the model: its traceback is the log
            traceback.print_exc(file=sys.stderr)
            return fail(decisive(e))
        export_s = time.perf_counter() - t1
    seen: list[str] = []
    for w in caught:
        line = f"{w.category.__name__}: {w.message}"
        if line not in seen:
            seen.append(line)
        print(f"warning: {line}", file=sys.stderr)
    facts.update(
        torch=torch.__version__, import_s=round(t_import, 3), export_s=round(export_s, 3), warnings=seen
    )
    print(json.dumps(facts), file=own, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
