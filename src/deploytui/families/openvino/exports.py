"""The openvino family's exports: openvino.convert_model's IR of the model (fp32 end to end) and
NNCF's int8 of it, calibrated on the model's calibration set."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

from deploytui.families.common.samples import calibration_inputs
from deploytui.families.common.torch_export import reference_names

# nothing for the build's fork server to import once: openvino's and nncf's imports start
# threads (a fork copies only the caller's), so each export imports them itself
PRELOAD: tuple[str, ...] = ()


def no_openvino_telemetry() -> None:
    """OpenVINO's converter sends usage telemetry unless told not to: with its telemetry package
    made unimportable, the converter falls back on its own stub, which sends nothing (no file is
    written to the user's home, as `opt_in_out --opt_out` would)."""
    sys.modules.setdefault("openvino_telemetry", None)  # type: ignore[arg-type]


class Flat:
    """The model as a module that takes its inputs flat in call order (the input tensors as the
    inputs file lists them, a nested call rebuilt by `m.call`) and returns its outputs flat in the
    reference's order: what the OpenVINO converter traces, so that the IR's inputs and outputs are
    the inputs file's and the reference's, by position."""

    @staticmethod
    def wrap(m: Any) -> Any:
        import torch

        from deploytui.models.load import output_tensors

        class _Flat(torch.nn.Module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, *flat: Any) -> Any:
                args, kwargs = m.call(flat)
                y = self.inner(*args, **kwargs)
                return tuple(output_tensors(y).values())

        return _Flat(m.module).eval()


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
    names_out = reference_names(m)
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
