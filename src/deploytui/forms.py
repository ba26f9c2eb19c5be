"""The form registry: every way of deploying a model that deploytui builds, runs and measures.

A form is data. The UI, the CLI, the report and the inspectors iterate over `FORMS` and read
its fields; nothing else names a form. Paths are relative to the artifacts root and templated
per model: `{m}` is the model's slug (its folder, and the stem of its files), `shared/` holds
the model-independent programs. `argv` entries may also use `{python}` (this venv's
interpreter), `{art}` (the artifacts root) and `{model}` (the model as `--model` spells it).
`bench` appends the runner protocol's `--inputs IN --outputs OUT --repeat K`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from pathlib import Path

from deploytui import paths
from deploytui.models import LIBRARY_KINDS, ModelRef, has_mlp_layout
from deploytui.precision import FP32, INT8, INT8_BUDGET, Budget

PY_TORCH = "python-torch"
PY_ORT = "python-onnxruntime"
PY_EXECUTORCH = "python-executorch"
LIBTORCH = "libtorch"
ORT_LIB = "onnxruntime-library"
EXECUTORCH_LIB = "executorch-libraries"
NO_RUNTIME = "none"
PY_OPENVINO = "python-openvino"
OPENVINO_LIB = "openvino-library"

RUNTIME_TITLES = {
    PY_TORCH: "Python + torch and its dependencies",
    PY_ORT: "Python + onnxruntime + numpy",
    PY_EXECUTORCH: "Python + executorch (and the torch it takes tensors from) and their dependencies",
    LIBTORCH: "libtorch shared libraries",
    ORT_LIB: "ONNX Runtime's C library (the wheel's libonnxruntime.so, no Python)",
    EXECUTORCH_LIB: "ExecuTorch's C++ runtime (the wheel's libexecutorch*.so, no Python, no libtorch)",
    NO_RUNTIME: "none (system libraries only)",
    PY_OPENVINO: "Python + openvino + numpy",
    OPENVINO_LIB: "OpenVINO's C library (the wheel's libopenvino_c.so, its runtime, CPU plugin; no Python)",
}

# the installed distributions a Python runtime starts from (its size is their dependency closure)
RUNTIME_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    # safetensors: the runner protocol's files; its torch half writes them through numpy (a
    # bundle without numpy fails at save_file: found by the isolated ship check)
    PY_TORCH: ("torch", "safetensors", "numpy"),
    PY_ORT: ("onnxruntime", "numpy", "safetensors"),
    PY_EXECUTORCH: ("executorch", "torch", "safetensors", "numpy"),
    PY_OPENVINO: ("openvino", "numpy", "safetensors"),
}
# the wheel whose shared libraries a compiled runtime loads (its RECORD changes with them)
RUNTIME_WHEEL: dict[str, str] = {
    LIBTORCH: "torch",
    ORT_LIB: "onnxruntime",
    EXECUTORCH_LIB: "executorch",
    OPENVINO_LIB: "openvino",
}

# What the inspectors look at (`Inspect.kind`); form_view has one section builder per kind.
ZIP_MEMBERS = "zip-members"  # Artifact: members of a .pt / .pt2 ZIP archive
SAFETENSORS_HEADER = "safetensors-header"  # Artifact: the tensors in a safetensors header
MODEL_SOURCE = "model-source"  # Code: a source file of this project that defines the model
TORCHSCRIPT_CODE = "torchscript-code"  # Code: the Python code TorchScript stored in its archive
EXPORT_CODE = "export-code"  # Code: torch.export's graph_module.code, as the build wrote it
AOTI_SOURCE = "aoti-source"  # Code: the C++ AOTInductor generated, inside the .pt2
GENERATED_RUST = "generated-rust"  # Code: the Rust burn-onnx generated from the model's .onnx
EXPORT_GRAPH = "export-graph"  # Graph: the ATen graph torch.export recorded
ONNX_GRAPH = "onnx-graph"  # Graph: the ONNX graph (read in a subprocess)
BURN_GRAPHIR = "burn-graphir"  # Graph: burn's GraphIr captured on Device::capture
ELF_LINKAGE = "elf-linkage"  # Symbols: `ldd` of the compiled program
AOTI_SYMBOLS = "aoti-symbols"  # Symbols: `nm -u -D` and `ldd` of the .so inside an AOTI package
TRACT_NODES = "tract-nodes"  # Graph: the nodes of tract's optimised model, as the build listed them
PTE_DELEGATION = "pte-delegation"  # Graph: operators XNNPACK took / left, ExecuTorch's report at export
OPENVINO_IR = "openvino-ir"  # Graph: the layers of an OpenVINO IR (.xml), read as XML
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
    TRACT_NODES,
    PTE_DELEGATION,
    OPENVINO_IR,
)

# forms that bench/measure_vs_hyperfine.py cross-checks by default (quick to run many times)
CROSS_CHECK = ("onnxruntime", "burn-embed")
# forms whose per-forward p50 bench/serve_fidelity.py checks against an anchor, in this order
FIDELITY = (("torch-eager", "torch.utils.benchmark.Timer"), ("onnxruntime", "session.run loop"))


MLP_ONLY = "not applicable: the hand-written burn Mlp is a twin of a1 and the mlp family only"


def _subst(text: str, ref: ModelRef) -> str:
    return text.replace("{m}", ref.slug)


def model_source(ref: ModelRef) -> str:
    """The source file that defines the model (relative to the project, or absolute)."""
    if ref.kind == "zoo":
        return "src/deploytui/models/zoo.py"
    if ref.kind == "file":
        return ref.target
    if ref.kind == "hf":  # a saved Hugging Face model: its config names the architecture
        return str(Path(ref.target) / "config.json")
    if ref.kind == "hf-config":
        return ref.target
    if ref.kind in LIBRARY_KINDS:  # torchvision, timm: the builder call is ours
        return "src/deploytui/models/library.py"
    return ref.target.replace(".", "/") + ".py"


@dataclass(frozen=True)
class Inspect:
    """One thing to look inside: an inspector `kind` (above) applied to `path`.

    `path` is relative to the artifacts root (templated: `{m}`), except for MODEL_SOURCE (the
    model's source file; `path` is then ignored). `title` overrides the section's default title.
    """

    kind: str
    path: str
    title: str = ""

    def __post_init__(self) -> None:
        if self.kind not in INSPECT_KINDS:
            raise ValueError(f"unknown inspector kind {self.kind!r}; known: {', '.join(INSPECT_KINDS)}")

    def rel(self, ref: ModelRef | None = None) -> str:
        ref = ref or paths.model()
        return model_source(ref) if self.kind == MODEL_SOURCE else _subst(self.path, ref)

    def file(self, ref: ModelRef | None = None) -> Path:
        base = paths.ROOT if self.kind == MODEL_SOURCE else paths.artifacts_dir()
        return base / self.rel(ref)


@dataclass(frozen=True)
class Form:
    """One way of deploying a model.

    Exactly one of `executable` (a compiled program: its path relative to the artifacts root,
    shipped) and `runner` (a Python form: the module of this project that loads the model and
    runs it) says where the program is. `optional_files` ship too when the build wrote them
    (an `.onnx`'s external `.onnx.data`).
    """

    key: str
    family: str
    title: str
    model_files: tuple[str, ...]  # artifact paths (templated) that ship as the model
    runtime: str  # one of the runtime keys above
    argv: tuple[str, ...]
    steps: tuple[str, ...]  # build steps that must have succeeded for the form to exist
    executable: str | None = None  # compiled forms: the program, relative to the artifacts root
    runner: str | None = None  # Python forms: the runner module (deploytui.runners.*)
    inspect: tuple[Inspect, ...] = ()  # what the Artifact, Code, Graph and Symbols tabs show
    optional_files: tuple[str, ...] = ()
    mlp_only: bool = False  # needs the hand-written burn Mlp twin
    note: str = ""
    # the precision axis: a variant (int8) names the fp32 form it comes from (`parent`, the same
    # runtime on the unquantised model) and the accuracy budget that judges it in place of the
    # fp32 tolerance check (deploytui.precision)
    precision: str = FP32
    parent: str = ""
    budget: Budget | None = None

    def __post_init__(self) -> None:
        if (self.executable is None) == (self.runner is None):
            raise ValueError(f"form {self.key}: give exactly one of executable and runner")
        if (self.precision != FP32) != (self.budget is not None and bool(self.parent)):
            raise ValueError(f"form {self.key}: a variant (not fp32) has a parent and a budget, fp32 neither")

    @property
    def variant(self) -> bool:
        """A lower-precision variant of an fp32 form: judged by its accuracy budget."""
        return self.precision != FP32

    @property
    def compiled(self) -> bool:
        return self.executable is not None

    @property
    def needs_python(self) -> bool:
        """Its runtime is a Python interpreter with packages (a Python runtime of the registry)."""
        return self.runtime in RUNTIME_DISTRIBUTIONS

    def applies(self, ref: ModelRef | None = None) -> str:
        """ "" when the form can exist for the model, else why not (not an error)."""
        ref = ref or paths.model()
        return MLP_ONLY if self.mlp_only and not has_mlp_layout(ref) else ""

    def command(self, ref: ModelRef | None = None) -> list[str]:
        ref = ref or paths.model()
        art = str(paths.artifacts_dir())
        return [
            _subst(a, ref)
            .replace("{python}", paths.python())
            .replace("{art}", art)
            .replace("{model}", ref.text)
            for a in self.argv
        ]

    def run_command(
        self,
        outputs: Path | str,
        repeat: int,
        ref: ModelRef | None = None,
        *,
        warmup: int = 0,
        threads: int = 1,
        inputs: Path | None = None,
    ) -> list[str]:
        """`command()` plus the runner protocol: the inputs file (the model's example unless
        given), where to write the outputs, W warm-up and K timed forwards, T threads."""
        ref = ref or paths.model()
        inputs = inputs or paths.artifacts_dir() / ref.slug / "inputs.safetensors"
        protocol = ["--inputs", str(inputs), "--outputs", str(outputs), "--repeat", str(repeat)]
        return [*self.command(ref), *protocol, "--warmup", str(warmup), "--threads", str(threads)]

    def executable_path(self, ref: ModelRef | None = None) -> Path | None:
        ref = ref or paths.model()
        return paths.artifacts_dir() / _subst(self.executable, ref) if self.executable else None

    def ship_files(self, ref: ModelRef | None = None) -> tuple[str, ...]:
        """What must be copied to the target machine (model files + program), relative to the
        artifacts root."""
        ref = ref or paths.model()
        files = [*self.model_files, *((self.executable,) if self.executable else ())]
        found = [_subst(f, ref) for f in files]
        art = paths.artifacts_dir()
        found += [o for o in (_subst(f, ref) for f in self.optional_files) if (art / o).exists()]
        return tuple(found)

    def ship_paths(self, ref: ModelRef | None = None) -> list[Path]:
        return [paths.artifacts_dir() / f for f in self.ship_files(ref)]

    @property
    def probe_step(self) -> str:
        """The build step that records this form's runtime facts in the manifest: one per Python
        runtime (the installed distributions, shared), one per compiled form and model (the
        libraries it loads)."""
        if self.runtime in RUNTIME_DISTRIBUTIONS:
            return f"probe-{self.runtime}"
        return f"probe-{self.key}"


def _torch(
    key: str, title: str, mode: str, model_file: str, step: str, inspect: tuple[Inspect, ...], note: str = ""
) -> Form:
    extra = ("--model", "{model}") if mode == "eager" else ()
    return Form(
        key=key,
        family="PyTorch (Python)",
        title=title,
        model_files=(model_file,),
        runner="deploytui.runners.torch_runner",
        runtime=PY_TORCH,
        argv=("{python}", "-m", "deploytui.runners.torch_runner", mode, "{art}/" + model_file, *extra),
        steps=(step,),
        inspect=inspect,
        note=note,
    )


def _binary(
    key: str,
    family: str,
    title: str,
    program: str,
    model_files: tuple[str, ...],
    runtime: str,
    steps: tuple[str, ...],
    inspect: tuple[Inspect, ...],
    note: str = "",
    mlp_only: bool = False,
    optional_files: tuple[str, ...] = (),
) -> Form:
    """A compiled program (shared/bin/ or {m}/bin/), given its model files as arguments (and `ldd`-ed)."""
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
        mlp_only=mlp_only,
        optional_files=optional_files,
    )


def _zip_script(pt: str) -> tuple[Inspect, ...]:
    return (Inspect(ZIP_MEMBERS, pt), Inspect(TORCHSCRIPT_CODE, pt))


def _aoti(pt2: str) -> tuple[Inspect, ...]:
    return (
        Inspect(ZIP_MEMBERS, pt2),
        Inspect(AOTI_SOURCE, pt2),
        Inspect(EXPORT_GRAPH, "{m}/{m}_export_graph.py"),
        Inspect(AOTI_SYMBOLS, pt2),
    )


_BURN = (Inspect(MODEL_SOURCE, "rust/burn-mlp/src/lib.rs"), Inspect(BURN_GRAPHIR, "{m}/capture.json"))


def _burn_onnx(rs: str, strategy: str) -> tuple[Inspect, ...]:
    return (
        Inspect(GENERATED_RUST, rs, f"generated by burn-onnx (LoadStrategy::{strategy})"),
        Inspect(ONNX_GRAPH, "{m}/{m}.onnx"),
    )


def _python(
    key: str,
    family: str,
    title: str,
    runner: str,
    runtime: str,
    model_files: tuple[str, ...],
    steps: tuple[str, ...],
    inspect: tuple[Inspect, ...],
    note: str,
) -> Form:
    """A Python runner module given its first model file (`runner PATH --inputs ...`)."""
    return Form(
        key=key,
        family=family,
        title=title,
        model_files=model_files,
        runner=runner,
        runtime=runtime,
        argv=("{python}", "-m", runner, "{art}/" + model_files[0]),
        steps=steps,
        inspect=inspect,
        note=note,
    )


def _int8(form: Form, parent: str) -> Form:
    """`form` as an int8 variant of `parent`, judged by the int8 budget."""
    return dataclasses.replace(form, precision=INT8, parent=parent, budget=INT8_BUDGET)


def _onnx_int8_variants() -> tuple[Form, ...]:
    """ONNX Runtime's dynamic int8 of the model's .onnx, run by each ONNX runtime that takes it."""
    int8 = "{m}/{m}_int8.onnx"
    graph = (Inspect(ONNX_GRAPH, int8, "the int8 ONNX graph (ConvInteger, MatMulInteger, …)"),)
    steps = ("export-onnx", "export-onnx-int8", "export-samples")
    python = _python(
        "onnxruntime-int8",
        "ONNX",
        "ONNX Runtime (Python), dynamic int8",
        "deploytui.runners.ort_runner",
        PY_ORT,
        (int8,),
        steps,
        graph,
        "quantize_dynamic(weight_type=QInt8): int8 weights, activations quantised at run time",
    )
    native = _binary(
        "onnxruntime-native-int8",
        "ONNX",
        "ONNX Runtime without Python (Rust ort), dynamic int8",
        "shared/bin/ort-run",
        (int8,),
        ORT_LIB,
        (*steps, "ort-build"),
        graph,
        "the onnxruntime-native program on the dynamic int8 .onnx",
    )
    tract = _binary(
        "tract-int8",
        "ONNX",
        "tract, dynamic int8 .onnx",
        "shared/bin/tract-run",
        (int8,),
        NO_RUNTIME,
        (*steps, "tract-build"),
        graph,
        "tract on the dynamic int8 .onnx, where its operators allow",
    )
    return (
        _int8(python, "onnxruntime"),
        _int8(native, "onnxruntime-native"),
        _int8(tract, "tract"),
    )


def _executorch_int8_variants() -> tuple[Form, ...]:
    """The model quantised for XNNPACK (PT2E, calibrated), run by both ExecuTorch runtimes."""
    pte, report = "{m}/{m}_int8.pte", (Inspect(PTE_DELEGATION, "{m}/{m}_int8_delegation.json"),)
    steps = ("export-samples", "export-executorch-int8")
    python = _python(
        "executorch-int8",
        "ExecuTorch",
        "ExecuTorch .pte, XNNPACK int8 (Python runtime)",
        "deploytui.runners.executorch_runner",
        PY_EXECUTORCH,
        (pte,),
        steps,
        report,
        "XNNPACKQuantizer (symmetric, per-channel) calibrated on the example + calibration inputs",
    )
    native = _binary(
        "cpp-executorch-int8",
        "ExecuTorch",
        "C++ ExecuTorch .pte, XNNPACK int8 (no Python, no libtorch)",
        "shared/bin/cpp-executorch",
        (pte,),
        EXECUTORCH_LIB,
        (*steps, "cpp-executorch-build"),
        report,
        "the cpp-executorch program on the int8 .pte",
    )
    return (_int8(python, "executorch"), _int8(native, "cpp-executorch"))


def _openvino(stem: str, steps: tuple[str, ...], title: str, note: str) -> tuple[Form, Form]:
    """An OpenVINO IR (`{m}/{m}<stem>.xml` + `.bin`), run from Python and by cpp-openvino."""
    xml, ir = "{m}/{m}" + stem + ".xml", ("{m}/{m}" + stem + ".xml", "{m}/{m}" + stem + ".bin")
    graph = (Inspect(OPENVINO_IR, xml),)
    python = _python(
        "openvino",
        "OpenVINO",
        f"OpenVINO IR{title}, CPU plugin (Python)",
        "deploytui.runners.openvino_runner",
        PY_OPENVINO,
        ir,
        steps,
        graph,
        note + "; run at f32 inference precision",
    )
    native = Form(
        key="openvino-native",
        family="OpenVINO",
        title=f"OpenVINO IR{title}, CPU plugin, C API (no Python)",
        model_files=ir,
        executable="shared/bin/cpp-openvino",
        runtime=OPENVINO_LIB,
        argv=("{art}/shared/bin/cpp-openvino", "{art}/" + xml),  # the .bin beside it
        steps=(*steps, "cpp-openvino-build"),
        inspect=(Inspect(ELF_LINKAGE, "shared/bin/cpp-openvino"), *graph),
        note=note + "; cpp/openvino_run.cpp on the wheel's libopenvino_c.so, f32 inference precision",
    )
    return python, native


def _openvino_forms() -> tuple[Form, ...]:
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
        _int8(dataclasses.replace(python8, key="openvino-int8"), "openvino"),
        _int8(dataclasses.replace(native8, key="openvino-native-int8"), "openvino-native"),
    )


def _aoti_int8_variants() -> tuple[Form, ...]:
    """torchao's dynamic int8 compiled by AOTInductor, loaded from Python and from C++."""
    pt2 = "{m}/{m}_aoti_int8.pt2"
    inspect = tuple(i for i in _aoti(pt2) if i.kind != EXPORT_GRAPH)  # the fp32 graph is not its
    steps = ("export-samples", "export-aoti-int8")
    note = "torchao quantize_(Int8DynamicActivationInt8WeightConfig) on the Linear layers, then AOTInductor"
    python = dataclasses.replace(
        _torch("aoti-python-int8", "AOTInductor .pt2, torchao int8", "aoti", pt2, steps[-1], inspect),
        steps=steps,
        note=note,
    )
    native = _binary(
        "cpp-aoti-int8",
        "C++ libtorch",
        "C++ libtorch + AOTInductor, torchao int8",
        "shared/bin/cpp-aoti",
        (pt2,),
        LIBTORCH,
        (*steps, "cpp-build"),
        inspect,
        note,
    )
    return (_int8(python, "aoti-python"), _int8(native, "cpp-aoti"))


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
        _zip_script("{m}/{m}_script.pt"),
    ),
    _torch(
        "torchscript-trace",
        "TorchScript (trace)",
        "jit",
        "{m}/{m}_trace.pt",
        "export-trace",
        _zip_script("{m}/{m}_trace.pt"),
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
        _aoti("{m}/{m}_aoti.pt2"),
    ),
    _binary(
        "cpp-torchscript",
        "C++ libtorch",
        "C++ libtorch + TorchScript",
        "shared/bin/cpp-torchscript",
        ("{m}/{m}_script.pt",),
        LIBTORCH,
        ("export-script", "cpp-build"),
        _zip_script("{m}/{m}_script.pt"),
    ),
    _binary(
        "cpp-aoti",
        "C++ libtorch",
        "C++ libtorch + AOTInductor",
        "shared/bin/cpp-aoti",
        ("{m}/{m}_aoti.pt2",),
        LIBTORCH,
        ("export-aoti", "cpp-build"),
        _aoti("{m}/{m}_aoti.pt2"),
        "the package's .so needs libtorch.so, which loads libtorch_cuda and the CUDA stack",
    ),
    _binary(
        "cpp-aoti-lean",
        "C++ libtorch",
        "C++ libtorch + AOTInductor (no libtorch.so)",
        "shared/bin/cpp-aoti",
        ("{m}/{m}_aoti_lean.pt2",),
        LIBTORCH,
        ("export-aoti-lean", "cpp-build"),
        _aoti("{m}/{m}_aoti_lean.pt2"),
        "exported with aot_inductor.link_libtorch=False: libtorch.so and the CUDA stack stay out",
    ),
    _binary(
        "burn-file",
        "burn",
        "burn Mlp, .bpk read at run time",
        "shared/bin/burn-file",
        ("{m}/{m}.bpk",),
        NO_RUNTIME,
        ("burn-convert", "burn-tools"),
        _BURN,
        mlp_only=True,
    ),
    _binary(
        "burn-embed",
        "burn",
        "burn Mlp, weights compiled in",
        "{m}/bin/burn-embed",
        (),
        NO_RUNTIME,
        ("burn-embed",),
        _BURN,
        "weights compiled in with include_bytes!: ships as one file",
        mlp_only=True,
    ),
    _binary(
        "burn-st",
        "burn",
        "burn Mlp, PyTorch safetensors read",
        "shared/bin/burn-st",
        ("{m}/{m}.safetensors",),
        NO_RUNTIME,
        ("export-model", "burn-tools"),
        (Inspect(SAFETENSORS_HEADER, "{m}/{m}.safetensors"), *_BURN),
        mlp_only=True,
    ),
    _binary(
        "burn-onnx-file",
        "ONNX",
        "burn-onnx generated, File",
        "{m}/bin/burn-onnx-file",
        (),
        NO_RUNTIME,
        ("burn-onnx-file",),
        _burn_onnx("{m}/onnx/{m}.rs", "File"),
        "Model::default() reads the .bpk at the absolute build-directory path baked in at build time",
    ),
    _binary(
        "burn-onnx-embed",
        "ONNX",
        "burn-onnx generated, Embedded",
        "{m}/bin/burn-onnx-embed",
        (),
        NO_RUNTIME,
        ("burn-onnx-embed",),
        _burn_onnx("{m}/onnx/{m}_embed.rs", "Embedded"),
        "LoadStrategy::Embedded: the .bpk is compiled into the binary",
    ),
    _binary(
        "burn-onnx-bpk",
        "ONNX",
        "burn-onnx generated, from_file + .bpk",
        "{m}/bin/burn-onnx-bpk",
        ("{m}/bin/{m}_onnx.bpk",),
        NO_RUNTIME,
        ("burn-onnx-bpk",),
        _burn_onnx("{m}/onnx/{m}.rs", "File"),
        "Model::from_file(MODEL_FILE): the generated .bpk ships beside the binary, so the pair runs anywhere",
    ),
    Form(
        key="onnxruntime",
        family="ONNX",
        title="ONNX Runtime (Python)",
        model_files=("{m}/{m}.onnx",),
        optional_files=("{m}/{m}.onnx.data",),
        runner="deploytui.runners.ort_runner",
        runtime=PY_ORT,
        argv=("{python}", "-m", "deploytui.runners.ort_runner", "{art}/{m}/{m}.onnx"),
        steps=("export-onnx",),
        inspect=(Inspect(ONNX_GRAPH, "{m}/{m}.onnx"),),
    ),
    _binary(
        "tract",
        "ONNX",
        "tract (pure Rust, loads the .onnx at run time)",
        "shared/bin/tract-run",
        ("{m}/{m}.onnx",),
        NO_RUNTIME,
        ("export-onnx", "tract-build", "tract-optimise"),
        (Inspect(TRACT_NODES, "{m}/tract_nodes.txt"), Inspect(ONNX_GRAPH, "{m}/{m}.onnx")),
        "one binary for every model: the .onnx is read, typed and optimised at start-up",
        optional_files=("{m}/{m}.onnx.data",),
    ),
    _binary(
        "onnxruntime-native",
        "ONNX",
        "ONNX Runtime without Python (Rust ort)",
        "shared/bin/ort-run",
        ("{m}/{m}.onnx",),
        ORT_LIB,
        ("export-onnx", "ort-build"),
        (Inspect(ONNX_GRAPH, "{m}/{m}.onnx"),),
        "the `ort` crate loads the wheel's libonnxruntime.so at start-up (stage import); load = the session",
        optional_files=("{m}/{m}.onnx.data",),
    ),
    Form(
        key="executorch",
        family="ExecuTorch",
        title="ExecuTorch .pte, XNNPACK (Python runtime)",
        model_files=("{m}/{m}.pte",),
        runner="deploytui.runners.executorch_runner",
        runtime=PY_EXECUTORCH,
        argv=("{python}", "-m", "deploytui.runners.executorch_runner", "{art}/{m}/{m}.pte"),
        steps=("export-executorch",),
        inspect=(Inspect(PTE_DELEGATION, "{m}/{m}_delegation.json"),),
        note="torch.export + to_edge_transform_and_lower(XnnpackPartitioner); run by executorch.runtime",
    ),
    _binary(
        "cpp-executorch",
        "ExecuTorch",
        "C++ ExecuTorch .pte, XNNPACK (no Python, no libtorch)",
        "shared/bin/cpp-executorch",
        ("{m}/{m}.pte",),
        EXECUTORCH_LIB,
        ("export-executorch", "cpp-executorch-build"),
        (Inspect(PTE_DELEGATION, "{m}/{m}_delegation.json"),),
        "extension::Module on the wheel's libexecutorch.so, XNNPACK delegate and optimized kernels",
    ),
    *_onnx_int8_variants(),
    *_executorch_int8_variants(),
    *_openvino_forms(),
    *_aoti_int8_variants(),
)

