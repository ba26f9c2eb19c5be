"""The exports of the precision axis and of OpenVINO, run by `torch_cmd` like the others (one
process each, the model loaded): the OpenVINO IR, the fixed-seed sample sets (accuracy and
calibration), and the int8 variants (ONNX Runtime dynamic int8, ExecuTorch XNNPACK int8).

Each function takes the loaded model, the model's folder and its slug, writes its files there
and returns its facts (kept in the manifest).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from deploytui.precision import CALIBRATION, SAMPLES

ACCURACY_DIR = "accuracy"  # accuracy/inputs_K.safetensors + accuracy/reference_K.safetensors
CALIBRATION_FILE = "calibration.safetensors"  # K/NAME per sample, calibration seeds
ACCURACY_SEED = 1000  # sample k of the accuracy set is drawn from seed ACCURACY_SEED + k
CALIBRATION_SEED = 2000


def no_openvino_telemetry() -> None:
    """OpenVINO's converter sends usage telemetry unless told not to: with its telemetry package
    made unimportable, the converter falls back on its own stub, which sends nothing (no file is
    written to the user's home, as `opt_in_out --opt_out` would)."""
    sys.modules.setdefault("openvino_telemetry", None)  # type: ignore[arg-type]


class Flat:
    """The model as a module that takes its inputs flat in call order (args, then the keywords)
    and returns its outputs flat in the reference's order: what the OpenVINO converter traces, so
    that the IR's inputs and outputs are the inputs file's and the reference's, by position."""

    @staticmethod
    def wrap(m: Any) -> Any:
        import torch

        from deploytui.models.load import output_tensors

        n_args, keywords = len(m.args), list(m.kwargs)

        class _Flat(torch.nn.Module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, *flat: Any) -> Any:
                y = self.inner(*flat[:n_args], **dict(zip(keywords, flat[n_args:], strict=True)))
                return tuple(output_tensors(y).values())

        return _Flat(m.module).eval()


def _reference_names(m: Any) -> list[str]:
    import torch

    from deploytui.models.load import output_tensors

    with torch.inference_mode():
        return list(output_tensors(m.module(*m.args, **m.kwargs)))


def export_openvino(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """openvino.convert_model on the flat model (TorchScript tracing, OpenVINO's default; through
    torch.export when tracing refuses), its inputs and outputs named as the inputs file and the
    reference name them, saved fp32 end to end: `compress_to_fp16=False` (save_model's default
    would halve the weights to FP16). The runners ask the CPU plugin for f32 inference precision."""
    no_openvino_telemetry()
    import openvino as ov
    import torch

    flat, example = Flat.wrap(m), tuple(m.inputs.values())
    try:
        model, frontend = ov.convert_model(flat, example_input=example), "TorchScript trace"
        traced_error = ""
    except Exception as e:  # tracing refused (a graph that differs between calls): torch.export
        traced_error = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}"
        print(
            f"warning: TorchScript tracing refused ({traced_error}); converting through torch.export",
            file=sys.stderr,
        )
        model, frontend = ov.convert_model(torch.export.export(flat, example)), "torch.export"
    # static shapes, as every other export here: the example inputs' (tracing leaves them dynamic)
    model.reshape({i: ov.PartialShape(list(t.shape)) for i, t in enumerate(example)})
    names_out = _reference_names(m)
    if len(model.inputs) != len(m.inputs) or len(model.outputs) != len(names_out):
        raise ValueError(
            f"the converted model takes {len(model.inputs)} input(s) and returns {len(model.outputs)}, "
            f"not {len(m.inputs)} and {len(names_out)}"
        )
    for port, name in zip(model.inputs, m.inputs, strict=True):
        port.get_tensor().set_names({name})
    for port, name in zip(model.outputs, names_out, strict=True):
        port.get_tensor().set_names({name})
    ov.save_model(model, str(out / f"{stem}_openvino.xml"), compress_to_fp16=False)
    ops = Counter(op.get_type_name() for op in model.get_ordered_ops())
    return {
        "openvino": ov.get_version(),
        "frontend": frontend,
        **({"trace_refused": traced_error} if traced_error else {}),
        "compress_to_fp16": False,
        "inference_precision": "f32",
        "ops": dict(ops.most_common()),
    }


def _drawn_like(t: Any, gen: Any) -> Any:
    """A tensor drawn like `t`: floats from a normal with its mean and spread, integers (token
    ids) uniformly over its range; a constant tensor (an all-ones mask, a scale), a single value
    or booleans as they are."""
    import torch

    if t.dtype == torch.bool or t.numel() < 2:
        return t.clone()
    if t.dtype.is_floating_point:
        mean, std = float(t.mean()), float(t.std())
        if not std > 0:  # a constant (a scale, a mask): as it is
            return t.clone()
        noise = torch.randn(t.shape, generator=gen, dtype=torch.float32).to(t.dtype)
        return noise * std + mean
    lo, hi = int(t.min()), int(t.max())
    if lo == hi:
        return t.clone()
    return torch.randint(lo, hi + 1, t.shape, generator=gen, dtype=t.dtype)


def draw_samples(m: Any, seed: int, count: int) -> list[dict[str, Any]]:
    """`count` input sets drawn like the model's example inputs, sample k from seed `seed + k`."""
    import torch

    out = []
    for k in range(count):
        gen = torch.Generator().manual_seed(seed + k)
        out.append({name: _drawn_like(t, gen) for name, t in m.inputs.items()})
    return out


def export_samples(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """The accuracy set (SAMPLES inputs and eager's outputs on each, files the runner protocol
    reads as they are) and the calibration set (CALIBRATION more, other seeds, one file)."""
    import torch
    from safetensors.torch import save_file

    from deploytui.models.load import output_tensors
    from deploytui.numerics import OUTPUTS_KEY
    from deploytui.runners.protocol import INPUTS_KEY

    folder = out / ACCURACY_DIR
    folder.mkdir(exist_ok=True)
    order = {INPUTS_KEY: ",".join(m.inputs)}
    n_args = len(m.args)
    for k, inputs in enumerate(draw_samples(m, ACCURACY_SEED, SAMPLES)):
        values = list(inputs.values())
        kwargs = dict(zip(list(inputs)[n_args:], values[n_args:], strict=True))
        with torch.inference_mode():
            y = output_tensors(m.module(*values[:n_args], **kwargs))
        save_file(inputs, str(folder / f"inputs_{k}.safetensors"), metadata=order)
        save_file(
            {n: t.contiguous() for n, t in y.items()},
            str(folder / f"reference_{k}.safetensors"),
            metadata={OUTPUTS_KEY: json.dumps(list(y))},
        )
    calibration = {
        f"{k}/{name}": t
        for k, s in enumerate(draw_samples(m, CALIBRATION_SEED, CALIBRATION))
        for name, t in s.items()
    }
    save_file(calibration, str(out / CALIBRATION_FILE), metadata=order)
    return {"accuracy_samples": SAMPLES, "accuracy_seed": ACCURACY_SEED, "calibration_samples": CALIBRATION}


def calibration_inputs(m: Any, out: Path) -> list[tuple[Any, ...]]:
    """The example inputs, then the calibration set, each as the flat call-order tuple."""
    from safetensors.torch import load_file

    stored = load_file(str(out / CALIBRATION_FILE))
    count = len({k.split("/", 1)[0] for k in stored})
    sets = [tuple(m.inputs.values())]
    sets += [tuple(stored[f"{k}/{name}"] for name in m.inputs) for k in range(count)]
    return sets


def export_onnx_int8(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """ONNX Runtime's dynamic quantisation of the model's .onnx: weights to signed int8
    (QInt8), activations quantised at run time; Conv/MatMul/Gemm become ConvInteger/
    MatMulInteger (their `ops` below). No calibration."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    source = out / f"{stem}.onnx"
    if not source.is_file():
        raise FileNotFoundError(f"{source.name} is missing: the export-onnx step has not run")
    target = out / f"{stem}_int8.onnx"
    quantize_dynamic(source, target, weight_type=QuantType.QInt8)
    q = onnx.load(str(target), load_external_data=False)
    ops = Counter(n.op_type for n in q.graph.node)
    integer = sum(
        c for op, c in ops.items() if "Integer" in op or op.startswith(("DynamicQuantize", "QLinear"))
    )
    if not integer:
        raise ValueError("quantize_dynamic left no integer operator in the graph: nothing was quantised")
    return {"weight_type": "QInt8", "mode": "dynamic", "ops": dict(ops.most_common()), "integer_ops": integer}


def export_executorch_int8(m: Any, out: Path, stem: str, ep: Any) -> dict[str, Any]:
    """PT2E static int8 for XNNPACK: `XNNPACKQuantizer` (symmetric, per-channel weights) on the
    exported program `ep`, calibrated on the example inputs and the calibration set, converted,
    exported again and lowered like the fp32 .pte (what XNNPACK does not take stays fp32: the
    delegation report says which)."""
    import torch
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from deploytui.families.executorch import pte

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(ep.module(), quantizer)
    n_args, keywords = len(m.args), list(m.kwargs)
    sets = calibration_inputs(m, out)
    with torch.no_grad():
        for flat in sets:
            prepared(*flat[:n_args], **dict(zip(keywords, flat[n_args:], strict=True)))
    converted = convert_pt2e(prepared)
    facts = pte.lower(torch.export.export(converted, m.args, m.kwargs), out, f"{stem}_int8")
    return {**facts, "quantizer": "XNNPACKQuantizer symmetric per-channel", "calibration_inputs": len(sets)}


def export_openvino_int8(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """NNCF's post-training quantisation of the fp32 IR (`nncf.quantize`, its default: symmetric
    int8 FakeQuantize on weights and activations), calibrated on the example inputs and the
    calibration set, saved beside it without FP16 compression (the runners ask for f32
    inference precision: what is not quantised stays fp32)."""
    no_openvino_telemetry()  # NNCF's telemetry goes through the same package: off with it
    from importlib.metadata import version

    import nncf
    import openvino as ov

    source = out / f"{stem}_openvino.xml"
    if not source.is_file():
        raise FileNotFoundError(f"{source.name} is missing: the export-openvino step has not run")
    model = ov.Core().read_model(str(source))
    names = list(m.inputs)
    sets = [{n: t.numpy() for n, t in zip(names, flat, strict=True)} for flat in calibration_inputs(m, out)]
    quantized = nncf.quantize(model, nncf.Dataset(sets), subset_size=len(sets))
    ov.save_model(quantized, str(out / f"{stem}_openvino_int8.xml"), compress_to_fp16=False)
    ops = Counter(op.get_type_name() for op in quantized.get_ordered_ops())
    if not ops.get("FakeQuantize"):
        raise ValueError("nncf.quantize inserted no FakeQuantize: nothing was quantised")
    return {
        "nncf": version("nncf"),
        "openvino": ov.get_version(),
        "calibration_inputs": len(sets),
        "compress_to_fp16": False,
        "ops": dict(ops.most_common()),
    }


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
