"""The registry is data: every form says where its program is, what ships and what to inspect;
each runtime family is one folder under deploytui/families/, registered by one line, and nothing
outside deploytui/families/ names a form or a family."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from deploytui.core import paths
from deploytui.core.modelref import parse
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.spec import forms
from deploytui.spec.forms import Family, Form, Inspect
from deploytui.views import form_view

A1 = Workspace.at(parse("a1"), "/art")  # a place: nothing here reads the files


def test_every_form_has_exactly_one_program_and_known_inspectors():
    for form in registry.FORMS:
        assert (form.executable is None) != (form.runner is None), form.key
        if form.compiled:
            assert form.executable.startswith(("shared/bin/", "{m}/bin/")), form.key
            assert form.executable.replace("{m}", "a1") in form.ship_files(A1)
            assert any(i.kind == forms.ELF_LINKAGE and i.path == form.executable for i in form.inspect)
        else:
            assert form.runner.startswith("deploytui.families.") and form.runner in form.argv
            assert form.runtime in registry.RUNTIME_DISTRIBUTIONS
            assert form.ship_files(A1)[: len(form.model_files)] == tuple(
                f.replace("{m}", "a1") for f in form.model_files
            )
        assert form.runtime in registry.RUNTIME_TITLES
        for i in form.inspect:
            assert i.kind in form_view.BUILDERS, (form.key, i.kind)


def test_a_form_with_both_or_neither_program_and_an_unknown_inspector_are_refused():
    base = dict(key="k", family="f", title="t", model_files=(), runtime=forms.NO_RUNTIME, argv=(), steps=())
    with pytest.raises(ValueError, match="exactly one"):
        Form(**base)
    with pytest.raises(ValueError, match="exactly one"):
        Form(**base, executable="bin/x", runner="deploytui.runners.x")
    odd = Form(**base, executable="bin/x", inspect=(Inspect("hexdump", "a1.onnx"),))
    with pytest.raises(ValueError, match="unknown inspector kind 'hexdump'"):
        registry.check((Family("x", (odd,)),))
    with pytest.raises(ValueError, match="declared twice"):
        registry.check((Family("x", (replace(odd, inspect=()),)), Family("y", (replace(odd, inspect=()),))))
    registry.check((Family("x", (odd,), kinds=("hexdump",)),))  # a family may add its own kind


def test_inspected_files_are_where_they_say():
    for form in registry.FORMS:
        for i in form.inspect:
            if i.kind == forms.MODEL_SOURCE:
                assert i.file(A1).is_file(), (form.key, i.path)
            assert i.file(A1).is_relative_to(paths.ROOT if i.kind == forms.MODEL_SOURCE else A1.artifacts)


def test_no_code_outside_the_families_names_a_form_or_a_family():
    """No exemption: a form key or a family's name (as a string, or a module path into its
    folder) appears only under deploytui/families/ (and in the tests)."""
    src = paths.ROOT / "src" / "deploytui"
    keys = "|".join(re.escape(f.key) for f in registry.FORMS)
    names = "|".join(re.escape(f.name) for f in registry.FAMILIES)
    literal = re.compile(rf"""["']({keys}|{names})["']""")
    module = re.compile(rf"""families[./]({names}|common)\b|from deploytui\.families import ({names})\b""")
    files = [*src.rglob("*.py"), *(paths.ROOT / "bench").rglob("*.py")]
    offenders = [
        f"{f.relative_to(paths.ROOT)}:{n}: {line.strip()}"
        for f in files
        if not f.is_relative_to(src / "families")
        for n, line in enumerate(f.read_text().splitlines(), 1)
        if literal.search(line) or module.search(line)
    ]
    assert not offenders, offenders


def test_every_family_folder_is_registered_once_under_its_own_name():
    folders = {p.parent.name for p in (paths.ROOT / "src" / "deploytui" / "families").glob("*/family.py")}
    assert folders == {f.name for f in registry.FAMILIES}
    assert len(registry.FAMILIES) == len(folders)
    for family in registry.FAMILIES:
        assert family.plan in ("", f"deploytui.families.{family.name}.plan")
        assert family.sections in ("", f"deploytui.families.{family.name}.sections")
        assert {*family.ship_scripts} <= {f.runner for f in family.forms}


def test_each_export_is_its_own_familys_and_runs_as_one_process_each():
    """A family's plan declares its exports with functions from its own exports.py (the sample
    sets, shared by the int8 variants, are common's); the step runs export_cmd on that function,
    its module among the step's inputs. export_cmd refuses what is not a family's export."""
    import importlib

    from deploytui.core.modelref import parse
    from deploytui.families.common.export_steps import Export, steps_of
    from deploytui.spec.context import BuildContext

    ctx = BuildContext.of(A1.for_model(parse("a1")))
    seen = 0
    for family in registry.FAMILIES:
        exports = [
            e for e in vars(importlib.import_module(family.plan)).get("EXPORTS", ()) if isinstance(e, Export)
        ]
        for export, step in zip(exports, steps_of(ctx, tuple(exports)), strict=True):
            module = export.function.__module__
            assert module in (
                f"deploytui.families.{family.name}.exports",
                "deploytui.families.common.samples",
            )
            assert step.argv[2:4] == (
                "deploytui.families.common.export_cmd",
                f"{module}:{export.function.__name__}",
            )
            assert Path(importlib.import_module(module).__file__ or "") in step.inputs
            seen += 1
    assert seen >= 19
    for bad in (
        "os:system",
        "deploytui.families.pytorch.exports:torchao_int8",
        "deploytui.families.nope.exports:export_x",
    ):
        out = subprocess.run(
            [sys.executable, "-m", "deploytui.families.common.export_cmd", bad, "/nonexistent"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert out.returncode == 1 and out.stderr.startswith("error: ") and "Traceback" not in out.stderr, (
            out.stderr
        )


def test_the_exporters_refusal_is_its_root_cause_unless_an_export_explained_it():
    """The build's one line is the root cause (torch.onnx wraps torch.export's error), but an
    export that explains a refusal raises its own error `from None`: that message is the line
    (executorch-int8 of a Qwen2 config lost its explanation of the float index this way)."""
    from deploytui.families.common.export_cmd import decisive

    def raised(fn):
        try:
            fn()
        except Exception as e:
            return e
        raise AssertionError("did not raise")

    def wrapped():
        try:
            raise KeyError("inner words")
        except KeyError as e:
            raise RuntimeError("outer words") from e

    def explained():
        try:
            raise IndexError("tensors used as indices must be long")
        except IndexError as e:
            raise IndexError(f"{e} (because of the quantizer)") from None

    assert decisive(raised(wrapped)) == "RuntimeError: KeyError: 'inner words'"
    assert (
        decisive(raised(explained))
        == "IndexError: tensors used as indices must be long (because of the quantizer)"
    )


def test_the_registry_imports_no_runtime_and_a_runner_no_registry():
    """The app imports the registry: the families' declarations stay light. A runner starts as
    `python -m deploytui.families.<name>.<runner>` and is measured: its package imports nothing."""
    heavy = ("torch", "numpy", "onnx", "onnxruntime", "executorch", "openvino", "safetensors", "textual")
    code = (
        "import sys, deploytui.families.registry, deploytui.views.form_view; "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
    code = (
        "import sys, importlib; "
        + "; ".join(f"importlib.import_module('deploytui.families.{f.name}')" for f in registry.FAMILIES)
        + "; print(sorted(m for m in sys.modules if m.startswith('deploytui.')))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == str(
        sorted(["deploytui.families", *(f"deploytui.families.{f.name}" for f in registry.FAMILIES)])
    )


def test_each_program_is_declared_once_and_its_build_step_makes_it():
    """A compiled form's program path is its family's declaration, and the plan's steps name the
    same path as their output (no second spelling joined by a string)."""
    from deploytui.builder import plan
    from deploytui.core.modelref import parse
    from deploytui.spec.context import BuildContext

    for model in ("a1", "convnet"):
        ref = parse(model)
        ws = A1.for_model(ref)
        steps = plan(BuildContext.of(ws))
        made = {o: s.name for s in steps for o in s.outputs}
        for form in registry.FORMS:
            if form.compiled and not form.applies(ref):
                exe = form.executable_path(ws)
                assert exe in made, (model, form.key, exe)
                assert made[exe] in form.steps, (model, form.key, made[exe])


def test_forms_are_templated_per_model_and_the_burn_twins_apply_to_the_mlp_layout_only():
    conv, mlp = A1.for_model(parse("convnet")), parse("mlp:depth=3")
    eager = registry.get("torch-eager")
    assert eager.command(conv)[-2:] == ["--model", "convnet"]
    assert eager.ship_files(conv) == ("convnet/convnet.safetensors",)
    cpp = registry.get("cpp-aoti")
    assert cpp.ship_files(conv) == ("convnet/convnet_aoti.pt2", "shared/bin/cpp-aoti")
    run = cpp.run_command("/tmp/o.safetensors", 3, conv)
    assert run[-10:] == [
        "--inputs",
        "/art/convnet/inputs.safetensors",
        "--outputs",
        "/tmp/o.safetensors",
        "--repeat",
        "3",
        "--warmup",
        "0",
        "--threads",
        "1",
    ]
    run = cpp.run_command("/tmp/o.safetensors", 3, conv, warmup=2, threads=4, inputs=Path("/tmp/b8.st"))
    assert run[-11:-9] == ["/art/convnet/convnet_aoti.pt2", "--inputs"]
    assert run[-9:] == [
        "/tmp/b8.st",
        "--outputs",
        "/tmp/o.safetensors",
        "--repeat",
        "3",
        "--warmup",
        "2",
        "--threads",
        "4",
    ]
    for key in ("burn-file", "burn-embed", "burn-st"):
        assert registry.get(key).applies(conv.model) == forms.MLP_ONLY
        assert registry.get(key).applies(mlp) == ""
        assert registry.get(key).applies(parse("a1")) == ""
    assert not [f.key for f in registry.FORMS if not f.mlp_only and f.applies(conv.model)]


def test_a_probe_names_every_file_a_form_may_ship_built_or_not():
    """A probe step's inputs hold the optional files too (an .onnx's external data, written by
    the export): a fresh build's second run finds the probe up to date."""
    tract = registry.get("tract")
    assert "a1/a1.onnx.data" not in tract.ship_files(A1)  # nothing under /art: not there
    assert tract.all_files(A1) == (*tract.ship_files(A1), "a1/a1.onnx.data")
    eager = registry.get("torch-eager")
    assert eager.all_files(A1) == eager.ship_files(A1)


def test_a_library_model_is_told_which_forms_ship_without_its_source():
    from deploytui.core.modelref import parse
    from deploytui.scenarios.isolated import shipping
    from deploytui.ship.bundler import ShipError

    with pytest.raises(
        ShipError, match=r"carries the graph \(torchscript-script, torchscript-trace, torch-export"
    ):
        shipping._model_source(parse("torchvision:resnet18"))
    assert "torch-eager" not in shipping._graph_forms() and "onnxruntime" in shipping._graph_forms()
