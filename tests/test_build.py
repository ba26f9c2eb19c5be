"""The build: incremental, unavailable toolchains are reasons not failures."""

import os

from deploytui.build import plan, run_build
from deploytui.build.context import BuildContext


def test_noop_build_skips_every_step(built_artifacts):
    events = []
    run_build(on_event=events.append)
    ends = [e for e in events if e.kind == "end"]
    assert ends and all(e.status in ("up-to-date", "unavailable", "skipped") for e in ends), \
        [(e.step, e.status, e.text) for e in ends]


def test_plan_names_every_step_forms_depend_on():
    from deploytui.forms import FORMS

    names = {s.name for s in plan(BuildContext.default())}
    for form in FORMS:
        assert set(form.steps) <= names, (form.key, set(form.steps) - names)


def test_missing_toolchain_marks_steps_unavailable(artifacts_copy, monkeypatch):
    ctx = BuildContext.default()
    assert ctx.art == artifacts_copy
    manifest = run_build(ctx, only=["cpp-build"], on_event=lambda e: None)
    assert manifest["steps"]["cpp-build"]["status"] in ("ok",)  # copied state is up to date
    bare = artifacts_copy.parent / "bin-without-tools"
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))
    (artifacts_copy / "manifest.json").write_text(
        (artifacts_copy / "manifest.json").read_text().replace('"fingerprint"', '"old_fingerprint"'))
    manifest = run_build(ctx, only=["cpp-build", "export-safetensors"], on_event=lambda e: None)
    cpp = manifest["steps"]["cpp-build"]
    assert cpp["status"] == "unavailable" and "not found on PATH" in cpp["reason"]
    assert manifest["steps"]["export-safetensors"]["status"] == "ok"
    assert os.environ["PATH"] == str(bare)
