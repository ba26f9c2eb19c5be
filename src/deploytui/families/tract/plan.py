"""The tract steps (cargo_steps.py does each, cargo_cmd drives them):
tract-build     shared: tract-run (tract-onnx, loads any .onnx at run time) into shared/bin/
tract-optimise  tract-run --nodes: tract loads and optimises <m>.onnx typed by the example
                inputs -> tract_nodes.txt (an operator tract lacks fails here, in tract's words)
"""

from __future__ import annotations

from deploytui.families.common.cargo import DRIVER, argv, recipes, shared_program
from deploytui.families.common.programs import at
from deploytui.families.tract.family import TRACT_RUN
from deploytui.spec.context import BuildContext
from deploytui.spec.steps import Step

RECIPES = recipes(__file__)


def steps(ctx: BuildContext) -> list[Step]:
    d, m = ctx.mdir, ctx.slug
    return [
        shared_program(
            ctx,
            "tract-build",
            "tract: build tract-run (loads any .onnx at run time; shared by every model)",
            "tract-run",
            TRACT_RUN,
            RECIPES,
        ),
        Step(
            name="tract-optimise",
            title=f"tract: load and optimise {m}.onnx, list its nodes",
            argv=argv(ctx, "tract-optimise", d, m),
            inputs=(
                *DRIVER,
                RECIPES,
                at(ctx, TRACT_RUN),
                d / f"{m}.onnx",
                d / f"{m}.onnx.data",
                d / "inputs.safetensors",
            ),
            outputs=(d / "tract_nodes.txt",),
            after=("export-onnx", "tract-build"),
        ),
    ]
