"""The C++ libtorch forms: cpp-torchscript, cpp-aoti (default AOTI package), cpp-aoti-lean.

Integration tests need the session fixture `built_artifacts` (tests/conftest.py): the full
build, run once (the C++ programs are compiled by it, once per session).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest

from cpp_support import A1_CASES, built_loaders, private_tmp_env, run_program
from deploytui.core.modelref import parse
from deploytui.families.executorch import plan as executorch_plan
from deploytui.families.libtorch import plan as libtorch_plan
from deploytui.families.openvino import plan as openvino_plan
from deploytui.models import a1
from deploytui.spec.context import BuildContext

TOL = 1e-6


@pytest.fixture(scope="module")
def art(built_artifacts) -> Path:
    return built_loaders(built_artifacts)


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    return private_tmp_env(tmp_path)


_run = run_program


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _protocol_args(art: Path, tmp: Path) -> list[str]:
    return ["--inputs", str(art / "a1" / "inputs.safetensors"), "--outputs", str(tmp / "out.safetensors")]


@pytest.mark.parametrize("form", list(A1_CASES))
def test_runs_and_matches_eager(art, eager, env, form, tmp_path):
    from deploytui.core import tensorfile

    exe, model = A1_CASES[form]
    proc = _run([art / "shared" / "bin" / exe, art / "a1" / model, *_protocol_args(art, tmp_path)], env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout
    assert set(json.loads(lines[0])["stages_ms"]) == {"load", "first_forward", "steady_forward"}
    (out,) = tensorfile.read(tmp_path / "out.safetensors").values()
    assert out.shape == a1.OUTPUT_SHAPE
    rows = [out.values[r * 3 : r * 3 + 3] for r in range(a1.OUTPUT_SHAPE[0])]
    diff = max(abs(a - b) for ra, rb in zip(rows, eager, strict=True) for a, b in zip(ra, rb, strict=True))
    assert diff <= TOL
    # the f32 outputs are the eager floats exactly
    assert [[_f32(v) for v in row] for row in rows] == eager
    # the AOTI loader's unpack folder is gone after the run
    assert os.listdir(env["TMPDIR"]) == []


def _assert_one_line_error(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    assert "terminate called" not in proc.stderr


def _bad_models(art: Path, tmp: Path) -> dict[str, list[str]]:
    corrupt = tmp / "corrupt.pt"
    corrupt.write_bytes(b"this is not a zip archive\n" * 10)
    truncated = tmp / "truncated.pt2"
    truncated.write_bytes((art / "a1" / "a1_aoti.pt2").read_bytes()[:2000])
    empty_zip = tmp / "empty.pt2"
    with zipfile.ZipFile(empty_zip, "w") as z:
        z.writestr("x/readme.txt", "no model here")
    io = _protocol_args(art, tmp)
    return {
        "no-args": [],
        "two-args": ["a", "b", *io],
        "model-alone (no legacy mode)": [str(art / "a1" / "a1_script.pt")],
        "missing": [str(tmp / "does-not-exist.pt"), *io],
        "corrupt": [str(corrupt), *io],
        "truncated": [str(truncated), *io],
        "zip-without-model": [str(empty_zip), *io],
    }


@pytest.mark.parametrize("exe", ["cpp-torchscript", "cpp-aoti"])
def test_bad_input_is_one_line_error(art, env, tmp_path, exe):
    for case, args in _bad_models(art, tmp_path).items():
        proc = _run([art / "shared" / "bin" / exe, *args], env)
        try:
            _assert_one_line_error(proc)
        except AssertionError as e:
            raise AssertionError(f"{exe} {case}: {e}") from None
    # a failed AOTI load must not leave its unpack folder behind either
    assert os.listdir(env["TMPDIR"]) == []


def test_wrong_kind_of_model_is_one_line_error(art, env, tmp_path):
    io = _protocol_args(art, tmp_path)
    _assert_one_line_error(
        _run([art / "shared" / "bin" / "cpp-torchscript", art / "a1" / "a1_aoti.pt2", *io], env)
    )
    _assert_one_line_error(_run([art / "shared" / "bin" / "cpp-aoti", art / "a1" / "a1_script.pt", *io], env))


def test_links_only_libtorch_cpu_and_c10(art):
    """No -ltorch: libtorch.so (and with it libtorch_cuda) is not a direct dependency."""
    from deploytui.inspectors import elf

    for exe in ("cpp-torchscript", "cpp-aoti"):
        report = elf.ldd(art / "shared" / "bin" / exe)
        names = {lib.name for lib in report.libraries}
        assert {"libtorch_cpu.so", "libc10.so"} <= names
        assert "libtorch.so" not in names and "libtorch_cuda.so" not in names
        assert report.not_found == ()


def test_step_definition():
    ctx = BuildContext(root=Path("/r"), art=Path("/a"), cache=Path("/c"), python="/py", model=parse("a1"))
    (step,) = libtorch_plan.steps(ctx)
    (et_step,) = [s for s in executorch_plan.steps(ctx) if s.name == "cpp-executorch-build"]
    (ov_step,) = [s for s in openvino_plan.steps(ctx) if s.name == "cpp-openvino-build"]
    assert et_step.name == "cpp-executorch-build" and et_step.outputs == (ctx.bin / "cpp-executorch",)
    assert ov_step.name == "cpp-openvino-build" and ov_step.outputs == (ctx.bin / "cpp-openvino",)
    assert Path("/r/cpp/openvino_run.cpp") in ov_step.inputs and "--openvino" in ov_step.argv
    assert Path("/r/cpp/protocol.h") in step.inputs and Path("/r/cpp/protocol.h") in et_step.inputs
    assert step.name == "cpp-build" and step.scope == "shared"
    assert ctx.bin == Path("/a/shared/bin")
    assert step.outputs == (ctx.bin / "cpp-torchscript", ctx.bin / "cpp-aoti")
    assert "g++" in step.needs
    assert step.argv[:3] == ("/py", "-m", "deploytui.families.common.cpp_cmd")
    assert Path("/r/cpp/aoti_run.cpp") in step.inputs
    assert Path("/r/cpp/safetensors.h") in step.inputs
    assert any(p.name == "version.py" for p in step.inputs)


def test_step_built_both_programs(art):
    """The session build's cpp-build step (one compile per session, not one per test): both
    programs are there, with the facts the step printed, and they are what it says."""
    from deploytui.core.modelref import parse
    from deploytui.core.workspace import Workspace
    from deploytui.spec import manifest

    step = manifest.load(Workspace.at(parse("a1"), art)).steps["cpp-build"]
    assert step.status == "ok" and step.scope == "shared"
    facts = step.facts
    assert set(facts["programs"]) == {"cpp-torchscript", "cpp-aoti"}
    for name, info in facts["programs"].items():
        out = art / "shared" / "bin" / name
        assert out.is_file() and os.access(out, os.X_OK)
        assert info["size_bytes"] == out.stat().st_size
        assert info["compile_s"] > 0
        assert "libtorch.so" not in info["needed"]
    # cpp-aoti carries DT_RPATH (searched for the dlopen'ed model .so's libtorch.so); no stray temp files
    assert facts["programs"]["cpp-aoti"]["rpath"]
    stray = [p.name for p in (art / "shared" / "bin").iterdir() if p.suffix == ".o" or ".tmp" in p.name]
    assert not stray
