"""ONNX Runtime: the model's .onnx (the export the burn-onnx and tract families read too) run from
Python (`ort_runner`) and without Python (rust/ort-run on the wheel's libonnxruntime.so), and
ONNX Runtime's dynamic int8 of it."""

from __future__ import annotations

from deploytui.spec.a1_page import Figure
from deploytui.spec.forms import ONNX_GRAPH, Family, Form, Inspect, Runtime, binary, int8, python_form

RUNNER = "deploytui.families.onnxruntime.ort_runner"
PY_ORT = "python-onnxruntime"
ORT_LIB = "onnxruntime-library"
GROUP = "ONNX"
ORT_RUN = "shared/bin/ort-run"
ONNX = "{m}/{m}.onnx"
ONNX_DATA = "{m}/{m}.onnx.data"  # the weights beside the .onnx when the exporter puts them there
INT8 = "{m}/{m}_int8.onnx"
INT8_STEPS = ("export-onnx", "export-onnx-int8", "export-samples")
INT8_GRAPH = (Inspect(ONNX_GRAPH, INT8, "the int8 ONNX graph (ConvInteger, MatMulInteger, …)"),)

FORMS: tuple[Form, ...] = (
    Form(
        key="onnxruntime",
        family=GROUP,
        title="ONNX Runtime (Python)",
        model_files=(ONNX,),
        optional_files=(ONNX_DATA,),
        runner=RUNNER,
        runtime=PY_ORT,
        argv=("{python}", "-m", RUNNER, "{art}/" + ONNX),
        steps=("export-onnx",),
        inspect=(Inspect(ONNX_GRAPH, ONNX),),
    ),
    binary(
        "onnxruntime-native",
        GROUP,
        "ONNX Runtime without Python (Rust ort)",
        ORT_RUN,
        (ONNX,),
        ORT_LIB,
        ("export-onnx", "ort-build"),
        (Inspect(ONNX_GRAPH, ONNX),),
        "the `ort` crate loads the wheel's libonnxruntime.so at start-up (stage import); load = the session",
        optional_files=(ONNX_DATA,),
    ),
    int8(
        python_form(
            "onnxruntime-int8",
            GROUP,
            "ONNX Runtime (Python), dynamic int8",
            RUNNER,
            PY_ORT,
            (INT8,),
            INT8_STEPS,
            INT8_GRAPH,
            "quantize_dynamic(weight_type=QInt8): int8 weights, activations quantised at run time",
        ),
        "onnxruntime",
    ),
    int8(
        binary(
            "onnxruntime-native-int8",
            GROUP,
            "ONNX Runtime without Python (Rust ort), dynamic int8",
            ORT_RUN,
            (INT8,),
            ORT_LIB,
            (*INT8_STEPS, "ort-build"),
            INT8_GRAPH,
            "the onnxruntime-native program on the dynamic int8 .onnx",
        ),
        "onnxruntime-native",
    ),
)


# the reference page's figures and claims on this family's forms (deploytui.spec.a1_page)
PAGE_FIGURES = (Figure("sizes", "onnxruntime", "a1.onnx", "4.1 KiB", "file:a1/a1.onnx"),)


FAMILY = Family(
    name="onnxruntime",
    forms=FORMS,
    runtimes=(
        Runtime(PY_ORT, "Python + onnxruntime + numpy", ("onnxruntime", "numpy", "safetensors")),
        Runtime(
            ORT_LIB,
            "ONNX Runtime's C library (the wheel's libonnxruntime.so, no Python)",
            wheel="onnxruntime",
        ),
    ),
    plan="deploytui.families.onnxruntime.plan",
    dynamic={
        ONNX: ("{m}/{m}_dyn.onnx", "export-dyn-onnx", "export-onnx"),
        ONNX_DATA: ("{m}/{m}_dyn.onnx.data", "export-dyn-onnx", "export-onnx"),
    },
    ship_scripts={RUNNER: RUNNER},  # itself
    cross_check=("onnxruntime",),
    fidelity=(("onnxruntime", "session.run loop"),),
    page_figures=PAGE_FIGURES,
)
