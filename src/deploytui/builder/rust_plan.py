"""Build steps of the Rust (burn) forms: the cargo workspace in rust/, driven by rust_cmd.

Step names are fixed (forms.py refers to them):
  burn-convert     a1.safetensors -> a1.bpk with the `convert` binary
  burn-deploy      infer-file, infer-embed (a1.bpk compiled in), infer-st
  burn-onnx-file   store-onnx built from a1.onnx with LoadStrategy::File
  burn-onnx-embed  store-onnx built with --features embed (LoadStrategy::Embedded)
  burn-onnx-bpk    store-onnx-bpk (LoadStrategy::File, Model::from_file(MODEL_FILE)) + its .bpk
                   copied next to it (bin/a1_onnx.bpk)
  burn-capture     store-capture: the Mlp forward recorded on Device::capture -> capture.json
"""

from __future__ import annotations

from pathlib import Path

from deploytui.builder.context import BuildContext
from deploytui.builder.steps import Step

CARGO = ("cargo",)


def _argv(ctx: BuildContext, name: str) -> tuple[str, ...]:
    return (
        ctx.python,
        "-m",
        "deploytui.builder.rust_cmd",
        name,
        "--art",
        str(ctx.art),
        "--rust",
        str(ctx.root / "rust"),
        "--target",
        str(ctx.cargo_target),
    )


def steps(ctx: BuildContext) -> list[Step]:
    rust = ctx.root / "rust"
    driver = Path(__file__).resolve().parent / "rust_cmd.py"
    workspace = (rust / "Cargo.toml", rust / "Cargo.lock", driver)
    art, b = ctx.art, ctx.bin
    deploy_src = (rust / "runner-io", rust / "store-deploy")
    onnx_src = (rust / "runner-io", rust / "store-onnx", art / "a1.onnx", art / "a1.onnx.data")
    return [
        Step(
            name="burn-convert",
            title="burn: convert a1.safetensors to a1.bpk",
            argv=_argv(ctx, "burn-convert"),
            inputs=(*workspace, *deploy_src, art / "a1.safetensors"),
            outputs=(b / "convert", art / "a1.bpk"),
            needs=CARGO,
            after=("export-safetensors",),
        ),
        Step(
            name="burn-deploy",
            title="burn: build infer-file, infer-embed, infer-st",
            argv=_argv(ctx, "burn-deploy"),
            inputs=(*workspace, *deploy_src, art / "a1.bpk"),
            outputs=(b / "infer-file", b / "infer-embed", b / "infer-st"),
            needs=CARGO,
            after=("burn-convert",),
        ),
        Step(
            name="burn-onnx-file",
            title="burn-onnx: generate code from a1.onnx (File) and build",
            argv=_argv(ctx, "burn-onnx-file"),
            inputs=(*workspace, *onnx_src),
            outputs=(b / "burn-onnx-file", art / "onnx" / "a1.rs", art / "onnx" / "a1.bpk"),
            needs=CARGO,
            after=("export-onnx",),
        ),
        Step(
            name="burn-onnx-embed",
            title="burn-onnx: generate code from a1.onnx (Embedded) and build",
            argv=_argv(ctx, "burn-onnx-embed"),
            inputs=(*workspace, *onnx_src),
            outputs=(b / "burn-onnx-embed", art / "onnx" / "a1_embed.rs"),
            needs=CARGO,
            after=("export-onnx",),
        ),
        Step(
            name="burn-onnx-bpk",
            title="burn-onnx: build store-onnx-bpk (Model::from_file) and ship its .bpk beside it",
            argv=_argv(ctx, "burn-onnx-bpk"),
            inputs=(*workspace, *onnx_src),
            outputs=(b / "burn-onnx-bpk", b / "a1_onnx.bpk"),
            needs=CARGO,
            after=("export-onnx",),
        ),
        Step(
            name="burn-capture",
            title="burn: capture the forward as GraphIr JSON",
            argv=_argv(ctx, "burn-capture"),
            inputs=(*workspace, *deploy_src, rust / "store-capture", art / "a1.bpk"),
            outputs=(art / "capture.json",),
            needs=CARGO,
            after=("burn-convert",),
        ),
    ]