BY_KEY: dict[str, Form] = {f.key: f for f in FORMS}
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(f.family for f in FORMS))


def get(key: str) -> Form:
    try:
        return BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown form {key!r}; known: {', '.join(BY_KEY)}") from None


# `bench --batch` runs a form on its model files' dynamic-batch exports where the exporter makes
# one (built on demand, torch_plan.DYNAMIC_EXPORTS): fixed file -> (dynamic file, its step, the
# fixed export step it stands in for). The fixed-shape exports stay what every other figure (a1's
# page among them) is measured on.
# TorchScript and eager run as they are; burn-onnx's code is generated from the fixed .onnx.
DYNAMIC: dict[str, tuple[str, str, str]] = {
    "{m}/{m}_export.pt2": ("{m}/{m}_export_dyn.pt2", "export-dyn-torch-export", "export-torch-export"),
    "{m}/{m}_aoti.pt2": ("{m}/{m}_aoti_dyn.pt2", "export-dyn-aoti", "export-aoti"),
    "{m}/{m}.onnx": ("{m}/{m}_dyn.onnx", "export-dyn-onnx", "export-onnx"),
    "{m}/{m}.onnx.data": ("{m}/{m}_dyn.onnx.data", "export-dyn-onnx", "export-onnx"),
    "{m}/{m}.pte": ("{m}/{m}_dyn.pte", "export-dyn-executorch", "export-executorch"),
    "{m}/{m}_aoti_lean.pt2": ("{m}/{m}_aoti_lean_dyn.pt2", "export-dyn-aoti-lean", "export-aoti-lean"),
}


def for_batch(form: Form) -> Form:
    """The form as `bench --batch` runs it: on the dynamic-batch exports of its model files where
    there are some (its steps then name their export steps), else the form itself."""
    swap = {
        fixed: dyn
        for fixed, (dyn, _, _) in DYNAMIC.items()
        if fixed in (*form.model_files, *form.optional_files)
    }
    if not swap:
        return form
    steps = {fixed_step: step for fixed, (_, step, fixed_step) in DYNAMIC.items() if fixed in swap}

    def sub(text: str) -> str:
        for fixed, dyn in swap.items():
            text = text.replace(fixed, dyn)
        return text

    return replace(
        form,
        model_files=tuple(sub(f) for f in form.model_files),
        optional_files=tuple(sub(f) for f in form.optional_files),
        argv=tuple(sub(a) for a in form.argv),
        steps=tuple(steps.get(s, s) for s in form.steps),
    )
