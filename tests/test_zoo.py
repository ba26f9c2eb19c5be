"""Every form for models other than a1, on real builds: the zoo (convnet, tinylm) and the fixture
models data_dependent and two_tower (nested inputs with int64 ids, a keyword tensor, a dict of
three outputs of two ranks).

Each model is built ONCE per session (`built_model`, session-scoped and incremental: a no-op
when its artifacts are up to date; the probe steps are left out) under the real artifacts root,
next to a1, then every form runs once (n=1, no warm-up, K=2) — the fixtures' int8 variants
only where they check words (`forms_of`). What works must match eager
within the model's tolerance; what cannot must say why, at its stage, in the tool's own words;
the hand-written burn forms are *not applicable* to models without the Mlp layout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deploytui.core import paths
from deploytui.core.modelref import parse
from deploytui.families import registry
from deploytui.scenarios.startup import bench
from deploytui.spec import forms, manifest
from workspaces import A1, built

HERE = Path(__file__).resolve().parent
MODELS = {
    "convnet": "convnet",
    "tinylm": "tinylm",
    "two_outputs": str(HERE / "models" / "two_outputs.py") + ":make",
    "int_input": str(HERE / "models" / "int_input.py") + ":make",
    "data_dependent": str(HERE / "models" / "data_dependent.py") + ":make",
    "two_tower": str(HERE / "models" / "two_tower.py") + ":with_kwargs",  # a dict and a keyword
    "scalars": str(HERE / "models" / "scalars.py") + ":make",  # 0-d in and out, five dtypes out
}
# The matrix's models: each is built whole and runs every form. two_tower's inputs and outputs
# take in what two_outputs (two outputs) and int_input (an int64 input beside a float one) check,
# so those two (~90 worker-seconds each) stay out of it; tinylm has a rank-2 int64 input.
MATRIX = ("convnet", "tinylm", "data_dependent", "two_tower")
GUARD = "GuardOnDataDependentSymNode"
# (model, form) -> (the stage that fails, words of the tool that stops it)
FAILS = {
    ("data_dependent", "torch-export"): ("export", GUARD),
    ("data_dependent", "aoti-python"): ("export", GUARD),
    ("data_dependent", "cpp-aoti"): ("export", GUARD),
    ("data_dependent", "cpp-aoti-lean"): ("export", GUARD),
    ("data_dependent", "onnxruntime"): ("export", GUARD),  # torch.onnx.export goes through torch.export
    ("data_dependent", "burn-onnx-file"): ("export", GUARD),
    ("data_dependent", "burn-onnx-embed"): ("export", GUARD),
    ("data_dependent", "burn-onnx-bpk"): ("export", GUARD),
    ("tinylm", "torchscript-trace"): ("export", "TracingCheckError"),
    ("data_dependent", "tract"): ("export", GUARD),
    ("data_dependent", "onnxruntime-native"): ("export", GUARD),
    ("data_dependent", "executorch"): ("export", GUARD),
    ("data_dependent", "cpp-executorch"): ("export", GUARD),
    ("data_dependent", "onnxruntime-int8"): ("export", GUARD),  # their .onnx is never written
    ("data_dependent", "onnxruntime-native-int8"): ("export", GUARD),
    ("data_dependent", "tract-int8"): ("export", GUARD),
    ("data_dependent", "executorch-int8"): ("export", GUARD),
    ("data_dependent", "cpp-executorch-int8"): ("export", GUARD),
    ("data_dependent", "aoti-python-int8"): ("export", GUARD),
    ("data_dependent", "cpp-aoti-int8"): ("export", GUARD),
}
# int8 variants that run but miss their accuracy budget, as measured here: data_dependent's IR,
# traced through one branch, which the accuracy set takes the other way (cosine 0.55: the fp32
# openvino form matches eager on the example input only); two_tower's NNCF int8 keeps cosine
# 0.54 of the score (a dot product of two int8 towers of random weights). (ExecuTorch's XNNPACK
# int8 misses it too on two_tower's `user` embedding, 0.976: a variant the matrix leaves out for
# the fixture, `forms_of`.)
OUTSIDE_BUDGET = {
    (name, key)
    for name in ("data_dependent", "two_tower")
    for key in ("openvino-int8", "openvino-native-int8")
}
# int8 variants whose accuracy depends on the CPU's int8 kernels: NNCF's static int8 of tinylm
# keeps cosine 0.999 on a VNNI CPU and falls to 0.986 on an AVX2-only EPYC (OpenVINO's u8×s8 path):
# either is a correct outcome, judged by the budget and said in its words when it misses
CPU_DEPENDENT = {("tinylm", "openvino-int8"), ("tinylm", "openvino-native-int8")}
MLP_ONLY = {f.key for f in registry.FORMS if f.mlp_only}
# two_tower checks the runner protocol of every fp32 form (nested inputs, int64 ids, a keyword,
# three outputs); the int8 exporters and the accuracy set run on convnet, tinylm (and a1:
# test_variants_build), so two_tower keeps only the variants whose words it checks (outside the
# budget): the suite's time on a fresh machine, where each int8 export compiles or calibrates again.
FIXTURE_VARIANTS = {"openvino-int8", "openvino-native-int8"}


def forms_of(name: str) -> list:
    """The forms the matrix runs for a model: all of them for the zoo and data_dependent (whose
    variants stop at export), the fp32 forms and FIXTURE_VARIANTS for two_tower."""
    if name != "two_tower":
        return list(registry.FORMS)
    return [f for f in registry.FORMS if not f.variant or f.key in FIXTURE_VARIANTS]


pytestmark = pytest.mark.slow

_built: dict[str, dict] = {}


@pytest.fixture(scope="session")
def built_model(built_artifacts):
    """name -> that model's manifest, built once per session (the shared programs come with a1)."""
    from deploytui.builder import plan, run_build, steps_for
    from deploytui.spec.context import BuildContext

    def build(name: str) -> dict:
        if name not in _built:
            ctx = BuildContext.of(built(MODELS[name]))
            steps = plan(ctx)
            needed = set(steps_for(ctx, forms_of(name)) or (s.name for s in steps))
            wanted = [s for s in steps if s.name in needed and not s.on_demand]
            only = [s.name for s in wanted if not s.name.startswith("probe-")]
            run_build(ctx, only=only)
            _built[name] = manifest.load(built(MODELS[name]))
        return _built[name]

    return build


