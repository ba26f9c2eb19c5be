"""OpenVINO: the model converted to an OpenVINO IR (.xml + .bin) and NNCF's int8 of it, each run
on the CPU plugin from Python (`openvino_runner`) and by cpp/openvino_run.cpp on the C API."""

from __future__ import annotations

import dataclasses

from deploytui.spec.forms import ELF_LINKAGE, Family, Form, Inspect, Runtime, int8, python_form

RUNNER = "deploytui.families.openvino.openvino_runner"
PY_OPENVINO = "python-openvino"
OPENVINO_LIB = "openvino-library"
OPENVINO_IR = "openvino-ir"  # Graph: the layers of an OpenVINO IR (.xml), read as XML
GROUP = "OpenVINO"
CPP_OPENVINO = "shared/bin/cpp-openvino"


def _openvino(stem: str, steps: tuple[str, ...], title: str, note: str) -> tuple[Form, Form]:
    """An OpenVINO IR (`{m}/{m}<stem>.xml` + `.bin`), run from Python and by cpp-openvino."""
    xml, ir = "{m}/{m}" + stem + ".xml", ("{m}/{m}" + stem + ".xml", "{m}/{m}" + stem + ".bin")
    graph = (Inspect(OPENVINO_IR, xml),)
    python = python_form(
        "openvino",
        GROUP,
        f"OpenVINO IR{title}, CPU plugin (Python)",
        RUNNER,
        PY_OPENVINO,
        ir,
        steps,
        graph,
        note + "; run at f32 inference precision",
    )
    native = Form(
        key="openvino-native",
        family=GROUP,
        title=f"OpenVINO IR{title}, CPU plugin, C API (no Python)",
        model_files=ir,
        executable=CPP_OPENVINO,
        runtime=OPENVINO_LIB,
        argv=("{art}/" + CPP_OPENVINO, "{art}/" + xml),  # the .bin beside it
        steps=(*steps, "cpp-openvino-build"),
        inspect=(Inspect(ELF_LINKAGE, CPP_OPENVINO), *graph),
        note=note + "; cpp/openvino_run.cpp on the wheel's libopenvino_c.so, f32 inference precision",
    )
    return python, native


def _forms() -> tuple[Form, ...]:
    """The fp32 IR and NNCF's int8 of it, each from Python and from C++."""
    python, native = _openvino(
        "_openvino",
        ("export-openvino",),
        "",
        "openvino.convert_model + save_model(compress_to_fp16=False)",
    )
    python8, native8 = _openvino(
        "_openvino_int8",
        ("export-openvino", "export-samples", "export-openvino-int8"),
        " int8 (NNCF)",
        "nncf.quantize of the fp32 IR, calibrated on the example + calibration inputs",
    )
    return (
        python,
        native,
        int8(dataclasses.replace(python8, key="openvino-int8"), "openvino"),
        int8(dataclasses.replace(native8, key="openvino-native-int8"), "openvino-native"),
    )


FORMS = _forms()

FAMILY = Family(
    name="openvino",
    forms=FORMS,
    runtimes=(
        Runtime(PY_OPENVINO, "Python + openvino + numpy", ("openvino", "numpy", "safetensors")),
        Runtime(
            OPENVINO_LIB,
            "OpenVINO's C library (the wheel's libopenvino_c.so, its runtime, CPU plugin; no Python)",
            wheel="openvino",
        ),
    ),
    plan="deploytui.families.openvino.plan",
    ship_scripts={RUNNER: RUNNER},  # itself
    kinds=(OPENVINO_IR,),
    sections="deploytui.families.openvino.sections",
)
