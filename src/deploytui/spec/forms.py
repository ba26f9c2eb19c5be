"""What a form is: every way of deploying a model that deploytui builds, runs and measures.

A form is data, declared by its runtime family (deploytui/families/<name>/family.py, a
`Family`); the registry (deploytui/families/registry.py) collects them. The UI, the CLI, the
report and the inspectors iterate over `registry.FORMS` and read its fields; nothing outside the
families names a form. Paths are relative to the artifacts root and templated
per model: `{m}` is the model's slug (its folder, and the stem of its files), `shared/` holds
the model-independent programs. `argv` entries may also use `{python}` (this venv's
interpreter), `{art}` (the artifacts root) and `{model}` (the model as `--model` spells it).
`bench` appends the runner protocol's `--inputs IN --outputs OUT --repeat K`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from deploytui.core import paths
from deploytui.core.modelref import LIBRARY_KINDS, ModelRef, has_mlp_layout
from deploytui.core.workspace import Workspace
from deploytui.judge.precision import FP32, INT8, INT8_BUDGET, Budget
from deploytui.spec.a1_page import Claim, Figure

NO_RUNTIME = "none"  # a compiled program that loads no runtime library (the families declare theirs)

# What the inspectors look at (`Inspect.kind`); form_view has one section builder per kind. A family
# adds its own kinds (`Family.kinds`, built by its `sections` module); the registry refuses others.
ZIP_MEMBERS = "zip-members"  # Artifact: members of a .pt / .pt2 ZIP archive
SAFETENSORS_HEADER = "safetensors-header"  # Artifact: the tensors in a safetensors header
MODEL_SOURCE = "model-source"  # Code: a source file of this project that defines the model
ONNX_GRAPH = "onnx-graph"  # Graph: the ONNX graph (read in a subprocess)
ELF_LINKAGE = "elf-linkage"  # Symbols: `ldd` of the compiled program
INSPECT_KINDS = (
    ZIP_MEMBERS,
    SAFETENSORS_HEADER,
    MODEL_SOURCE,
    ONNX_GRAPH,
    ELF_LINKAGE,
)

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

    def rel(self, ref: ModelRef) -> str:
        return model_source(ref) if self.kind == MODEL_SOURCE else _subst(self.path, ref)

    def file(self, ws: Workspace) -> Path:
        base = paths.ROOT if self.kind == MODEL_SOURCE else ws.artifacts
        return base / self.rel(ws.model)


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
    # fp32 tolerance check (deploytui.judge.precision)
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
        """Its runtime is a Python interpreter with packages: a Python form (its runner is a
        module of this project; tests/test_forms.py holds every such runtime to that)."""
        return self.runner is not None

    def applies(self, ref: ModelRef) -> str:
        """ "" when the form can exist for the model, else why not (not an error)."""
        return MLP_ONLY if self.mlp_only and not has_mlp_layout(ref) else ""

    def command(self, ws: Workspace) -> list[str]:
        ref, art = ws.model, str(ws.artifacts)
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
        ws: Workspace,
        *,
        warmup: int = 0,
        threads: int = 1,
        inputs: Path | None = None,
    ) -> list[str]:
        """`command()` plus the runner protocol: the inputs file (the model's example unless
        given), where to write the outputs, W warm-up and K timed forwards, T threads."""
        inputs = inputs or ws.inputs_path
        protocol = ["--inputs", str(inputs), "--outputs", str(outputs), "--repeat", str(repeat)]
        return [*self.command(ws), *protocol, "--warmup", str(warmup), "--threads", str(threads)]

    def executable_path(self, ws: Workspace) -> Path | None:
        return ws.artifacts / _subst(self.executable, ws.model) if self.executable else None

    def ship_files(self, ws: Workspace) -> tuple[str, ...]:
        """What must be copied to the target machine (model files + program), relative to the
        artifacts root."""
        ref, art = ws.model, ws.artifacts
        files = [*self.model_files, *((self.executable,) if self.executable else ())]
        found = [_subst(f, ref) for f in files]
        found += [o for o in (_subst(f, ref) for f in self.optional_files) if (art / o).exists()]
        return tuple(found)

    def ship_paths(self, ws: Workspace) -> list[Path]:
        return [ws.artifacts / f for f in self.ship_files(ws)]

    def all_files(self, ws: Workspace) -> tuple[str, ...]:
        """`ship_files` with every optional file, whether the build wrote it or not (a probe
        step's inputs: one not there yet is hashed as missing, so the plan does not change
        once the build writes it)."""
        shipped = self.ship_files(ws)
        optional = (_subst(f, ws.model) for f in self.optional_files)
        return (*shipped, *(o for o in optional if o not in shipped))

    @property
    def probe_step(self) -> str:
        """The build step that records this form's runtime facts in the manifest: one per Python
        runtime (the installed distributions, shared), one per compiled form and model (the
        libraries it loads)."""
        if self.needs_python:
            return f"probe-{self.runtime}"
        return f"probe-{self.key}"


def binary(
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


def python_form(
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


def int8(form: Form, parent: str) -> Form:
    """`form` as an int8 variant of `parent`, judged by the int8 budget."""
    return dataclasses.replace(form, precision=INT8, parent=parent, budget=INT8_BUDGET)


@dataclass(frozen=True)
class Runtime:
    """What a form needs on the target to run: a Python interpreter with `distributions`
    installed (its size is their dependency closure), or the shared libraries of one installed
    `wheel` (its RECORD changes with them), or neither (NO_RUNTIME, the core's)."""

    key: str
    title: str
    distributions: tuple[str, ...] = ()
    wheel: str = ""


@dataclass(frozen=True)
class Family:
    """A runtime family (one package under deploytui.families, registered in families/registry.py):
    its forms, the runtimes they need, the module whose `steps(ctx)` builds them (imported by the
    build engine only), the dynamic-batch exports of its model files (fixed file -> (dynamic file,
    its step, the fixed export step it stands in for); `bench --batch`, registry.for_batch), what
    its Python runners ship as (a module that imports no more of deploytui than
    runners.protocol; `deploytui.scenarios.isolated.shipping`), and the forms the bench scripts anchor on."""

    name: str
    forms: tuple[Form, ...]
    runtimes: tuple[Runtime, ...] = ()
    plan: str = ""
    dynamic: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    ship_scripts: dict[str, str] = field(default_factory=dict)
    cross_check: tuple[str, ...] = ()  # bench/measure_vs_hyperfine.py's default forms
    fidelity: tuple[tuple[str, str], ...] = ()  # bench/serve_fidelity.py's (form, its anchor)
    kinds: tuple[str, ...] = ()  # its own inspector kinds (Inspect.kind), beside INSPECT_KINDS
    sections: str = ""  # the module whose BUILDERS build its kinds' sections (inspectors.section)
    # the reference page's figures and claims on its forms, and the forms its advice names
    # (situation, form key): deploytui.spec.a1_page, joined by the registry
    page_figures: tuple[Figure, ...] = ()
    page_claims: tuple[Claim, ...] = ()
    page_advice: tuple[tuple[str, str], ...] = ()
