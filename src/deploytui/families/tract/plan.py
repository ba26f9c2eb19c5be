"""The tract steps (cargo_cmd drives them):
tract-build     shared: tract-run (tract-onnx, loads any .onnx at run time) into shared/bin/
tract-optimise  tract-run --nodes: tract loads and optimises <m>.onnx typed by the example
                inputs -> tract_nodes.txt (an operator tract lacks fails here, in tract's words)
"""

from __future__ import annotations

from deploytui.builder.context import BuildContext
from deploytui.builder.steps import Step
from deploytui.families.common.cargo import CARGO, DRIVER, argv, workspace
from deploytui.families.common.programs import at
from deploytui.families.tract.family import TRACT_RUN


def steps(ctx: BuildContext) -> list[Step]:
    rust, d, m = ctx.root / "rust", ctx.mdir, ctx.slug
    return [
        Step(
            name="tract-build",
            title="tract: build tract-run (loads any .onnx at run time; shared by every model)",
            argv=argv(ctx, "tract-build", ctx.shared, None),
            inputs=(*workspace(ctx), rust / "runner-io", rust / "tract-run"),
            outputs=(at(ctx, TRACT_RUN),),
            needs=CARGO,
            scope="shared",
        ),
        Step(
            name="tract-optimise",
            title=f"tract: load and optimise {m}.onnx, list its nodes",
            argv=argv(ctx, "tract-optimise", d, m),
            inputs=(
                DRIVER,
                at(ctx, TRACT_RUN),
                d / f"{m}.onnx",
                d / f"{m}.onnx.data",
                d / "inputs.safetensors",
            ),
            outputs=(d / "tract_nodes.txt",),
            after=("export-onnx", "tract-build"),
        ),
    ]
