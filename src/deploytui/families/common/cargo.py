"""The cargo workspace in rust/, driven by cargo_cmd: what the Rust families' steps share.

Each family's plan declares its own steps (burn: burn-tools, burn-convert, burn-embed,
burn-capture; burn_onnx: burn-onnx-file, burn-onnx-embed, burn-onnx-bpk; tract: tract-build,
tract-optimise; onnxruntime: ort-build) with `argv` below. Every cargo step selects its
program's group of packages (rust/Cargo.toml; cargo_cmd), as clippy and the tests do, so each
group's dependencies are compiled once.
"""

from __future__ import annotations

from pathlib import Path

from deploytui.families.common.programs import at
from deploytui.spec.context import BuildContext
from deploytui.spec.steps import Step

CARGO = ("cargo",)
DRIVER = Path(__file__).resolve().parent / "cargo_cmd.py"


def argv(ctx: BuildContext, name: str, out: Path, stem: str | None) -> tuple[str, ...]:
    cmd: tuple[str, ...] = (
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
        cmd += ("--stem", stem, "--tools", str(ctx.bin))
    return cmd


def workspace(ctx: BuildContext) -> tuple[Path, ...]:
    """Every member's manifest (the workspace's features are unified across all of them) and the
    driver: inputs of every cargo step."""
    rust = ctx.root / "rust"
    return (rust / "Cargo.toml", rust / "Cargo.lock", *sorted(rust.glob("*/Cargo.toml")), DRIVER)


def onnx_sources(ctx: BuildContext) -> tuple[Path, ...]:
    """What the burn-onnx-gen steps read: its crate, the runner I/O crate and the model's .onnx."""
    rust, d, m = ctx.root / "rust", ctx.mdir, ctx.slug
    return (rust / "runner-io", rust / "burn-onnx-gen", d / f"{m}.onnx", d / f"{m}.onnx.data")


def shared_program(
    ctx: BuildContext, name: str, title: str, crate: str, executable: str, env: dict[str, str] | None = None
) -> Step:
    """A model-independent program of the workspace (its `crate`) built into shared/bin/ by
    cargo_cmd's step `name`; `executable` is its path as the family's forms declare it."""
    rust = ctx.root / "rust"
    return Step(
        name=name,
        title=title,
        argv=argv(ctx, name, ctx.shared, None),
        inputs=(*workspace(ctx), rust / "runner-io", rust / crate),
        outputs=(at(ctx, executable),),
        needs=CARGO,
        env=env or {},
        scope="shared",
    )
