"""Build steps of the Rust (burn) forms: the cargo workspace in rust/, driven by rust_cmd.

Step names are fixed (forms.py refers to them):
  burn-tools       shared: burn-convert, burn-file, burn-st (crate burn-mlp, model-independent:
                   an Mlp of any layout, sizes read from the weights) into shared/bin/
  burn-convert     <m>.safetensors -> <m>.bpk with the shared `burn-convert` binary
  burn-embed       burn-embed with <m>.bpk compiled in (<m>/bin/)
  burn-onnx-file   burn-onnx-default (crate burn-onnx-gen) generated from <m>.onnx with
                   LoadStrategy::File, as <m>/bin/burn-onnx-file
  burn-onnx-embed  the same with feature embed (LoadStrategy::Embedded), as burn-onnx-embed
  burn-onnx-bpk    burn-onnx-bpk (LoadStrategy::File, Model::from_file(MODEL_FILE)) + its .bpk
                   copied next to it (<m>/bin/<m>_onnx.bpk)
  burn-capture     burn-mlp-capture: the Mlp forward recorded on Device::capture -> capture.json
  tract-build      shared: tract-run (tract-onnx, loads any .onnx at run time) into shared/bin/
  ort-build        shared: ort-run (the `ort` crate, load-dynamic) with the wheel's
                   libonnxruntime.so path baked in (DEPLOYTUI_ORT_DYLIB) into shared/bin/
  tract-optimise   tract-run --nodes: tract loads and optimises <m>.onnx typed by the example
                   inputs -> tract_nodes.txt (an operator tract lacks fails here, in tract's words)
The hand-written Mlp steps (burn-convert, burn-embed, burn-capture) exist only for models with
the Mlp layout (a1, the mlp family); their forms are not applicable to the others.
Every cargo step selects its program's group of packages (rust/Cargo.toml; rust_cmd), as clippy
and the tests do, so each group's dependencies are compiled once.
"""

from __future__ import annotations

from pathlib import Path

from deploytui.builder.context import BuildContext, package_dir
from deploytui.builder.steps import Step
from deploytui.models import has_mlp_layout

CARGO = ("cargo",)


def ort_dylib() -> Path:
    """The onnxruntime wheel's own C library (capi/libonnxruntime.so.X.Y.Z), which ort-run loads."""
    capi = package_dir("onnxruntime") / "capi"
    found = sorted(capi.glob("libonnxruntime.so.*")) if capi.is_dir() else []
    return found[-1] if found else capi / "libonnxruntime.so (not found)"


def _argv(ctx: BuildContext, name: str, out: Path, stem: str | None) -> tuple[str, ...]:
    argv: tuple[str, ...] = (
        ctx.python,
        "-m",
        "deploytui.families.common.cargo_cmd",
        name,
        "--out",
        str(out),
        "--rust",
        str(ctx.root / "rust"),
        "--target",
        str(ctx.cargo_target),
    )
    if stem is not None:
        argv += ("--stem", stem, "--tools", str(ctx.bin))
    return argv


