"""The registry is data: every form says where its program is, what ships and what to inspect,
and nothing outside forms.py (and the build's step names) names a form."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deploytui import forms, paths
from deploytui.forms import Form, Inspect
from deploytui.inspectors import form_view


def test_every_form_has_exactly_one_program_and_known_inspectors():
    for form in forms.FORMS:
        assert (form.executable is None) != (form.runner is None), form.key
        if form.compiled:
            assert form.executable.startswith(("shared/bin/", "{m}/bin/")), form.key
            assert form.executable.replace("{m}", "a1") in form.ship_files()
            assert any(i.kind == forms.ELF_LINKAGE and i.path == form.executable for i in form.inspect)
        else:
            assert form.runner.startswith("deploytui.families.") and form.runner in form.argv
            assert form.runtime in forms.RUNTIME_DISTRIBUTIONS
            assert form.ship_files()[: len(form.model_files)] == tuple(
                f.replace("{m}", "a1") for f in form.model_files
            )
        assert form.runtime in forms.RUNTIME_TITLES
        for i in form.inspect:
            assert i.kind in form_view.BUILDERS, (form.key, i.kind)


def test_a_form_with_both_or_neither_program_and_an_unknown_inspector_are_refused():
    base = dict(key="k", family="f", title="t", model_files=(), runtime=forms.NO_RUNTIME, argv=(), steps=())
    with pytest.raises(ValueError, match="exactly one"):
        Form(**base)
    with pytest.raises(ValueError, match="exactly one"):
        Form(**base, executable="bin/x", runner="deploytui.runners.x")
    with pytest.raises(ValueError, match="unknown inspector kind"):
        Inspect("hexdump", "a1.onnx")


def test_inspected_files_are_where_they_say():
    for form in forms.FORMS:
        for i in form.inspect:
            if i.kind == forms.MODEL_SOURCE:
                assert i.file().is_file(), (form.key, i.path)
            assert i.file().is_relative_to(
                paths.ROOT if i.kind == forms.MODEL_SOURCE else paths.artifacts_dir()
            )


def test_no_code_outside_the_registry_names_a_form():
    """Step names in builder/ may equal a form key (they name steps); forms.py is the registry;
    a1_page.py is the reference page's figures, each naming the form it compares with."""
    keys = "|".join(re.escape(f.key) for f in forms.FORMS)
    literal = re.compile(rf"""["']({keys})["']""")
    src = paths.ROOT / "src" / "deploytui"
    files = [*src.rglob("*.py"), *(paths.ROOT / "bench").rglob("*.py")]
    offenders = [
        f"{f.relative_to(paths.ROOT)}:{n}: {line.strip()}"
        for f in files
        if f not in (src / "forms.py", src / "a1_page.py")
        and not f.is_relative_to(src / "builder")
        and not f.is_relative_to(src / "families")
        for n, line in enumerate(f.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert not offenders, offenders


def test_forms_are_templated_per_model_and_the_burn_twins_apply_to_the_mlp_layout_only():
    from deploytui.models import parse

    conv, mlp = parse("convnet"), parse("mlp:depth=3")
    eager = forms.get("torch-eager")
    assert eager.command(conv)[-2:] == ["--model", "convnet"]
    assert eager.ship_files(conv) == ("convnet/convnet.safetensors",)
    cpp = forms.get("cpp-aoti")
    assert cpp.ship_files(conv) == ("convnet/convnet_aoti.pt2", "shared/bin/cpp-aoti")
    run = cpp.run_command("/tmp/o.safetensors", 3, conv)
    assert run[-10:] == [
        "--inputs",
        str(paths.artifacts_dir() / "convnet" / "inputs.safetensors"),
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
    assert run[-11:-9] == [str(paths.artifacts_dir() / "convnet" / "convnet_aoti.pt2"), "--inputs"]
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
        assert forms.get(key).applies(conv) == forms.MLP_ONLY
        assert forms.get(key).applies(mlp) == ""
        assert forms.get(key).applies(parse("a1")) == ""
    assert not [f.key for f in forms.FORMS if not f.mlp_only and f.applies(conv)]
