"""The runtimes beyond PyTorch and burn (issue 14): tract, onnxruntime-native, executorch and
cpp-executorch, on the real a1 build (`built_artifacts`). The zoo's matrix (tests/test_zoo.py)
runs them for every other model; the truncated-artifact and no-cargo faults are in test_faults.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from deploytui.families import registry
from deploytui.inspectors import elf
from deploytui.scenarios.startup import bench
from deploytui.spec import manifest
from deploytui.views import form_view
from workspaces import A1

ROOT = Path(__file__).resolve().parents[1]
NEW = ("tract", "onnxruntime-native", "executorch", "cpp-executorch")

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("key", NEW)
def test_runs_a1_and_matches_eager_with_its_stages(built_artifacts, key):
    rec = bench.bench_form(registry.get(key), n=1, warmup=0, repeat=3, timeout_s=300, ws=A1)
    assert rec.status == "ok" and rec.within_tol is True, (rec.error, rec.stderr_tail)
    assert set(rec.stages_ms) >= {"load", "first_forward", "steady_forward"}, rec.stages_ms
    if key in ("onnxruntime-native", "executorch"):  # loading the runtime itself is a stage of its own
        assert "import" in rec.stages_ms, rec.stages_ms


def test_tract_lists_its_optimised_nodes(built_artifacts):
    (nodes,) = [
        s
        for s in form_view.sections(registry.get("tract"), manifest.load(A1), A1)
        if s.title.startswith("the model as tract optimised it")
    ]
    ops = [r[1] for r in nodes.rows]
    assert ops[0] == "Source" and "OptMatMul" in ops, ops  # Gemm + Relu fused into tract's matmuls
    assert nodes.rows[0][2] == "F32 4,4"  # typed from the example inputs


def test_delegation_names_what_xnnpack_took(built_artifacts):
    secs = form_view.sections(registry.get("cpp-executorch"), manifest.load(A1), A1)
    (table,) = [s for s in secs if s.title.startswith("XNNPACK delegation")]
    by_op = {r[0]: (int(r[1]), int(r[2])) for r in table.rows}
    assert by_op["aten_linear_default"] == (2, 0) and by_op["aten_relu_default"] == (1, 0), by_op
    assert "3 nodes in 1 delegated subgraph(s)" in table.title


def test_tract_and_ort_run_link_no_runtime_and_ort_loads_the_wheels_library(built_artifacts):
    for exe in ("tract-run", "ort-run"):
        report = elf.ldd(built_artifacts / "shared" / "bin" / exe)
        assert all(lib.system for lib in report.libraries), (exe, report.libraries)
    facts, why = manifest.runtime_facts(registry.get("onnxruntime-native"), A1)
    assert facts is not None, why
    libs = [lib for lib in facts["libraries"] if not lib["system"]]
    assert any(Path(lib["path"]).name.startswith("libonnxruntime.so.") for lib in libs), libs
    assert facts["runtime_bytes"] > 10_000_000  # ~35 MB of ONNX Runtime, without Python


def test_cpp_executorch_links_the_wheels_runtime_and_no_libtorch(built_artifacts):
    report = elf.ldd(built_artifacts / "shared" / "bin" / "cpp-executorch")
    names = {lib.name for lib in report.libraries if not lib.system}
    assert {
        "libexecutorch.so",
        "libexecutorch_backend_xnnpack.so",
        "libexecutorch_kernels_optimized.so",
    } <= names
    assert not any(n.startswith(("libtorch", "libc10", "libpython")) for n in names), names
    facts, why = manifest.runtime_facts(registry.get("cpp-executorch"), A1)
    assert facts is not None, why
    assert facts["runtime_bytes"] < 50_000_000  # against libtorch's hundreds of MiB


def test_protocol_errors_are_one_line(built_artifacts, tmp_path):
    a1 = built_artifacts / "a1"
    io = ["--inputs", str(a1 / "inputs.safetensors"), "--outputs", str(tmp_path / "o.safetensors")]
    for key, model in (
        ("tract", a1 / "a1.pte"),
        ("onnxruntime-native", a1 / "a1.pte"),
        ("cpp-executorch", a1 / "a1.onnx"),
    ):
        exe = registry.get(key).executable_path(A1)
        assert exe is not None
        proc = subprocess.run(
            [str(exe), str(model), *io], capture_output=True, text=True, timeout=60, check=False
        )
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), (key, proc.stderr)


def test_executorch_stays_out_of_the_app_and_the_pins_are_exact():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "executorch==1.5.1" in pyproject["project"]["dependencies"]
    assert "torch==2.15.0" in pyproject["project"]["dependencies"]
    lock = tomllib.loads((ROOT / "rust" / "Cargo.lock").read_text())
    versions = {p["name"]: p["version"] for p in lock["package"]}
    assert versions["tract-onnx"] == "0.23.9" and versions["ort"] == "2.0.0-rc.15", versions
    code = (
        "import json, sys, deploytui.views.tui.app, deploytui.spec.forms, deploytui.spec.manifest;"
        "import deploytui.scenarios.startup.bench;"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'executorch')))"
    )
    app = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert app.returncode == 0 and json.loads(app.stdout) == [], app.stderr