@pytest.mark.spread
@pytest.mark.parametrize("name", MATRIX)
def test_every_form_works_or_says_why_at_its_stage(built_model, name):
    ws = built(MODELS[name])
    m = built_model(name)
    records = {
        f.key: bench.bench_form(f, n=1, warmup=0, repeat=2, timeout_s=300, manifest=m, ws=ws)
        for f in forms_of(name)
    }
    matrix = {k: r.stage or ("n/a" if r.status == "not-applicable" else "ok") for k, r in records.items()}
    for key, rec in records.items():
        where = (name, key, rec.status, rec.stage, rec.error)
        if key in MLP_ONLY:
            assert rec.status == "not-applicable" and rec.error == forms.MLP_ONLY, where
            assert set(rec.stage_status.values()) == {"not-applicable"}, where
        elif (name, key) in FAILS:
            stage, words = FAILS[(name, key)]
            assert rec.status == "failed" and rec.stage == stage and words in rec.error, where
            assert rec.stage_status[stage] == "failed" and rec.stage_status["run"] == "skipped", where
            log = ws.artifacts / rec.log
            assert log.is_file() and words in log.read_text(), where  # the full log, one key away
        elif (name, key) in OUTSIDE_BUDGET or (
            (name, key) in CPU_DEPENDENT and rec.accuracy is not None and not rec.accuracy.within_budget
        ):
            assert rec.status == "ok" and rec.stage == "numerics" and rec.accuracy is not None, where
            assert not rec.accuracy.within_budget and "outside its accuracy budget" in rec.error, where
        else:
            # an int8 variant is judged by its accuracy budget, any other form by the tolerance
            assert rec.status == "ok" and bench.judged_ok(rec), (where, matrix)
            assert (rec.accuracy is not None) == registry.get(key).variant, where
            assert rec.stage is None and set(rec.stage_status.values()) == {"ok"}, where
            assert set(rec.stages_ms) >= {"load", "first_forward", "steady_forward"}, where
            assert ws.outputs_path(key).is_file()  # the Diff view recomputes from it
    print(name, json.dumps(matrix))


def test_outputs_are_compared_one_by_one_whatever_their_rank_and_dtype(built_model):
    two = built(MODELS["two_tower"])
    rec = bench.bench_form(
        registry.get("burn-onnx-embed"), n=1, warmup=0, repeat=0, manifest=built_model("two_tower"), ws=two
    )
    assert rec.status == "ok", rec.error
    assert [(o.name, o.shape) for o in rec.outputs] == [("score", [4]), ("user", [4, 16]), ("item", [4, 16])]
    assert (rec.outputs[0].atol, rec.outputs[0].rtol) == (1e-5, 1e-5)
    assert "steady_forward" not in rec.stages_ms  # K=0: no steady forward to take the median of
    lm = built(MODELS["tinylm"])
    rec = bench.bench_form(
        registry.get("onnxruntime"), n=1, warmup=0, repeat=1, manifest=built_model("tinylm"), ws=lm
    )
    assert rec.status == "ok" and rec.outputs[0].shape[:2] == [1, 16], rec.error
    assert len(rec.outputs[0].worst) == 10 and rec.outputs[0].worst[0].abs_diff == rec.outputs[0].max_abs


