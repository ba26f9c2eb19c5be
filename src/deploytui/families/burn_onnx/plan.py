"""The burn-onnx steps (cargo_steps.py does each, cargo_cmd drives them), each after export-onnx:
burn-onnx-file   burn-onnx-default (crate burn-onnx-gen) generated from <m>.onnx with
                 LoadStrategy::File, as <m>/bin/burn-onnx-file
burn-onnx-embed  the same with feature embed (LoadStrategy::Embedded), as burn-onnx-embed
burn-onnx-bpk    burn-onnx-bpk (LoadStrategy::File, Model::from_file(MODEL_FILE)) + its .bpk
                 copied next to it (<m>/bin/<m>_onnx.bpk)
"""

from __future__ import annotations

from pathlib import Path

from deploytui.families.burn_onnx.family import BURN_ONNX_BPK, BURN_ONNX_EMBED, BURN_ONNX_FILE
from deploytui.families.common.cargo import CARGO, argv, recipes, workspace
from deploytui.families.common.programs import at
from deploytui.spec.context import BuildContext
from deploytui.spec.steps import Step

RECIPES = recipes(__file__)


def onnx_sources(ctx: BuildContext) -> tuple[Path, ...]:
    """What the burn-onnx-gen steps read: its crate, the runner I/O crate and the model's .onnx."""
    rust, d, m = ctx.root / "rust", ctx.mdir, ctx.slug
    return (rust / "runner-io", rust / "burn-onnx-gen", d / f"{m}.onnx", d / f"{m}.onnx.data")


def steps(ctx: BuildContext) -> list[Step]:
    d, m, mb = ctx.mdir, ctx.slug, ctx.mbin
    inputs = (*workspace(ctx, RECIPES), *onnx_sources(ctx))
    return [
        Step(
            name="burn-onnx-file",
            title=f"burn-onnx: generate code from {m}.onnx (File) and build",
            argv=argv(ctx, "burn-onnx-file", d, m),
            inputs=inputs,
            outputs=(at(ctx, BURN_ONNX_FILE), d / "onnx" / f"{m}.rs", d / "onnx" / f"{m}.bpk"),
            needs=CARGO,
            after=("export-onnx",),
        ),
        Step(
            name="burn-onnx-embed",
            title=f"burn-onnx: generate code from {m}.onnx (Embedded) and build",
            argv=argv(ctx, "burn-onnx-embed", d, m),
            inputs=inputs,
            outputs=(at(ctx, BURN_ONNX_EMBED), d / "onnx" / f"{m}_embed.rs"),
            needs=CARGO,
            after=("export-onnx",),
        ),
        Step(
            name="burn-onnx-bpk",
            title="burn-onnx: build burn-onnx-bpk (Model::from_file) and ship its .bpk beside it",
            argv=argv(ctx, "burn-onnx-bpk", d, m),
            inputs=inputs,
            outputs=(at(ctx, BURN_ONNX_BPK), mb / f"{m}_onnx.bpk"),
            needs=CARGO,
            after=("export-onnx",),
        ),
    ]
