"""The burn family's steps (cargo_steps.py does each, cargo_cmd drives them):
  burn-tools    shared: burn-convert, burn-file, burn-st (crate burn-mlp, model-independent: an
                Mlp of any layout, sizes read from the weights) into shared/bin/
  burn-convert  <m>.safetensors -> <m>.bpk with the shared `burn-convert` binary
  burn-embed    burn-embed with <m>.bpk compiled in (<m>/bin/)
  burn-capture  burn-mlp-capture: the Mlp forward recorded on Device::capture -> capture.json
All but burn-tools exist only for models with the Mlp layout (a1, the mlp family); the burn forms
are not applicable to the others.
"""

from __future__ import annotations

from deploytui.core.modelref import has_mlp_layout
from deploytui.families.burn.family import BURN_EMBED, BURN_FILE, BURN_ST
from deploytui.families.common.cargo import CARGO, DRIVER, argv, recipes, workspace
from deploytui.families.common.programs import at
from deploytui.spec.context import BuildContext
from deploytui.spec.steps import Step

RECIPES = recipes(__file__)


def steps(ctx: BuildContext) -> list[Step]:
    rust, d, m, b = ctx.root / "rust", ctx.mdir, ctx.slug, ctx.bin
    mlp_src = (rust / "runner-io", rust / "burn-mlp")
    out = [
        Step(
            name="burn-tools",
            title="burn: build burn-convert, burn-file, burn-st (shared by every model)",
            argv=argv(ctx, "burn-tools", ctx.shared, None),
            inputs=(*workspace(ctx, RECIPES), *mlp_src),
            outputs=(b / "burn-convert", at(ctx, BURN_FILE), at(ctx, BURN_ST)),
            needs=CARGO,
            scope="shared",
        )
    ]
    if not has_mlp_layout(ctx.model):
        return out
    return [
        *out,
        Step(
            name="burn-convert",
            title=f"burn: convert {m}.safetensors to {m}.bpk",
            argv=argv(ctx, "burn-convert", d, m),
            inputs=(*DRIVER, RECIPES, b / "burn-convert", d / f"{m}.safetensors"),
            outputs=(d / f"{m}.bpk",),
            after=("export-model", "burn-tools"),
        ),
        Step(
            name="burn-embed",
            title=f"burn: build burn-embed with {m}.bpk compiled in",
            argv=argv(ctx, "burn-embed", d, m),
            inputs=(*workspace(ctx, RECIPES), *mlp_src, d / f"{m}.bpk"),
            outputs=(at(ctx, BURN_EMBED),),
            needs=CARGO,
            after=("burn-convert",),
        ),
        Step(
            name="burn-capture",
            title="burn: capture the forward as GraphIr JSON",
            argv=argv(ctx, "burn-capture", d, m),
            inputs=(*workspace(ctx, RECIPES), *mlp_src, rust / "burn-mlp-capture", d / f"{m}.bpk"),
            outputs=(d / "capture.json",),
            needs=CARGO,
            after=("burn-convert",),
        ),
    ]
