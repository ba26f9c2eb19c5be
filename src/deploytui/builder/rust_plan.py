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

    def cargo(name: str, title: str, inputs: tuple[Path, ...], outputs: tuple[Path, ...], after: str) -> Step:
        return Step(
            name=name,
            title=title,
            argv=_argv(ctx, name),
            inputs=(*workspace, *inputs),
            outputs=outputs,
            needs=CARGO,
            after=(after,),
        )

    return [
        cargo(
            "burn-convert",
            "burn: convert a1.safetensors to a1.bpk",
            (*deploy_src, art / "a1.safetensors"),
            (b / "convert", art / "a1.bpk"),
            "export-safetensors",
        ),
        cargo(
            "burn-deploy",
            "burn: build infer-file, infer-embed, infer-st",
            (*deploy_src, art / "a1.bpk"),
            (b / "infer-file", b / "infer-embed", b / "infer-st"),
            "burn-convert",
        ),
        cargo(
            "burn-onnx-file",
            "burn-onnx: generate code from a1.onnx (File) and build",
            onnx_src,
            (b / "burn-onnx-file", art / "onnx" / "a1.rs", art / "onnx" / "a1.bpk"),
            "export-onnx",
        ),
        cargo(
            "burn-onnx-embed",
            "burn-onnx: generate code from a1.onnx (Embedded) and build",
            onnx_src,
            (b / "burn-onnx-embed", art / "onnx" / "a1_embed.rs"),
            "export-onnx",
        ),
        cargo(
            "burn-onnx-bpk",
            "burn-onnx: build store-onnx-bpk (Model::from_file) and ship its .bpk beside it",
            onnx_src,
            (b / "burn-onnx-bpk", b / "a1_onnx.bpk"),
            "export-onnx",
        ),
        cargo(
            "burn-capture",
            "burn: capture the forward as GraphIr JSON",
            (*deploy_src, rust / "store-capture", art / "a1.bpk"),
            (art / "capture.json",),
            "burn-convert",
        ),
    ]
