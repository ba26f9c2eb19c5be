"""The PyTorch and ONNX exports of the model, one step (and one process) each."""

from __future__ import annotations

from pathlib import Path

from deploytui.builder.context import BuildContext
from deploytui.builder.steps import Step

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
)


def _model_inputs(ctx: BuildContext) -> tuple[Path, ...]:
    """The model's source: the zoo, or the user's file (a module's is found by import)."""
    if ctx.model.kind == "file":
        return (Path(ctx.model.target),)
    return (PKG / "models" / "zoo.py", PKG / "models" / "load.py")


def steps(ctx: BuildContext) -> list[Step]:
    inputs = (*_model_inputs(ctx), PKG / "builder" / "torch_cmd.py")
    needs_cc = {"aoti", "aoti-lean"}
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
            after=() if what == "model" else ("export-model",),
        )
        for name, what, outputs, title in EXPORTS
    ]
