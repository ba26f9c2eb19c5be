"""PyTorch from Python: torch eager + safetensors, TorchScript, torch.export, AOTInductor (and its
torchao int8), each loaded by `torch_runner`. The exports start every other family's artifacts."""

from __future__ import annotations

import dataclasses

from deploytui.spec.a1_page import MIB, Claim, Figure
from deploytui.spec.forms import (
    MODEL_SOURCE,
    SAFETENSORS_HEADER,
    ZIP_MEMBERS,
    Family,
    Form,
    Inspect,
    Runtime,
    int8,
)

RUNNER = "deploytui.families.pytorch.torch_runner"
TORCHSCRIPT_CODE = "torchscript-code"  # Code: the Python code TorchScript stored in its archive
EXPORT_CODE = "export-code"  # Code: torch.export's graph_module.code, as the build wrote it
AOTI_SOURCE = "aoti-source"  # Code: the C++ AOTInductor generated, inside the .pt2
EXPORT_GRAPH = "export-graph"  # Graph: the ATen graph torch.export recorded
AOTI_SYMBOLS = "aoti-symbols"  # Symbols: `nm -u -D` and `ldd` of the .so inside an AOTI package
PY_TORCH = "python-torch"
GROUP = "PyTorch (Python)"
AOTI_INT8_NOTE = (
    "torchao quantize_(Int8DynamicActivationInt8WeightConfig) on the Linear layers, then AOTInductor"
)


def zip_script(pt: str) -> tuple[Inspect, ...]:
    return (Inspect(ZIP_MEMBERS, pt), Inspect(TORCHSCRIPT_CODE, pt))


def aoti(pt2: str) -> tuple[Inspect, ...]:
    return (
        Inspect(ZIP_MEMBERS, pt2),
        Inspect(AOTI_SOURCE, pt2),
        Inspect(EXPORT_GRAPH, "{m}/{m}_export_graph.py"),
        Inspect(AOTI_SYMBOLS, pt2),
    )


def aoti_int8(pt2: str) -> tuple[Inspect, ...]:
    return tuple(i for i in aoti(pt2) if i.kind != EXPORT_GRAPH)  # the fp32 graph is not its


def _torch(
    key: str, title: str, mode: str, model_file: str, step: str, inspect: tuple[Inspect, ...], note: str = ""
) -> Form:
    extra = ("--model", "{model}") if mode == "eager" else ()
    return Form(
        key=key,
        family=GROUP,
        title=title,
        model_files=(model_file,),
        runner=RUNNER,
        runtime=PY_TORCH,
        argv=("{python}", "-m", RUNNER, mode, "{art}/" + model_file, *extra),
        steps=(step,),
        inspect=inspect,
        note=note,
    )


def _aoti_int8() -> Form:
    pt2, steps = "{m}/{m}_aoti_int8.pt2", ("export-samples", "export-aoti-int8")
    python = dataclasses.replace(
        _torch("aoti-python-int8", "AOTInductor .pt2, torchao int8", "aoti", pt2, steps[-1], aoti_int8(pt2)),
        steps=steps,
        note=AOTI_INT8_NOTE,
    )
    return int8(python, "aoti-python")


FORMS: tuple[Form, ...] = (
    _torch(
        "torch-eager",
        "torch eager + safetensors",
        "eager",
        "{m}/{m}.safetensors",
        "export-model",
        (
            Inspect(SAFETENSORS_HEADER, "{m}/{m}.safetensors"),
            Inspect(MODEL_SOURCE, "", "the model's source (ships with the weights)"),
        ),
        "needs the model's Python source next to the weights",
    ),
    _torch(
        "torchscript-script",
        "TorchScript (script)",
        "jit",
        "{m}/{m}_script.pt",
        "export-script",
        zip_script("{m}/{m}_script.pt"),
    ),
    _torch(
        "torchscript-trace",
        "TorchScript (trace)",
        "jit",
        "{m}/{m}_trace.pt",
        "export-trace",
        zip_script("{m}/{m}_trace.pt"),
    ),
    _torch(
        "torch-export",
        "torch.export .pt2",
        "export",
        "{m}/{m}_export.pt2",
        "export-torch-export",
        (
            Inspect(ZIP_MEMBERS, "{m}/{m}_export.pt2"),
            Inspect(EXPORT_CODE, "{m}/{m}_export_graph.py"),
            Inspect(EXPORT_GRAPH, "{m}/{m}_export_graph.py"),
        ),
    ),
    _torch(
        "aoti-python",
        "AOTInductor .pt2",
        "aoti",
        "{m}/{m}_aoti.pt2",
        "export-aoti",
        aoti("{m}/{m}_aoti.pt2"),
    ),
    _aoti_int8(),
)


