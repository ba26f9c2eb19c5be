"""The PyTorch and ONNX exports of the model, one step (and one process) each."""

from __future__ import annotations

from pathlib import Path

from deploytui.builder.context import BuildContext
from deploytui.builder.steps import Step
from deploytui.models import LIBRARY_KINDS
from deploytui.precision import SAMPLES

PKG = Path(__file__).resolve().parents[1]

# step name, export name, outputs (relative to the model's folder; {m} = slug), title
EXPORTS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    (
        "export-model",
        "model",
        ("{m}.safetensors", "inputs.safetensors", "reference.safetensors", "model.json"),
        "weights, example inputs, eager's outputs",
    ),
    ("export-script", "script", ("{m}_script.pt",), "TorchScript (script)"),
    ("export-trace", "trace", ("{m}_trace.pt",), "TorchScript (trace)"),
    ("export-torch-export", "torch-export", ("{m}_export.pt2", "{m}_export_graph.py"), "torch.export .pt2"),
    ("export-aoti", "aoti", ("{m}_aoti.pt2",), "AOTInductor package (compiles C++, ~30 s cold)"),
    (
        "export-aoti-lean",
        "aoti-lean",
        ("{m}_aoti_lean.pt2",),
        "AOTInductor package, link_libtorch=False (~20 s cold)",
    ),
    ("export-onnx", "onnx", ("{m}.onnx",), "ONNX (torch.onnx.export, dynamo exporter)"),
    (
        "export-executorch",
        "executorch",
        ("{m}.pte", "{m}_delegation.json"),
        "ExecuTorch .pte, XNNPACK partitioner (~15 s: imports executorch)",
    ),
    (
        "export-openvino",
        "openvino",
        ("{m}_openvino.xml", "{m}_openvino.bin"),
        "OpenVINO IR, fp32 (openvino.convert_model, compress_to_fp16=False)",
    ),
    (
        "export-samples",
        "samples",
        (
            *(f"accuracy/inputs_{k}.safetensors" for k in range(SAMPLES)),
            *(f"accuracy/reference_{k}.safetensors" for k in range(SAMPLES)),
            "calibration.safetensors",
        ),
        "fixed-seed inputs drawn like the example: the accuracy set, the calibration set",
    ),
    ("export-onnx-int8", "onnx-int8", ("{m}_int8.onnx",), "ONNX dynamic int8 (quantize_dynamic, QInt8)"),
    (
        "export-executorch-int8",
        "executorch-int8",
        ("{m}_int8.pte", "{m}_int8_delegation.json"),
        "ExecuTorch .pte, XNNPACK int8 (PT2E XNNPACKQuantizer, calibrated)",
    ),
    (
        "export-openvino-int8",
        "openvino-int8",
        ("{m}_openvino_int8.xml", "{m}_openvino_int8.bin"),
        "OpenVINO IR, int8 (NNCF post-training quantisation, calibrated)",
    ),
    (
        "export-aoti-int8",
        "aoti-int8",
        ("{m}_aoti_int8.pt2",),
        "AOTInductor package of torchao's dynamic int8 (compiles C++, ~30 s cold)",
    ),
)
# the dynamic-batch exports (`bench --batch` runs them; built on demand: forms.for_batch)
DYNAMIC_EXPORTS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("export-dyn-torch-export", "dyn-torch-export", ("{m}_export_dyn.pt2",), "torch.export, dynamic batch"),
    ("export-dyn-aoti", "dyn-aoti", ("{m}_aoti_dyn.pt2",), "AOTInductor package, dynamic batch (~30 s)"),
    ("export-dyn-onnx", "dyn-onnx", ("{m}_dyn.onnx",), "ONNX, dynamic batch axis"),
    ("export-dyn-executorch", "dyn-executorch", ("{m}_dyn.pte",), "ExecuTorch .pte, dynamic batch"),
    (
        "export-dyn-aoti-lean",
        "dyn-aoti-lean",
        ("{m}_aoti_lean_dyn.pt2",),
        "AOTInductor package, link_libtorch=False, dynamic batch (~20 s)",
    ),
)
# steps an export needs besides export-model (the files it starts from)
AFTER: dict[str, tuple[str, ...]] = {
    "export-onnx-int8": ("export-onnx",),
    "export-executorch-int8": ("export-samples",),
    "export-openvino-int8": ("export-openvino", "export-samples"),
}


def _model_inputs(ctx: BuildContext) -> tuple[Path, ...]:
    """The model's source: the zoo, the user's file (a module's is found by import), or the
    library model's files (a saved folder's config and weights, a config, a weights file); and
    the seam that loads it and names its inputs and outputs."""
    ref = ctx.model
    seam = (
        PKG / "models" / "load.py",
        PKG / "runners" / "torch_bundle.py",
        PKG / "runners" / "protocol.py",
    )
    if ref.kind == "file":
        return (Path(ref.target), *seam)
    if ref.kind in LIBRARY_KINDS:
        target = Path(ref.target)
        files = sorted(p for p in target.iterdir() if p.is_file()) if target.is_dir() else [target]
        weights = [Path(str(ref.kwargs["weights"]))] if "weights" in ref.kwargs else []
        local = [p for p in (*files, *weights) if p.is_file()]
        return (PKG / "models" / "library.py", *local, *seam)
    return (PKG / "models" / "zoo.py", *seam)


def steps(ctx: BuildContext) -> list[Step]:
    inputs = (
        *_model_inputs(ctx),
        PKG / "builder" / "torch_cmd.py",
        PKG / "builder" / "variant_exports.py",
        PKG / "builder" / "pte.py",
    )
    dynamic = {name for name, *_ in DYNAMIC_EXPORTS}
    needs_cc = {"aoti", "aoti-lean", "dyn-aoti", "aoti-int8", "dyn-aoti-lean"}
    return [
        Step(
            name=name,
            title=title,
            argv=(
                ctx.python,
                "-m",
                "deploytui.builder.torch_cmd",
                what,
                str(ctx.mdir),
                "--model",
                ctx.model.text,
            ),
            inputs=inputs,
            outputs=tuple(ctx.mdir / o.replace("{m}", ctx.slug) for o in outputs),
            needs=("g++",) if what in needs_cc else (),
            env=ctx.torch_env(),
            stage="export",
            after=() if what == "model" else ("export-model", *AFTER.get(name, ())),
            on_demand=name in dynamic,
        )
        for name, what, outputs, title in (*EXPORTS, *DYNAMIC_EXPORTS)
    ]
