"""The OpenVINO exports (openvino.convert_model's fp32 IR, NNCF's int8 of it) and
`cpp-openvino-build`: openvino_run.cpp compiled against the openvino wheel's C API."""

from __future__ import annotations

from deploytui.families.common.cpp import wheel_step
from deploytui.families.common.export_steps import Export, steps_of
from deploytui.families.common.samples import CALIBRATION_FILE
from deploytui.families.openvino import exports
from deploytui.families.openvino.family import CPP_OPENVINO
from deploytui.spec.context import BuildContext, package_dir
from deploytui.spec.steps import Step

EXPORTS = (
    Export(
        "export-openvino",
        exports.export_openvino,
        ("{m}_openvino.xml", "{m}_openvino.bin"),
        "OpenVINO IR, fp32 (openvino.convert_model, compress_to_fp16=False)",
    ),
    Export(
        "export-openvino-int8",
        exports.export_openvino_int8,
        ("{m}_openvino_int8.xml", "{m}_openvino_int8.bin"),
        "OpenVINO IR, int8 (NNCF post-training quantisation, calibrated)",
        after=("export-openvino", "export-samples"),
        reads=(CALIBRATION_FILE,),
    ),
)


def steps(ctx: BuildContext) -> list[Step]:
    return [
        *steps_of(ctx, EXPORTS),
        wheel_step(
            ctx,
            CPP_OPENVINO,
            "the openvino wheel's C API (no Python)",
            "--openvino",
            package_dir("openvino"),
            "openvino_run.cpp",
        ),
    ]
