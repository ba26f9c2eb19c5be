"""The ONNX exports (torch.onnx.export; quantize_dynamic's int8; the dynamic-batch .onnx built on
demand) and `ort-build`: ort-run (the `ort` crate, load-dynamic) with the wheel's
libonnxruntime.so path baked in (DEPLOYTUI_ORT_DYLIB) into shared/bin/."""

from __future__ import annotations

from pathlib import Path

from deploytui.families.common.cargo import recipes, shared_program
from deploytui.families.common.export_steps import Export, steps_of
from deploytui.families.onnxruntime import exports
from deploytui.families.onnxruntime.family import ORT_RUN
from deploytui.spec.context import BuildContext, package_dir
from deploytui.spec.steps import Step

EXPORTS = (
    Export("export-onnx", exports.export_onnx, ("{m}.onnx",), "ONNX (torch.onnx.export, dynamo exporter)"),
    Export(
        "export-onnx-int8",
        exports.export_onnx_int8,
        ("{m}_int8.onnx",),
        "ONNX dynamic int8 (quantize_dynamic, QInt8)",
        after=("export-onnx",),
    ),
    Export(
        "export-dyn-onnx",
        exports.export_dyn_onnx,
        ("{m}_dyn.onnx",),
        "ONNX, dynamic batch axis",
        on_demand=True,
    ),
)


def ort_dylib() -> Path:
    """The onnxruntime wheel's own C library (capi/libonnxruntime.so.X.Y.Z), which ort-run loads."""
    capi = package_dir("onnxruntime") / "capi"
    found = sorted(capi.glob("libonnxruntime.so.*")) if capi.is_dir() else []
    return found[-1] if found else capi / "libonnxruntime.so (not found)"


def steps(ctx: BuildContext) -> list[Step]:
    return [
        *steps_of(ctx, EXPORTS),
        shared_program(
            ctx,
            "ort-build",
            "ONNX Runtime: build ort-run (loads the wheel's libonnxruntime.so; shared)",
            "ort-run",
            ORT_RUN,
            recipes(__file__),
            env={"DEPLOYTUI_ORT_DYLIB": str(ort_dylib())},
        ),
    ]
