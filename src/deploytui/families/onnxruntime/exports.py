"""The onnxruntime family's exports: torch.onnx's (dynamo) graph of the model, at its example
shapes and with a dynamic batch axis, and ONNX Runtime's dynamic int8 of it (tract and the
burn-onnx code generation read the same .onnx)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from deploytui.families.common.torch_export import (
    MAX_BATCH,
    batched,
    dynamic_shapes,
    reference_names,
    tracing,
)

# what the build's fork server imports once for these exports (deploytui.builder.forkserver); not
# onnxruntime's quantizer, whose import starts threads (a fork copies only the caller's)
PRELOAD = ("onnx", "onnxscript", "torch.onnx")


def onnx_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The args as torch.onnx.export must get them: it takes a trailing dict in args for the
    keywords when none are given (`_get_torch_export_args`), so a model whose last positional
    argument is a dict (`forward(batch)`) gets an empty dict after it, the keywords it has."""
    return (*args, {}) if not kwargs and args and isinstance(args[-1], dict) else args


def export_onnx(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """torch.onnx.export (dynamo) on args and kwargs; the graph's inputs are named as the inputs
    file names them, its outputs after the model's outputs (the reference's names)."""
    import onnx
    import torch

    names = reference_names(m)
    torch.onnx.export(
        m.module,
        onnx_args(m.args, m.kwargs),
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


def export_onnx_int8(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """ONNX Runtime's dynamic quantisation of the model's .onnx: weights to signed int8
    (QInt8), activations quantised at run time; Conv/MatMul/Gemm become ConvInteger/
    MatMulInteger (their `ops` below). No calibration. Weights in 7 bits (`reduce_range`): on an
    x86-64 CPU without VNNI (AVX2, AVX-512 without VNNI) ORT's u8×s8 kernels saturate their 16-bit
    sums with 8-bit weights — tinylm's logits fell to cosine 0.979 on an AVX2-only EPYC, 0.9999
    with 7 bits — and an artifact built here may run on such a target."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    source = out / f"{stem}.onnx"
    if not source.is_file():
        raise FileNotFoundError(f"{source.name} is missing: the export-onnx step has not run")
    target = out / f"{stem}_int8.onnx"
    quantize_dynamic(source, target, weight_type=QuantType.QInt8, reduce_range=True)
    q = onnx.load(str(target), load_external_data=False)
    ops = Counter(n.op_type for n in q.graph.node)
    integer = sum(
        c for op, c in ops.items() if "Integer" in op or op.startswith(("DynamicQuantize", "QLinear"))
    )
    if not integer:
        raise ValueError("quantize_dynamic left no integer operator in the graph: nothing was quantised")
    return {
        "weight_type": "QInt8",
        "reduce_range": True,
        "mode": "dynamic",
        "ops": dict(ops.most_common()),
        "integer_ops": integer,
    }


def export_dyn_onnx(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """torch.onnx.export (dynamo) with the batch dimension dynamic: the graph's dim 0 is named."""
    import torch

    names = reference_names(m)
    args, kwargs = batched(m, 2)
    with tracing(oblivious=False):
        torch.onnx.export(
            m.module,
            onnx_args(args, kwargs),
            str(out / f"{stem}_dyn.onnx"),
            kwargs=kwargs,
            input_names=list(m.inputs),
            output_names=names,
            dynamic_shapes=dynamic_shapes(m, args, kwargs),
        )
    return {"max_batch": MAX_BATCH}
