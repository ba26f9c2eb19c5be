"""The build: incremental, unavailable toolchains are reasons not failures."""

import json
import os

from deploytui.builder import plan, run_build
from deploytui.spec.context import BuildContext
from deploytui.spec.manifest import StepStatus
from workspaces import A1, built


def test_noop_build_skips_every_step(built_artifacts):
    events = []
    run_build(BuildContext.of(A1), on_event=events.append)
    ends = [e for e in events if e.kind == "end"]
    assert ends and all(e.status in ("up-to-date", "unavailable", "skipped") for e in ends), [
        (e.step, e.status, e.text) for e in ends
    ]


def test_plan_names_every_step_forms_depend_on():
    from deploytui.families.registry import FORMS

    names = {s.name for s in plan(BuildContext.of(A1))}
    for form in FORMS:
        assert set(form.steps) <= names, (form.key, set(form.steps) - names)


def test_bench_builds_only_the_steps_its_forms_need():
    from deploytui.builder import steps_for
    from deploytui.families import registry

    ctx = BuildContext.of(built("convnet"))
    assert steps_for(ctx, [registry.get("torch-eager")]) == ["export-model"]
    native = steps_for(ctx, [registry.get("onnxruntime-native")])
    assert native is not None and set(native) == {"export-model", "export-onnx", "ort-build"}
    assert steps_for(ctx, list(registry.FORMS)) is None  # every form: the whole plan


def test_missing_toolchain_marks_steps_unavailable(artifacts_copy, copy_ws, monkeypatch):
    ctx = BuildContext.of(copy_ws)
    assert ctx.art == artifacts_copy
    manifest = run_build(ctx, only=["cpp-build"], on_event=lambda e: None)
    assert manifest.steps["cpp-build"].status == StepStatus.OK  # copied state is up to date
    bare = artifacts_copy.parent / "bin-without-tools"
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))
    for part in ("shared", "a1"):
        mf = artifacts_copy / part / "manifest.json"
        mf.write_text(mf.read_text().replace('"fingerprint"', '"old_fingerprint"'))
    manifest = run_build(ctx, only=["cpp-build", "export-model"], on_event=lambda e: None)
    cpp = manifest.steps["cpp-build"]
    assert cpp.status == StepStatus.UNAVAILABLE and "not found on PATH" in cpp.reason
    assert manifest.steps["export-model"].status == StepStatus.OK
    # the shared step is recorded in the shared manifest, the model's in its own
    assert "cpp-build" in json.loads((artifacts_copy / "shared" / "manifest.json").read_text())["steps"]
    assert "export-model" in json.loads((artifacts_copy / "a1" / "manifest.json").read_text())["steps"]
    assert os.environ["PATH"] == str(bare)


def test_a_copied_artifacts_folder_is_up_to_date(artifacts_copy, copy_ws):
    """The real build's folder copied elsewhere (`cp -a artifacts /tmp/x && deploytui --artifacts
    /tmp/x build`): every step of the whole build finds itself up to date there (its
    fingerprint names the artifacts folder $ART, not where it is)."""
    events = []
    run_build(BuildContext.of(copy_ws), on_event=events.append)
    ends = [(e.step, e.status, e.text) for e in events if e.kind == "end"]
    assert ends and all(status == "up-to-date" for _, status, _ in ends), ends
    assert not [e.text for e in events if e.kind == "line"]  # nothing said stale


def test_an_on_demand_step_left_cancelled_is_not_the_builds_failure(artifacts_copy, copy_ws, capsys):
    """The Serve screen's dynamic-batch exports run on demand; one cancelled there (escape
    mid-export) stays a failed record, which `deploytui build` neither runs nor reports: it said
    `build: 2 step(s) failed: export-dyn-aoti, export-dyn-aoti-lean` and exited 1 ever after."""
    from deploytui.builder import selected
    from deploytui.spec import manifest
    from deploytui.views.cli.main import main

    ctx = BuildContext.of(copy_ws)
    on_demand = [s.name for s in plan(ctx) if s.on_demand]
    assert on_demand and not set(on_demand) & {s.name for s in selected(ctx)}
    cancelled = manifest.StepRecord(StepStatus.FAILED, reason="cancelled")
    manifest.store(ctx.mdir).update(lambda m: m.steps.update(dict.fromkeys(on_demand, cancelled)))
    assert main(["build", "--artifacts", str(artifacts_copy)]) == 0, capsys.readouterr().err[-2000:]
    assert "failed" not in capsys.readouterr().err
    assert [s.name for s in selected(ctx, on_demand[:1])] == on_demand[:1]  # named, it runs again


