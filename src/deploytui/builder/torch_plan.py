"""The PyTorch and ONNX exports, one step (and one process) each."""

from __future__ import annotations

from pathlib import Path

from deploytui.builder.context import BuildContext
from deploytui.builder.steps import Step

PKG = Path(__file__).resolve().parents[1]

# step name, export name, outputs (relative to artifacts/), title
EXPORTS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    (
        "export-safetensors",
        "safetensors",
        ("a1.safetensors", "reference.json"),
        "safetensors weights + eager reference logits",
    ),
    ("export-torchscript", "torchscript", ("a1_script.pt", "a1_trace.pt"), "TorchScript script + trace"),
    ("export-torch-export", "torch-export", ("a1_export.pt2", "a1_export_graph.py"), "torch.export .pt2"),
    ("export-aoti", "aoti", ("a1_aoti.pt2",), "AOTInductor package (compiles C++, ~30 s cold)"),
    (
        "export-aoti-lean",
        "aoti-lean",
        ("a1_aoti_lean.pt2",),
        "AOTInductor package, link_libtorch=False (~20 s cold)",
    ),
    ("export-onnx", "onnx", ("a1.onnx",), "ONNX (torch.onnx.export, dynamo exporter)"),
)


def steps(ctx: BuildContext) -> list[Step]:
    inputs = (PKG / "a1.py", PKG / "model.py", PKG / "builder" / "torch_cmd.py")
    needs_cc = {"aoti", "aoti-lean"}
    return [
        Step(
            name=name,
            title=title,
            argv=(ctx.python, "-m", "deploytui.builder.torch_cmd", what, str(ctx.art)),
            inputs=inputs,
            outputs=tuple(ctx.art / o for o in outputs),
            needs=("g++",) if what in needs_cc else (),
            env=ctx.torch_env(),
        )
        for name, what, outputs, title in EXPORTS
    ]
