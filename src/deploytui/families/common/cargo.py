"""The cargo workspace in rust/, driven by cargo_cmd: what the Rust families' steps share.

Each family's plan declares its own steps with `argv` below, and its cargo_steps module (beside
the plan) what each does; cargo_cmd finds it there by the step's name. Every cargo step selects
its program's group of packages (rust/Cargo.toml; cargo_build), as clippy and the tests do, so
each group's dependencies are compiled once.
"""

from __future__ import annotations

from pathlib import Path

from deploytui.families.common.programs import at
from deploytui.spec.context import BuildContext
from deploytui.spec.steps import Step

CARGO = ("cargo",)
HERE = Path(__file__).resolve().parent
DRIVER = (HERE / "cargo_cmd.py", HERE / "cargo_build.py")  # inputs of every cargo step


def recipes(plan: str) -> Path:
    """A family's cargo steps (its cargo_steps.py, beside its plan: `plan` is the plan's
    `__file__`), an input of each of them."""
    return Path(plan).resolve().with_name("cargo_steps.py")


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


def workspace(ctx: BuildContext, steps_file: Path) -> tuple[Path, ...]:
    """Every member's manifest (the workspace's features are unified across all of them), the
    driver and the family's `steps_file` (`recipes`): inputs of every cargo step."""
    rust = ctx.root / "rust"
    return (rust / "Cargo.toml", rust / "Cargo.lock", *sorted(rust.glob("*/Cargo.toml")), *DRIVER, steps_file)


def shared_program(
    ctx: BuildContext,
    name: str,
    title: str,
    crate: str,
    executable: str,
    steps_file: Path,
    env: dict[str, str] | None = None,
) -> Step:
    """A model-independent program of the workspace (its `crate`) built into shared/bin/ by the
    step `name` of the family's `steps_file`; `executable` is its path as the family's forms declare it."""
    rust = ctx.root / "rust"
    return Step(
        name=name,
        title=title,
        argv=argv(ctx, name, ctx.shared, None),
        inputs=(*workspace(ctx, steps_file), rust / "runner-io", rust / crate),
        outputs=(at(ctx, executable),),
        needs=CARGO,
        env=env or {},
        scope="shared",
    )