def test_damaged_output_is_rebuilt_and_the_log_says_why(artifacts_copy, copy_ws):
    a1 = artifacts_copy / "a1"
    with open(a1 / "a1_export.pt2", "r+b") as f:
        f.truncate(1000)  # smaller: caught by the size check
    ref = a1 / "model.json"
    ref.write_bytes(ref.read_bytes().replace(b"{", b" ", 1))  # same size: caught by the hash
    script = a1 / "a1_script.pt"
    os.utime(script, ns=(script.stat().st_atime_ns, script.stat().st_mtime_ns + 10**9))  # touched only
    events = []
    manifest = run_build(
        BuildContext.of(copy_ws),
        only=["export-model", "export-script", "export-torch-export"],
        on_event=events.append,
    )
    ends = {e.step: e.status for e in events if e.kind == "end"}
    assert ends == {"export-model": "ok", "export-script": "up-to-date", "export-torch-export": "ok"}
    lines = [e.text for e in events if e.kind == "line"]
    assert "stale: output a1/a1_export.pt2 changed since it was built" in lines
    assert "stale: output a1/model.json changed since it was built" in lines
    for name in ("a1/a1_export.pt2", "a1/model.json"):
        assert (artifacts_copy / name).stat().st_size == manifest.artifacts[name].size
    assert manifest.artifacts["a1/a1_script.pt"].mtime_ns == script.stat().st_mtime_ns  # hashed once only
    assert (a1 / "logs" / "export-model.log").read_text().startswith("$ ")


def test_built_steps_stay_up_to_date_without_their_tools(artifacts_copy, copy_ws, monkeypatch):
    from deploytui.families import registry
    from deploytui.spec import manifest as manifest_file

    ctx = BuildContext.of(copy_ws)
    bare = artifacts_copy.parent / "bin-without-tools"
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))  # no g++, no cargo
    cc_and_cargo = [
        "export-aoti",
        "export-aoti-lean",
        "cpp-build",
        "burn-tools",
        "burn-convert",
        "burn-embed",
        "burn-capture",
    ]
    events = []
    manifest = run_build(ctx, only=cc_and_cargo, on_event=events.append)
    assert {e.step: e.status for e in events if e.kind == "end"} == dict.fromkeys(cc_and_cargo, "up-to-date")
    for key in ("aoti-python", "cpp-aoti-lean", "burn-file", "burn-embed"):
        assert manifest_file.availability(registry.get(key), copy_ws, manifest) == "", key
    (artifacts_copy / "a1" / "bin" / "burn-embed").write_bytes(b"damaged")  # burn-embed has to run
    manifest = run_build(ctx, only=["burn-convert", "burn-embed"], on_event=lambda e: None)
    assert manifest.steps["burn-convert"].status == StepStatus.OK
    assert manifest.steps["burn-embed"].status == StepStatus.UNAVAILABLE
    assert manifest.steps["burn-embed"].reason == "cargo not found on PATH"
    assert "cargo not found" in manifest_file.availability(registry.get("burn-embed"), copy_ws, manifest)


def test_decisive_line_is_the_tools_own_words():
    from deploytui.builder import decisive_line

    torch_log = [
        "Traceback (most recent call last):",
        "  File x",
        "error: GuardOnDataDependentSymNode: Could not",
    ]
    assert decisive_line(torch_log) == "error: GuardOnDataDependentSymNode: Could not"
    cargo = [
        "   Compiling burn-onnx-gen v0.1.0",
        "error[E0425]: cannot find value `x` in this scope",
        'error: could not compile `burn-onnx-gen` (bin "burn-onnx-default") due to 1 previous error',
        "error: cargo build of burn-onnx-default failed (exit 101)",
    ]
    assert decisive_line(cargo) == "error[E0425]: cannot find value `x` in this scope"
    gxx = [
        "g++ -O2 ...",
        "cpp/aoti_run.cpp:12:3: error: 'foo' was not declared in this scope",
        "error: g++ failed (exit 1)",
    ]
    assert decisive_line(gxx) == "cpp/aoti_run.cpp:12:3: error: 'foo' was not declared in this scope"
    panic = [
        "error: failed to run custom build command for `burn-onnx-gen v0.1.0`",
        "thread 'main' panicked at build.rs:60:10:",
        "Unsupported ONNX operation(s): Foo (node 'foo_1')",
        "error: cargo build of burn-onnx-default failed (exit 101)",
    ]
    assert decisive_line(panic) == "Unsupported ONNX operation(s): Foo (node 'foo_1')"