def steps(ctx: BuildContext) -> list[Step]:
    rust = ctx.root / "rust"
    driver = Path(__file__).resolve().parent / "rust_cmd.py"
    # every member's manifest: the workspace's features are unified across all of them
    workspace = (rust / "Cargo.toml", rust / "Cargo.lock", *sorted(rust.glob("*/Cargo.toml")), driver)
    d, m, b, mb = ctx.mdir, ctx.slug, ctx.bin, ctx.mbin
    mlp_src = (rust / "runner-io", rust / "burn-mlp")
    onnx_src = (rust / "runner-io", rust / "burn-onnx-gen", d / f"{m}.onnx", d / f"{m}.onnx.data")
    out = [
        Step(
            name="burn-tools",
            title="burn: build burn-convert, burn-file, burn-st (shared by every model)",
            argv=_argv(ctx, "burn-tools", ctx.shared, None),
            inputs=(*workspace, *mlp_src),
            outputs=(b / "burn-convert", b / "burn-file", b / "burn-st"),
            needs=CARGO,
            scope="shared",
        )
    ]
    if has_mlp_layout(ctx.model):
        out += [
            Step(
                name="burn-convert",
                title=f"burn: convert {m}.safetensors to {m}.bpk",
                argv=_argv(ctx, "burn-convert", d, m),
                inputs=(driver, b / "burn-convert", d / f"{m}.safetensors"),
                outputs=(d / f"{m}.bpk",),
                after=("export-model", "burn-tools"),
            ),
            Step(
                name="burn-embed",
                title=f"burn: build burn-embed with {m}.bpk compiled in",
                argv=_argv(ctx, "burn-embed", d, m),
                inputs=(*workspace, *mlp_src, d / f"{m}.bpk"),
                outputs=(mb / "burn-embed",),
                needs=CARGO,
                after=("burn-convert",),
            ),
        ]
    out += [
        Step(
            name="burn-onnx-file",
            title=f"burn-onnx: generate code from {m}.onnx (File) and build",
            argv=_argv(ctx, "burn-onnx-file", d, m),
            inputs=(*workspace, *onnx_src),
            outputs=(mb / "burn-onnx-file", d / "onnx" / f"{m}.rs", d / "onnx" / f"{m}.bpk"),
            needs=CARGO,
            after=("export-onnx",),
        ),
        Step(
            name="burn-onnx-embed",
            title=f"burn-onnx: generate code from {m}.onnx (Embedded) and build",
            argv=_argv(ctx, "burn-onnx-embed", d, m),
            inputs=(*workspace, *onnx_src),
            outputs=(mb / "burn-onnx-embed", d / "onnx" / f"{m}_embed.rs"),
            needs=CARGO,
            after=("export-onnx",),
        ),
        Step(
            name="burn-onnx-bpk",
            title="burn-onnx: build burn-onnx-bpk (Model::from_file) and ship its .bpk beside it",
            argv=_argv(ctx, "burn-onnx-bpk", d, m),
            inputs=(*workspace, *onnx_src),
            outputs=(mb / "burn-onnx-bpk", mb / f"{m}_onnx.bpk"),
            needs=CARGO,
            after=("export-onnx",),
        ),
    ]
    out += [
        Step(
            name="tract-build",
            title="tract: build tract-run (loads any .onnx at run time; shared by every model)",
            argv=_argv(ctx, "tract-build", ctx.shared, None),
            inputs=(*workspace, rust / "runner-io", rust / "tract-run"),
            outputs=(b / "tract-run",),
            needs=CARGO,
            scope="shared",
        ),
        Step(
            name="ort-build",
            title="ONNX Runtime: build ort-run (loads the wheel's libonnxruntime.so; shared)",
            argv=_argv(ctx, "ort-build", ctx.shared, None),
            inputs=(*workspace, rust / "runner-io", rust / "ort-run"),
            outputs=(b / "ort-run",),
            needs=CARGO,
            env={"DEPLOYTUI_ORT_DYLIB": str(ort_dylib())},
            scope="shared",
        ),
        Step(
            name="tract-optimise",
            title=f"tract: load and optimise {m}.onnx, list its nodes",
            argv=_argv(ctx, "tract-optimise", d, m),
            inputs=(driver, b / "tract-run", d / f"{m}.onnx", d / f"{m}.onnx.data", d / "inputs.safetensors"),
            outputs=(d / "tract_nodes.txt",),
            after=("export-onnx", "tract-build"),
        ),
    ]
    if has_mlp_layout(ctx.model):
        out.append(
            Step(
                name="burn-capture",
                title="burn: capture the forward as GraphIr JSON",
                argv=_argv(ctx, "burn-capture", d, m),
                inputs=(*workspace, *mlp_src, rust / "burn-mlp-capture", d / f"{m}.bpk"),
                outputs=(d / "capture.json",),
                needs=CARGO,
                after=("burn-convert",),
            )
        )
    return out
