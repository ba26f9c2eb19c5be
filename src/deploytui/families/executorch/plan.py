"""The ExecuTorch exports (the .pte, its PT2E int8, the dynamic-batch .pte built on demand) and
`cpp-executorch-build`: executorch_run.cpp compiled against the executorch wheel's headers and
shared libraries (no libtorch)."""

from __future__ import annotations

from deploytui.families.common.cpp import wheel_step
from deploytui.families.common.export_steps import Export, steps_of
from deploytui.families.common.samples import CALIBRATION_FILE
from deploytui.families.executorch import exports
from deploytui.families.executorch.family import CPP_EXECUTORCH
from deploytui.spec.context import BuildContext, package_dir
from deploytui.spec.steps import Step

EXPORTS = (
    Export(
        "export-executorch",
        exports.export_executorch,
        ("{m}.pte", "{m}_delegation.json"),
        "ExecuTorch .pte, XNNPACK partitioner (lowering to XNNPACK: ~5-15 s)",
    ),
    Export(
        "export-executorch-int8",
        exports.export_executorch_int8,
        ("{m}_int8.pte", "{m}_int8_delegation.json"),
        "ExecuTorch .pte, XNNPACK int8 (PT2E XNNPACKQuantizer, calibrated)",
        after=("export-samples",),
        reads=(CALIBRATION_FILE,),
    ),
    Export(
        "export-dyn-executorch",
        exports.export_dyn_executorch,
        ("{m}_dyn.pte",),
        "ExecuTorch .pte, dynamic batch",
        on_demand=True,
    ),
)


def steps(ctx: BuildContext) -> list[Step]:
    return [
        *steps_of(ctx, EXPORTS),
        wheel_step(
            ctx,
            CPP_EXECUTORCH,
            "ExecuTorch's C++ runtime (no libtorch)",
            "--executorch",
            package_dir("executorch"),
            "executorch_run.cpp",
        ),
    ]
