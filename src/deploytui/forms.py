"""The form registry: every way of deploying A1 that deploytui builds, runs and measures.

A form is data. The UI, the CLI, the report and the inspectors iterate over `FORMS` and read
its fields; nothing else names a form. `argv` entries may use `{python}` (this venv's
interpreter) and `{art}` (the artifacts folder).
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

# the installed distributions a Python runtime starts from (its size is their dependency closure)
RUNTIME_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    PY_TORCH: ("torch", "safetensors"),
    PY_ORT: ("onnxruntime", "numpy"),
}
# the wheel whose shared libraries a compiled runtime loads (its RECORD changes with them)
RUNTIME_WHEEL: dict[str, str] = {LIBTORCH: "torch"}

# What the inspectors look at (`Inspect.kind`); form_view has one section builder per kind.
ZIP_MEMBERS = "zip-members"  # Artifact: members of a .pt / .pt2 ZIP archive
SAFETENSORS_HEADER = "safetensors-header"  # Artifact: the tensors in a safetensors header
MODEL_SOURCE = "model-source"  # Code: a source file of this project that defines the model
TORCHSCRIPT_CODE = "torchscript-code"  # Code: the Python code TorchScript stored in its archive
EXPORT_CODE = "export-code"  # Code: torch.export's graph_module.code, as the build wrote it
AOTI_SOURCE = "aoti-source"  # Code: the C++ AOTInductor generated, inside the .pt2
GENERATED_RUST = "generated-rust"  # Code: the Rust burn-onnx generated from a1.onnx
EXPORT_GRAPH = "export-graph"  # Graph: the ATen graph torch.export recorded
ONNX_GRAPH = "onnx-graph"  # Graph: the ONNX graph (read in a subprocess)
BURN_GRAPHIR = "burn-graphir"  # Graph: burn's GraphIr captured on Device::capture
ELF_LINKAGE = "elf-linkage"  # Symbols: `ldd` of the compiled program
AOTI_SYMBOLS = "aoti-symbols"  # Symbols: `nm -u -D` and `ldd` of the .so inside an AOTI package
INSPECT_KINDS = (
    ZIP_MEMBERS,
    SAFETENSORS_HEADER,
    MODEL_SOURCE,
    TORCHSCRIPT_CODE,
    EXPORT_CODE,
    AOTI_SOURCE,
    GENERATED_RUST,
    EXPORT_GRAPH,
    ONNX_GRAPH,
    BURN_GRAPHIR,
    ELF_LINKAGE,
    AOTI_SYMBOLS,
)

# forms that bench/measure_vs_hyperfine.py cross-checks by default (quick to run many times)
CROSS_CHECK = ("onnxruntime", "burn-embed")


@dataclass(frozen=True)
class Inspect:
    """One thing to look inside: an inspector `kind` (above) applied to `path`.

    `path` is relative to the artifacts folder, except for MODEL_SOURCE (relative to the
    project). `title` overrides the section's default title.
    """

    kind: str
    path: str
    title: str = ""

    def __post_init__(self) -> None:
        if self.kind not in INSPECT_KINDS:
            raise ValueError(f"unknown inspector kind {self.kind!r}; known: {', '.join(INSPECT_KINDS)}")

    def file(self) -> Path:
        return (paths.ROOT if self.kind == MODEL_SOURCE else paths.artifacts_dir()) / self.path


@dataclass(frozen=True)
class Form:
    """One way of deploying A1.

    Exactly one of `executable` (a compiled program: its path relative to artifacts/, shipped)
    and `runner` (a Python form: the module of this project that loads the model and runs it)
    says where the program is.
    """

    key: str
    family: str
    title: str
    model_files: tuple[str, ...]  # artifact paths (relative to artifacts/) that ship as the model
    runtime: str  # one of the runtime keys above
    argv: tuple[str, ...]
    steps: tuple[str, ...]  # build steps that must have succeeded for the form to exist
    executable: str | None = None  # compiled forms: the program, relative to artifacts/
    runner: str | None = None  # Python forms: the runner module (deploytui.runners.*)
    inspect: tuple[Inspect, ...] = ()  # what the Artifact, Code, Graph and Symbols tabs show
    tolerance: float = 1e-6
    note: str = ""

    def __post_init__(self) -> None:
        if (self.executable is None) == (self.runner is None):
            raise ValueError(f"form {self.key}: give exactly one of executable and runner")

    @property
    def compiled(self) -> bool:
        return self.executable is not None

    def command(self) -> list[str]:
        art = str(paths.artifacts_dir())
        return [a.replace("{python}", paths.python()).replace("{art}", art) for a in self.argv]

    def ship_files(self) -> tuple[str, ...]:
        """What must be copied to the target machine (model files + program), relative to artifacts/."""
        return (*self.model_files, *((self.executable,) if self.executable else ()))

    def ship_paths(self) -> list[Path]:
        return [paths.artifacts_dir() / f for f in self.ship_files()]

    @property
    def probe_step(self) -> str:
        """The build step that records this form's runtime facts in the manifest: one per Python
        runtime (the installed distributions), one per compiled form (the libraries it loads)."""
        if self.runtime in RUNTIME_DISTRIBUTIONS:
            return f"probe-{self.runtime}"
        return f"probe-{self.key}"


def _torch(
    key: str, title: str, mode: str, model_file: str, step: str, inspect: tuple[Inspect, ...], note: str = ""
) -> Form:
    return Form(
        key=key,
        family="PyTorch (Python)",
        title=title,
        model_files=(model_file,),
        runner="deploytui.runners.torch_runner",
        runtime=PY_TORCH,
        argv=("{python}", "-m", "deploytui.runners.torch_runner", mode, "{art}/" + model_file),
        steps=(step,),
        inspect=inspect,
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
    inspect: tuple[Inspect, ...],
    note: str = "",
) -> Form:
    """A compiled program in artifacts/bin/, given its model files as arguments (and `ldd`-ed)."""
    program = "bin/" + exe
    return Form(
        key=key,
        family=family,
        title=title,
        model_files=model_files,
        executable=program,
        runtime=runtime,
        argv=("{art}/" + program, *("{art}/" + f for f in model_files)),
        steps=steps,
        inspect=(Inspect(ELF_LINKAGE, program), *inspect),
        note=note,
    )


def _zip_script(pt: str) -> tuple[Inspect, ...]:
    return (Inspect(ZIP_MEMBERS, pt), Inspect(TORCHSCRIPT_CODE, pt))


def _aoti(pt2: str) -> tuple[Inspect, ...]:
    return (
        Inspect(ZIP_MEMBERS, pt2),
        Inspect(AOTI_SOURCE, pt2),
        Inspect(EXPORT_GRAPH, "a1_export_graph.py"),
        Inspect(AOTI_SYMBOLS, pt2),
    )


_BURN = (Inspect(MODEL_SOURCE, "rust/store-deploy/src/lib.rs"), Inspect(BURN_GRAPHIR, "capture.json"))


def _burn_onnx(rs: str, strategy: str) -> tuple[Inspect, ...]:
    return (
        Inspect(GENERATED_RUST, rs, f"a1.rs generated by burn-onnx (LoadStrategy::{strategy})"),
        Inspect(ONNX_GRAPH, "a1.onnx"),
    )


FORMS: tuple[Form, ...] = (
    _torch(
        "torch-eager",
        "torch eager + safetensors",
        "eager",
        "a1.safetensors",
        "export-safetensors",
        (
            Inspect(SAFETENSORS_HEADER, "a1.safetensors"),
            Inspect(MODEL_SOURCE, "src/deploytui/model.py", "deploytui/model.py (ships with the weights)"),
        ),
        "needs the model's Python source (deploytui.model) next to the weights",
    ),
    _torch(
        "torchscript-script",
        "TorchScript (script)",
        "jit",
        "a1_script.pt",
        "export-torchscript",
        _zip_script("a1_script.pt"),
    ),
    _torch(
        "torchscript-trace",
        "TorchScript (trace)",
        "jit",
        "a1_trace.pt",
        "export-torchscript",
        _zip_script("a1_trace.pt"),
    ),
    _torch(
        "torch-export",
        "torch.export .pt2",
        "export",
        "a1_export.pt2",
        "export-torch-export",
        (
            Inspect(ZIP_MEMBERS, "a1_export.pt2"),
            Inspect(EXPORT_CODE, "a1_export_graph.py"),
            Inspect(EXPORT_GRAPH, "a1_export_graph.py"),
        ),
    ),
    _torch("aoti-python", "AOTInductor .pt2", "aoti", "a1_aoti.pt2", "export-aoti", _aoti("a1_aoti.pt2")),
    _binary(
        "cpp-torchscript",
        "C++ libtorch",
        "C++ libtorch + TorchScript",
        "cpp-torchscript",
        ("a1_script.pt",),
        LIBTORCH,
        ("export-torchscript", "cpp-build"),
        _zip_script("a1_script.pt"),
    ),
    _binary(
        "cpp-aoti",
        "C++ libtorch",
        "C++ libtorch + AOTInductor",
        "cpp-aoti",
        ("a1_aoti.pt2",),
        LIBTORCH,
        ("export-aoti", "cpp-build"),
        _aoti("a1_aoti.pt2"),
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
        _aoti("a1_aoti_lean.pt2"),
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
        _BURN,
    ),
    _binary(
        "burn-embed",
        "burn",
        "burn infer-embed",
        "infer-embed",
        (),
        NO_RUNTIME,
        ("burn-deploy",),
        _BURN,
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
        (Inspect(SAFETENSORS_HEADER, "a1.safetensors"), *_BURN),
    ),
    _binary(
        "burn-onnx-file",
        "ONNX",
        "burn-onnx generated, File",
        "burn-onnx-file",
        (),
        NO_RUNTIME,
        ("burn-onnx-file",),
        _burn_onnx("onnx/a1.rs", "File"),
        "Model::default() reads the .bpk at the absolute build-directory path baked in at build time",
    ),
    _binary(
        "burn-onnx-embed",
        "ONNX",
        "burn-onnx generated, Embedded",
        "burn-onnx-embed",
        (),
        NO_RUNTIME,
        ("burn-onnx-embed",),
        _burn_onnx("onnx/a1_embed.rs", "Embedded"),
        "LoadStrategy::Embedded: the .bpk is compiled into the binary",
    ),
    _binary(
        "burn-onnx-bpk",
        "ONNX",
        "burn-onnx generated, from_file + .bpk",
        "burn-onnx-bpk",
        ("bin/a1_onnx.bpk",),
        NO_RUNTIME,
        ("burn-onnx-bpk",),
        _burn_onnx("onnx/a1.rs", "File"),
        "Model::from_file(MODEL_FILE): the generated .bpk ships beside the binary, so the pair runs anywhere",
    ),
    Form(
        key="onnxruntime",
        family="ONNX",
        title="ONNX Runtime (Python)",
        model_files=("a1.onnx",),
        runner="deploytui.runners.ort_runner",
        runtime=PY_ORT,
        argv=("{python}", "-m", "deploytui.runners.ort_runner", "{art}/a1.onnx"),
        steps=("export-onnx",),
        inspect=(Inspect(ONNX_GRAPH, "a1.onnx"),),
    ),
)

BY_KEY: dict[str, Form] = {f.key: f for f in FORMS}
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(f.family for f in FORMS))


def get(key: str) -> Form:
    try:
        return BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown form {key!r}; known: {', '.join(BY_KEY)}") from None
