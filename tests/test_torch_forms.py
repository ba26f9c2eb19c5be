"""Real exports, real runs: the five PyTorch forms and ONNX Runtime through the measuring core."""

import pytest

from deploytui.core import runenv
from deploytui.families import registry
from deploytui.scenarios.startup import bench
from workspaces import A1

PYTHON_FORMS = [
    "torch-eager",
    "torchscript-script",
    "torchscript-trace",
    "torch-export",
    "aoti-python",
    "onnxruntime",
]


@pytest.mark.slow
@pytest.mark.parametrize("key", PYTHON_FORMS)
def test_python_form_runs_and_matches_eager(built_artifacts, key):
    rec = bench.bench_form(registry.get(key), n=2, warmup=0, timeout_s=300, ws=A1)
    assert rec.status == "ok", (rec.error, rec.stderr_tail)
    assert rec.within_tol is True
    if key != "onnxruntime":
        assert rec.max_abs_diff == 0.0  # bit-identical to eager, as on the page
    assert len(rec.wall_s) == 2 and all(b > 10 * 2**20 for b in rec.peak_rss_bytes)
    assert set(rec.stages_ms) == {"import", "load", "first_forward", "steady_forward"}
    assert rec.stage is None and set(rec.stage_status.values()) == {"ok"}
    assert rec.outputs[0].shape == [4, 3] and (rec.outputs[0].atol, rec.outputs[0].rtol) == (1e-6, 0.0)


@pytest.mark.slow
def test_torch_export_load_imports_sympy(built_artifacts):
    rec = bench.bench_form(registry.get("torch-export"), n=1, warmup=0, timeout_s=300, ws=A1)
    assert rec.modules_added.get("sympy", 0) > 100, rec.modules_added
    torch_own = rec.modules_added_torch
    assert sum(torch_own.values()) == rec.modules_added["torch"], torch_own
    assert torch_own.get("torch._dynamo", 0) > 10, torch_own


def test_package_counts_top_level_and_one_level_down():
    from deploytui.runners.protocol import package_counts

    names = {
        "sympy",
        "sympy.core",
        "sympy.core.add",
        "torch._dynamo",
        "torch._dynamo.utils",
        "torch.distributed.rpc",
        "torch.fx",
    }
    assert package_counts(names) == {"torch": 4, "sympy": 3}
    assert package_counts(names, "torch") == {"torch._dynamo": 2, "torch.distributed": 1, "torch.fx": 1}
    assert package_counts(names, "torch._dynamo") == {"torch._dynamo.utils": 1}


@pytest.mark.slow
def test_aoti_lean_package_loads_in_python_with_rtld_global(built_artifacts, tmp_path):
    from deploytui.core.measure import run_once
    from deploytui.judge import numerics

    out = tmp_path / "out.safetensors"
    s = run_once(
        [
            bench.paths.python(),
            "-m",
            "deploytui.families.pytorch.torch_runner",
            "aoti-lean",
            str(built_artifacts / "a1" / "a1_aoti_lean.pt2"),
            "--inputs",
            str(A1.inputs_path),
            "--outputs",
            str(out),
            "--repeat",
            "0",
        ],
        env=runenv.runner_env(),
        timeout_s=300,
    )
    assert s.ok, s.stderr_tail
    assert bench.parse_output(s.stdout)["outputs"] == 1
    (d,) = numerics.compare_files(out, A1.reference_path, 0.0, 0.0)
    assert d.max_abs == 0.0


def test_manifest_records_exports_and_deprecation_warnings(built_artifacts):
    from deploytui.builder import FORKED
    from deploytui.spec import manifest

    m = manifest.load(A1)
    ts = m.facts("export-script")
    assert any("torch.jit.script" in w and "deprecated" in w for w in ts["warnings"])
    # the build forked its exports from one process (deploytui.builder.forkserver): a step's log says so
    assert (A1.artifacts / m.steps["export-script"].log).read_text().splitlines()[1] == FORKED
    assert m.artifacts["a1/a1.safetensors"].size > 0 and len(m.artifacts["a1/a1.onnx"].sha256) == 64
    assert m.facts("export-onnx")["nodes"] == ["Gemm", "Relu", "Gemm"]
    assert m.tools["torch"].startswith("2.15.0")


def test_runner_reports_missing_model_in_one_line(tmp_path):
    from deploytui.core.measure import run_once

    s = run_once(
        [
            bench.paths.python(),
            "-m",
            "deploytui.families.pytorch.torch_runner",
            "jit",
            str(tmp_path / "no.pt"),
            "--inputs",
            str(tmp_path / "in.safetensors"),
            "--outputs",
            str(tmp_path / "out.safetensors"),
        ]
    )
    assert s.exit_code == 1 and len(s.stderr_tail) == 1 and "not found" in s.stderr_tail[0]
