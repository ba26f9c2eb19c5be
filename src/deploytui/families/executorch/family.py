"""ExecuTorch: the model lowered to XNNPACK in a .pte (and its PT2E int8), run by executorch's
Python runtime (`executorch_runner`) and by cpp/executorch_run.cpp on the wheel's libraries."""

from __future__ import annotations

from deploytui.spec.forms import Family, Form, Inspect, Runtime, binary, int8, python_form

RUNNER = "deploytui.families.executorch.executorch_runner"
PY_EXECUTORCH = "python-executorch"
EXECUTORCH_LIB = "executorch-libraries"
PTE_DELEGATION = "pte-delegation"  # Graph: operators XNNPACK took / left, ExecuTorch's report at export
GROUP = "ExecuTorch"
CPP_EXECUTORCH = "shared/bin/cpp-executorch"
PTE = "{m}/{m}.pte"
INT8_PTE = "{m}/{m}_int8.pte"
INT8_STEPS = ("export-samples", "export-executorch-int8")
INT8_REPORT = (Inspect(PTE_DELEGATION, "{m}/{m}_int8_delegation.json"),)

FORMS: tuple[Form, ...] = (
    Form(
        key="executorch",
        family=GROUP,
        title="ExecuTorch .pte, XNNPACK (Python runtime)",
        model_files=(PTE,),
        runner=RUNNER,
        runtime=PY_EXECUTORCH,
        argv=("{python}", "-m", RUNNER, "{art}/" + PTE),
        steps=("export-executorch",),
        inspect=(Inspect(PTE_DELEGATION, "{m}/{m}_delegation.json"),),
        note="torch.export + to_edge_transform_and_lower(XnnpackPartitioner); run by executorch.runtime",
    ),
    binary(
        "cpp-executorch",
        GROUP,
        "C++ ExecuTorch .pte, XNNPACK (no Python, no libtorch)",
        CPP_EXECUTORCH,
        (PTE,),
        EXECUTORCH_LIB,
        ("export-executorch", "cpp-executorch-build"),
        (Inspect(PTE_DELEGATION, "{m}/{m}_delegation.json"),),
        "extension::Module on the wheel's libexecutorch.so, XNNPACK delegate and optimized kernels",
    ),
    int8(
        python_form(
            "executorch-int8",
            GROUP,
            "ExecuTorch .pte, XNNPACK int8 (Python runtime)",
            RUNNER,
            PY_EXECUTORCH,
            (INT8_PTE,),
            INT8_STEPS,
            INT8_REPORT,
            "XNNPACKQuantizer (symmetric, per-channel) calibrated on the example + calibration inputs",
        ),
        "executorch",
    ),
    int8(
        binary(
            "cpp-executorch-int8",
            GROUP,
            "C++ ExecuTorch .pte, XNNPACK int8 (no Python, no libtorch)",
            CPP_EXECUTORCH,
            (INT8_PTE,),
            EXECUTORCH_LIB,
            (*INT8_STEPS, "cpp-executorch-build"),
            INT8_REPORT,
            "the cpp-executorch program on the int8 .pte",
        ),
        "cpp-executorch",
    ),
)

FAMILY = Family(
    name="executorch",
    forms=FORMS,
    runtimes=(
        Runtime(
            PY_EXECUTORCH,
            "Python + executorch (and the torch it takes tensors from) and their dependencies",
            ("executorch", "torch", "safetensors", "numpy"),
        ),
        Runtime(
            EXECUTORCH_LIB,
            "ExecuTorch's C++ runtime (the wheel's libexecutorch*.so, no Python, no libtorch)",
            wheel="executorch",
        ),
    ),
    plan="deploytui.families.executorch.plan",
    dynamic={PTE: ("{m}/{m}_dyn.pte", "export-dyn-executorch", "export-executorch")},
    ship_scripts={RUNNER: RUNNER},  # + torch_bundle
    kinds=(PTE_DELEGATION,),
    sections="deploytui.families.executorch.sections",
)