# the reference page's figures and claims on this family's forms (deploytui.spec.a1_page)
PAGE_FIGURES = (
    Figure("start-up", "torch-eager", "start-up median (min)", "659.3 ms (649.4 ms)", "start"),
    Figure("start-up", "torchscript-script", "start-up median (min)", "682.4 ms (666.1 ms)", "start"),
    Figure("start-up", "torch-export", "start-up median (min)", "1264.5 ms (1244.9 ms)", "start"),
    Figure("start-up", "aoti-python", "start-up median (min)", "1313.5 ms (1280.6 ms)", "start"),
    Figure("peak RSS", "torch-eager", "peak RSS", "208.7 MiB", "rss"),
    Figure("peak RSS", "torchscript-script", "peak RSS", "213.0 MiB", "rss"),
    Figure("peak RSS", "torch-export", "peak RSS", "291.4 MiB", "rss"),
    Figure("peak RSS", "aoti-python", "peak RSS", "290.5 MiB", "rss"),
    Figure("sizes", "torch-eager", "a1.safetensors", "540 B", "file:a1/a1.safetensors"),
    Figure("sizes", "torchscript-script", "a1_script.pt", "5 507 B", "file:a1/a1_script.pt"),
    Figure("sizes", "torchscript-trace", "a1_trace.pt", "6 666 B", "file:a1/a1_trace.pt"),
    Figure("sizes", "torch-export", "a1_export.pt2", "11 403 B", "file:a1/a1_export.pt2"),
    Figure("sizes", "aoti-python", "a1_aoti.pt2", "356 163 B", "file:a1/a1_aoti.pt2"),
    Figure("sizes", "torch-eager", "runtime: Python + torch", "728.5 MiB", "runtime"),
    Figure("diffs", "torch-eager", "max abs diff", "0", "diff"),
    Figure("diffs", "torchscript-script", "max abs diff", "0", "diff"),
    Figure("diffs", "torch-export", "max abs diff", "0", "diff"),
    Figure("diffs", "aoti-python", "max abs diff", "0", "diff"),
    Figure("stages", "torch-eager", "import torch", "525.5 ms", "stage:import"),
    Figure("stages", "torch-eager", "load", "2.2 ms", "stage:load"),
    Figure("stages", "torch-eager", "first forward", "0.08 ms", "stage:first_forward"),
    Figure("stages", "torchscript-script", "import torch", "525.2 ms", "stage:import"),
    Figure("stages", "torchscript-script", "load", "5.9 ms", "stage:load"),
    Figure("stages", "torchscript-script", "first forward", "14.37 ms", "stage:first_forward"),
    Figure("stages", "torch-export", "import torch", "511.0 ms", "stage:import"),
    Figure("stages", "torch-export", "load", "475.4 ms", "stage:load"),
    Figure("stages", "torch-export", "first forward", "0.27 ms", "stage:first_forward"),
    Figure("stages", "aoti-python", "import torch", "512.1 ms", "stage:import"),
    Figure("stages", "aoti-python", "load", "482.2 ms", "stage:load"),
    Figure("stages", "aoti-python", "first forward", "0.61 ms", "stage:first_forward"),
    Figure("modules added by load", "torch-export", "modules added", "868", "modules"),
    Figure("modules added by load", "torch-export", "of them sympy", "420", "modules:sympy"),
    Figure(
        "modules added by load", "torch-export", "of them torch.distributed", "115", "torch:torch.distributed"
    ),
    Figure("modules added by load", "torch-export", "of them torch._dynamo", "97", "torch:torch._dynamo"),
    Figure("modules added by load", "aoti-python", "modules added", "896", "modules"),
)
PAGE_CLAIMS = (
    Claim(
        "python",
        "starts twice as fast as torch.export",
        ("torch-export", "torch-eager"),
        "startup-ratio",
        2.0,
        "2× (1264.5 ÷ 659.3 ms)",
    ),
    Claim(
        "python",
        "starts twice as fast as AOTInductor",
        ("aoti-python", "torch-eager"),
        "startup-ratio",
        2.0,
        "2× (1313.5 ÷ 659.3 ms)",
    ),
    Claim(
        "python",
        "about 80 MiB less than torch.export",
        ("torch-export", "torch-eager"),
        "rss-delta",
        80 * MIB,
        "~80 MiB (291.4 − 208.7 MiB)",
    ),
    Claim(
        "python",
        "about 80 MiB less than AOTInductor",
        ("aoti-python", "torch-eager"),
        "rss-delta",
        80 * MIB,
        "~80 MiB (290.5 − 208.7 MiB)",
    ),
    Claim("python", "bit-identical to torch.export's outputs", ("torch-export",), "diff", 0.0, "0", "equal"),
    Claim("python", "bit-identical to AOTInductor's outputs", ("aoti-python",), "diff", 0.0, "0", "equal"),
)
PAGE_ADVICE = (("python", "torch-eager"),)  # (situation, form) the page's advice names


FAMILY = Family(
    name="pytorch",
    forms=FORMS,
    runtimes=(
        # safetensors: the runner protocol's files; its torch half writes them through numpy (a
        # bundle without numpy fails at save_file: found by the isolated ship check)
        Runtime(PY_TORCH, "Python + torch and its dependencies", ("torch", "safetensors", "numpy")),
    ),
    plan="deploytui.families.pytorch.plan",
    dynamic={
        "{m}/{m}_export.pt2": ("{m}/{m}_export_dyn.pt2", "export-dyn-torch-export", "export-torch-export"),
        "{m}/{m}_aoti.pt2": ("{m}/{m}_aoti_dyn.pt2", "export-dyn-aoti", "export-aoti"),
        "{m}/{m}_aoti_lean.pt2": ("{m}/{m}_aoti_lean_dyn.pt2", "export-dyn-aoti-lean", "export-aoti-lean"),
    },
    ship_scripts={RUNNER: "deploytui.runners.torch_bundle"},  # no model seam: py/model.json
    fidelity=(("torch-eager", "torch.utils.benchmark.Timer"),),
    page_figures=PAGE_FIGURES,
    page_claims=PAGE_CLAIMS,
    page_advice=PAGE_ADVICE,
    kinds=(TORCHSCRIPT_CODE, EXPORT_CODE, AOTI_SOURCE, EXPORT_GRAPH, AOTI_SYMBOLS),
    sections="deploytui.families.pytorch.sections",
)
