"""The torch family's build steps: the model's weights and example, and the TorchScript,
torch.export and AOTInductor exports (the C++ forms of libtorch load the same files)."""

from __future__ import annotations

from deploytui.families.common import samples
from deploytui.families.common.export_steps import Export, steps_of
from deploytui.families.pytorch import exports
from deploytui.spec.context import BuildContext
from deploytui.spec.steps import SAMPLES_STEP, Step

EXPORTS = (
    Export(
        "export-model",
        exports.export_model,
        ("{m}.safetensors", "inputs.safetensors", "reference.safetensors", "model.json"),
        "weights, example inputs, eager's outputs",
    ),
    Export("export-script", exports.export_script, ("{m}_script.pt",), "TorchScript (script)"),
    Export("export-trace", exports.export_trace, ("{m}_trace.pt",), "TorchScript (trace)"),
    Export(
        "export-torch-export",
        exports.export_torch_export,
        ("{m}_export.pt2", "{m}_export_graph.py"),
        "torch.export .pt2",
    ),
    Export(
        "export-aoti",
        exports.export_aoti,
        ("{m}_aoti.pt2",),
        "AOTInductor package (compiles C++, ~30 s cold)",
        compiles=True,
    ),
    Export(
        "export-aoti-lean",
        exports.export_aoti_lean,
        ("{m}_aoti_lean.pt2",),
        "AOTInductor package, link_libtorch=False (~20 s cold)",
        compiles=True,
    ),
    Export(
        SAMPLES_STEP,
        samples.export_samples,
        (f"{samples.ACCURACY_DIR}/{samples.SET_FILE}", samples.CALIBRATION_FILE),
        "the evaluation set and the calibration set: the user's --data split in two, else drawn",
        takes_data=True,
    ),
    Export(
        "export-aoti-int8",
        exports.export_aoti_int8,
        ("{m}_aoti_int8.pt2",),
        "AOTInductor package of torchao's dynamic int8 (compiles C++, ~30 s cold)",
        compiles=True,
    ),
    # the dynamic-batch exports (`bench --batch` runs them; built on demand: registry.for_batch)
    Export(
        "export-dyn-torch-export",
        exports.export_dyn_torch_export,
        ("{m}_export_dyn.pt2",),
        "torch.export, dynamic batch",
        on_demand=True,
    ),
    Export(
        "export-dyn-aoti",
        exports.export_dyn_aoti,
        ("{m}_aoti_dyn.pt2",),
        "AOTInductor package, dynamic batch (~30 s)",
        compiles=True,
        on_demand=True,
    ),
    Export(
        "export-dyn-aoti-lean",
        exports.export_dyn_aoti_lean,
        ("{m}_aoti_lean_dyn.pt2",),
        "AOTInductor package, link_libtorch=False, dynamic batch (~20 s)",
        compiles=True,
        on_demand=True,
    ),
)


def steps(ctx: BuildContext) -> list[Step]:
    return steps_of(ctx, EXPORTS)