def test_scalars_and_half_precision_through_the_openvino_and_executorch_runners(built_artifacts):
    """tests/models/scalars.py through the runners that failed it: a 0-d input and output (the
    OpenVINO C API refuses a rank-0 shape: `shape of total: invalid c input parameters`); each
    input and output under the IR's name (the CPU plugin drops the Converts beside them and the
    compiled port's `any_name` became theirs: `wrote outputs ['33', '38', 'mask', 'total']`);
    a bfloat16 output (cpp-executorch's table lacked it; OpenVINO's Python API hands it over as
    float16 bits), judged at bfloat16's tolerance (`numerics.HALF_RTOL`)."""
    from deploytui.builder import run_build, steps_for
    from deploytui.spec.context import BuildContext

    ws = built(MODELS["scalars"])
    ctx = BuildContext.of(ws)
    keys = ("openvino", "openvino-native", "cpp-executorch")
    run_build(ctx, only=steps_for(ctx, [registry.get(k) for k in keys]))
    m = manifest.load(ws)
    for key in keys:
        rec = bench.bench_form(registry.get(key), n=1, warmup=0, repeat=1, manifest=m, ws=ws)
        assert rec.status == "ok" and rec.within_tol, (key, rec.error)
        assert [(o.name, o.shape, o.rtol) for o in rec.outputs] == [
            ("total", [], 1e-5),
            ("mask", [3, 4], 1e-5),
            ("count", [3], 1e-5),
            ("y", [3, 4], 1e-5),
            ("head", [3, 3], 1.6e-2),
        ], key


def test_building_a_model_leaves_the_others_as_they_are(built_model):
    before = json.loads((A1.model_dir / "manifest.json").read_text())
    built_model("convnet")
    from deploytui.builder import run_build
    from deploytui.spec.context import BuildContext

    events = []
    run_build(BuildContext.of(A1), on_event=events.append)
    ends = [e for e in events if e.kind == "end"]
    assert ends and all(e.status in ("up-to-date", "unavailable", "skipped") for e in ends), [
        (e.step, e.status, e.text) for e in ends if e.status not in ("up-to-date",)
    ]
    after = json.loads((A1.model_dir / "manifest.json").read_text())
    assert {k: v.get("fingerprint") for k, v in after["steps"].items()} == {
        k: v.get("fingerprint") for k, v in before["steps"].items()
    }


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "deploytui", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ},
        cwd=paths.ROOT,
        check=False,
    )


def test_cli_bench_of_a_model_prints_its_records():
    res = _cli(
        "bench",
        "--model",
        MODELS["two_outputs"],
        "torch-eager",
        "burn-file",
        "-n",
        "1",
        "--warmup",
        "0",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["model"].endswith("two_outputs.py:make")
    eager, burn = doc["forms"]
    assert eager["status"] == "ok" and [o["name"] for o in eager["outputs"]] == ["0", "1"]
    assert burn["status"] == "not-applicable" and "Mlp" in burn["error"]
    res = _cli("models")
    assert res.returncode == 0 and "convnet" in res.stdout and "two_outputs.py:make" in res.stdout, res.stdout


@pytest.mark.parametrize(
    "ref", ["broken_import.py:make", "broken_factory.py:raises", "broken_factory.py:bad_dtype"]
)
def test_a_broken_model_gives_one_message_before_any_build(ref, tmp_path):
    model = str(HERE / "models" / ref)
    slug = parse(model).slug
    env = {**os.environ, "DEPLOYTUI_ARTIFACTS": str(tmp_path / "art")}
    for command in ("build", "bench"):
        res = subprocess.run(
            [sys.executable, "-m", "deploytui", command, "--model", model],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            cwd=paths.ROOT,
            check=False,
        )
        assert res.returncode == 2 and res.stdout == "", res.stdout
        (line,) = res.stderr.strip().splitlines()
        assert line.startswith("error: ") and "Traceback" not in res.stderr
    assert not (tmp_path / "art" / slug).exists()  # nothing was built