def test_steps_run_side_by_side_after_what_they_need_one_cargo_step_at_a_time(tmp_path, monkeypatch):
    """Each step starts once the steps it names in `after`, and those that write its inputs,
    have ended; at most `jobs` at once; never two cargo steps together. Each step here appends
    its start and end to one file, so what overlapped is read from what the steps saw."""
    import sys

    import deploytui.builder as builder
    from deploytui.core.modelref import parse
    from deploytui.spec.steps import Step

    trace = tmp_path / "trace"
    art = tmp_path / "art"
    made = art / "a1" / "made.txt"

    def step(name, seconds, after=(), inputs=(), outputs=(), needs=()):
        code = (
            f"import sys, time; open({str(trace)!r}, 'a').write('start {name}\\n'); time.sleep({seconds}); "
            + "".join(f"open({str(o)!r}, 'w').write('x'); " for o in outputs)
            + f"open({str(trace)!r}, 'a').write('end {name}\\n')"
        )
        return Step(
            name, name, (sys.executable, "-c", code), tuple(inputs), tuple(outputs), needs, tuple(after)
        )

    fake_cargo = tmp_path / "bin" / "cargo"
    fake_cargo.parent.mkdir()
    fake_cargo.write_text("#!/bin/sh\n")
    fake_cargo.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake_cargo.parent}:{os.environ['PATH']}")
    steps = [
        step("first", 0.3),
        step("writer", 0.6, outputs=(made,)),
        step("reader", 0.1, inputs=(made,)),  # needs the writer through its input only
        step("after-first", 0.1, after=("first",)),
        step("cargo-a", 0.4, needs=("cargo",)),
        step("cargo-b", 0.4, needs=("cargo",)),
    ]
    monkeypatch.setattr(builder, "plan", lambda ctx: steps)
    ctx = BuildContext(
        root=tmp_path, art=art, cache=tmp_path / "cache", python=sys.executable, model=parse("a1")
    )
    events = []
    manifest = run_build(ctx, on_event=events.append, jobs=2)
    assert {n: r.status for n, r in manifest.steps.items()} == {s.name: "ok" for s in steps}
    seen = trace.read_text().split("\n")[:-1]
    assert seen.index("end writer") < seen.index("start reader")
    assert seen.index("end first") < seen.index("start after-first")
    assert seen.index("start writer") < seen.index("end first")  # two at once
    running, most = set(), 0
    for line in seen:
        kind, name = line.split()
        running = running | {name} if kind == "start" else running - {name}
        most = max(most, len(running))
        assert not {"cargo-a", "cargo-b"} <= running
    assert most == 2
    ends = [e for e in events if e.kind == "end"]
    assert sorted(e.index for e in ends) == list(range(1, len(steps) + 1))


def test_a_moved_artifacts_folder_keeps_its_steps_up_to_date(tmp_path, monkeypatch):
    """Steps whose commands, inputs and outputs name the artifacts folder: built in one folder,
    the folder copied (mtimes kept, as `cp -a`), the copy's build runs nothing; a changed input
    in the copy makes its step stale there."""
    import shutil
    import sys

    import deploytui.builder as builder
    from deploytui.core.modelref import parse
    from deploytui.spec.steps import Step

    def steps_of(ctx):
        src, out, more = ctx.mdir / "src.txt", ctx.mdir / "out.txt", ctx.mdir / "more.txt"
        copy = "import sys, shutil; shutil.copy(sys.argv[1], sys.argv[2])"
        return [
            Step("copy", "copy", (sys.executable, "-c", copy, str(src), str(out)), (src,), (out,)),
            Step("more", "more", (sys.executable, "-c", copy, str(out), str(more)), (out,), (more,)),
        ]

    monkeypatch.setattr(builder, "plan", steps_of)

    def ctx_at(art):
        return BuildContext(tmp_path, art, tmp_path / "cache", sys.executable, parse("a1"))

    first, moved = tmp_path / "first" / "artifacts", tmp_path / "elsewhere" / "art"
    (first / "a1").mkdir(parents=True)
    (first / "a1" / "src.txt").write_text("x")

    def statuses(art):
        events = []
        run_build(ctx_at(art), on_event=events.append)
        return {e.step: e.status for e in events if e.kind == "end"}

    assert statuses(first) == {"copy": "ok", "more": "ok"}
    assert statuses(first) == {"copy": "up-to-date", "more": "up-to-date"}
    shutil.copytree(first, moved, symlinks=True)  # copy2: content and mtimes
    assert statuses(moved) == {"copy": "up-to-date", "more": "up-to-date"}
    (moved / "a1" / "src.txt").write_text("y")
    assert statuses(moved) == {"copy": "ok", "more": "ok"}
    assert (moved / "a1" / "more.txt").read_text() == "y"
    assert (first / "a1" / "more.txt").read_text() == "x"  # the first folder untouched
