"""tract: pure Rust (rust/tract-run), one program for every model: it reads, types and optimises
the onnxruntime family's .onnx (or its dynamic int8) at start-up."""

from __future__ import annotations

from deploytui.families.onnxruntime.family import INT8, INT8_GRAPH, INT8_STEPS, ONNX, ONNX_DATA
from deploytui.spec.forms import NO_RUNTIME, ONNX_GRAPH, Family, Form, Inspect, binary, int8

TRACT_NODES = "tract-nodes"  # Graph: the nodes of tract's optimised model, as the build listed them
GROUP = "ONNX"
TRACT_RUN = "shared/bin/tract-run"

FORMS: tuple[Form, ...] = (
    binary(
        "tract",
        GROUP,
        "tract (pure Rust, loads the .onnx at run time)",
        TRACT_RUN,
        (ONNX,),
        NO_RUNTIME,
        ("export-onnx", "tract-build", "tract-optimise"),
        (Inspect(TRACT_NODES, "{m}/tract_nodes.txt"), Inspect(ONNX_GRAPH, ONNX)),
        "one binary for every model: the .onnx is read, typed and optimised at start-up",
        optional_files=(ONNX_DATA,),
    ),
    int8(
        binary(
            "tract-int8",
            GROUP,
            "tract, dynamic int8 .onnx",
            TRACT_RUN,
            (INT8,),
            NO_RUNTIME,
            (*INT8_STEPS, "tract-build"),
            INT8_GRAPH,
            "tract on the dynamic int8 .onnx, where its operators allow",
        ),
        "tract",
    ),
)

FAMILY = Family(
    kinds=(TRACT_NODES,),
    sections="deploytui.families.tract.sections",
    name="tract",
    forms=FORMS,
    plan="deploytui.families.tract.plan",
)
