"""The form registry: every way of deploying A1 that deploytui builds, runs and measures.

A form is data. The UI, the CLI and the report iterate over `FORMS`; nothing else names a form.
`argv` entries may use `{python}` (this venv's interpreter) and `{art}` (the artifacts folder).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deploytui import paths

PY_TORCH = "python-torch"
PY_ORT = "python-onnxruntime"
LIBTORCH = "libtorch"
NO_RUNTIME = "none"

RUNTIME_TITLES = {
    PY_TORCH: "Python + torch and its dependencies",
    PY_ORT: "Python + onnxruntime + numpy",
    LIBTORCH: "libtorch shared libraries",
    NO_RUNTIME: "none (system libraries only)",
}


@dataclass(frozen=True)
class Form:
    key: str
    family: str
    title: str
    model_files: tuple[str, ...]  # artifact paths (relative to artifacts/) that ship as the model
    program: str  # what runs it: an artifact path, or a description
    runtime: str  # one of the runtime keys above
    argv: tuple[str, ...]
    steps: tuple[str, ...]  # build steps that must have succeeded for the form to exist
    python_stages: bool = False  # the runner prints import/load/forward times and added modules
    tolerance: float = 1e-6
    note: str = ""

    def command(self) -> list[str]:
        art = str(paths.artifacts_dir())
        return [a.replace("{python}", paths.python()).replace("{art}", art) for a in self.argv]

    def ship_paths(self) -> list[Path]:
        """Every artifact that must be copied to the target machine (model files + program)."""
        files = list(self.model_files)
        if self.program.startswith("bin/"):
            files.append(self.program)
        return [paths.artifacts_dir() / f for f in files]


def _torch(key: str, title: str, mode: str, model_file: str, step: str, note: str = "") -> Form:
    return Form(
        key=key,
        family="PyTorch (Python)",
        title=title,
        model_files=(model_file,),
        program="load script (deploytui.runners.torch_runner)",
        runtime=PY_TORCH,
        argv=("{python}", "-m", "deploytui.runners.torch_runner", mode, "{art}/" + model_file),
        steps=(step,),
        python_stages=True,
        note=note,
    )


def _binary(
    key: str,
    family: str,
    title: str,
    exe: str,
    model_files: tuple[str, ...],
    runtime: str,
    steps: tuple[str, ...],
    note: str = "",
) -> Form:
    return Form(
        key=key,
        family=family,
        title=title,
        model_files=model_files,
        program="bin/" + exe,
        runtime=runtime,
        argv=("{art}/bin/" + exe, *("{art}/" + f for f in model_files)),
        steps=steps,
        note=note,
    )


FORMS: tuple[Form, ...] = (
    _torch(
        "torch-eager",
        "torch eager + safetensors",
        "eager",
        "a1.safetensors",
        "export-safetensors",
        "needs the model's Python source (deploytui.model) next to the weights",
    ),
    _torch("torchscript-script", "TorchScript (script)", "jit", "a1_script.pt", "export-torchscript"),
    _torch("torchscript-trace", "TorchScript (trace)", "jit", "a1_trace.pt", "export-torchscript"),
    _torch("torch-export", "torch.export .pt2", "export", "a1_export.pt2", "export-torch-export"),
    _torch("aoti-python", "AOTInductor .pt2", "aoti", "a1_aoti.pt2", "export-aoti"),
    _binary(
        "cpp-torchscript",
        "C++ libtorch",
        "C++ libtorch + TorchScript",
        "cpp-torchscript",
        ("a1_script.pt",),
        LIBTORCH,
        ("export-torchscript", "cpp-build"),
    ),
    _binary(
        "cpp-aoti",
        "C++ libtorch",
        "C++ libtorch + AOTInductor",
        "cpp-aoti",
        ("a1_aoti.pt2",),
        LIBTORCH,
        ("export-aoti", "cpp-build"),
        "the package's .so needs libtorch.so, which loads libtorch_cuda and the CUDA stack",
    ),
    _binary(
        "cpp-aoti-lean",
        "C++ libtorch",
        "C++ libtorch + AOTInductor (no libtorch.so)",
        "cpp-aoti",
        ("a1_aoti_lean.pt2",),
        LIBTORCH,
        ("export-aoti-lean", "cpp-build"),
        "exported with aot_inductor.link_libtorch=False: libtorch.so and the CUDA stack stay out",
    ),
    _binary(
        "burn-file",
        "burn",
        "burn infer-file + .bpk",
        "infer-file",
        ("a1.bpk",),
        NO_RUNTIME,
        ("burn-convert", "burn-deploy"),
    ),
    _binary(
        "burn-embed",
        "burn",
        "burn infer-embed",
        "infer-embed",
        (),
        NO_RUNTIME,
        ("burn-deploy",),
        "weights compiled in with include_bytes!: ships as one file",
    ),
    _binary(
        "burn-st",
        "burn",
        "burn infer-st + safetensors",
        "infer-st",
        ("a1.safetensors",),
        NO_RUNTIME,
        ("export-safetensors", "burn-deploy"),
    ),
    Form(
        key="burn-onnx-file",
        family="ONNX",
        title="burn-onnx generated, File",
        model_files=(),
        program="bin/burn-onnx-file",
        runtime=NO_RUNTIME,
        argv=("{art}/bin/burn-onnx-file",),
        steps=("burn-onnx-file",),
        note="Model::default() reads the .bpk at the absolute build-directory path baked in at build time",
    ),
    _binary(
        "burn-onnx-embed",
        "ONNX",
        "burn-onnx generated, Embedded",
        "burn-onnx-embed",
        (),
        NO_RUNTIME,
        ("burn-onnx-embed",),
        "LoadStrategy::Embedded: the .bpk is compiled into the binary",
    ),
    Form(
        key="onnxruntime",
        family="ONNX",
        title="ONNX Runtime (Python)",
        model_files=("a1.onnx",),
        program="load script (deploytui.runners.ort_runner)",
        runtime=PY_ORT,
        argv=("{python}", "-m", "deploytui.runners.ort_runner", "{art}/a1.onnx"),
        steps=("export-onnx",),
        python_stages=True,
    ),
)

BY_KEY: dict[str, Form] = {f.key: f for f in FORMS}
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(f.family for f in FORMS))


def get(key: str) -> Form:
    try:
        return BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown form {key!r}; known: {', '.join(BY_KEY)}") from None
