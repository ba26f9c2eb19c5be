"""Fixed artifacts folders for the app's tests: a1's manifest (and the shared one), the eager
reference, stored results and outputs, and one fake but real form (a tiny Python script that
writes the reference outputs and prints the runner protocol's JSON line)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from deploytui.core import tensorfile, units
from deploytui.families import registry
from deploytui.judge import numerics
from deploytui.spec import forms

REFERENCE = [[-0.132, -0.07, 0.127], [-0.106, 0.002, 0.105], [-0.114, 0.084, 0.072], [-0.127, 0.142, 0.056]]
FLAT = [units.f32(v) for r in REFERENCE for v in r]
FAKE_KEY = "burn-embed"  # the registry slot the fake form takes over in live-run tests

FAKE_RUNNER = f"""\
import json, os, sys, time
from deploytui.core import tensorfile
wait = sys.argv[1] if len(sys.argv) > 1 else "0"
if wait.startswith("/"):  # a gate: stay in flight until the test creates that file (60 s at most)
    until = time.monotonic() + 60
    while not os.path.exists(wait) and time.monotonic() < until:
        time.sleep(0.02)
else:
    time.sleep(float(wait))
out = sys.argv[sys.argv.index("--outputs") + 1]
tensorfile.write(out, {{"output_0": tensorfile.Tensor("F32", (4, 3), {FLAT!r})}})
stages = {{"load": 0.5, "first_forward": 0.1, "steady_forward": 0.05}}
print(json.dumps({{"stages_ms": stages, "outputs": 1}}))
"""


def _outputs(bump: float) -> list[float]:
    """The form's output_0 as stored: the reference with element [2, 1] off by `bump`."""
    return [units.f32(v + (bump if i == 2 * 3 + 1 else 0.0)) for i, v in enumerate(FLAT)]


def record(
    key: str,
    walls_ms: list[float],
    rss_mb: float,
    *,
    bump: float = 0.0,
    stages: bool = False,
    status: str = "ok",
    error: str | None = None,
    stderr: list[str] | None = None,
) -> dict:
    diff = (  # as a real run stores it
        numerics.compare_output("output_0", _outputs(bump), [4, 3], FLAT, [4, 3], 1e-6, 0.0).to_json()
        if status == "ok"
        else None
    )
    return {
        "form": key,
        "argv": [key],
        "cwd": ".",
        "model": "a1",
        "status": status,
        "error": error
        or (
            f"output_0 differs from eager by {bump:.3g} (1 of 12 elements outside atol 1e-06 + rtol 0·|want|)"
            if diff and not diff["within_tol"]
            else None
        ),
        "wall_s": [w / 1e3 for w in walls_ms],
        "peak_rss_bytes": [int(rss_mb * (1 << 20))] * len(walls_ms),
        "exit_codes": [0] * len(walls_ms),
        "stages_ms": {"import": 1210.5, "load": 380.2, "first_forward": 2.4, "steady_forward": 0.9}
        if stages
        else {"load": 1.1, "first_forward": 0.2, "steady_forward": 0.1},
        "modules_added": {"sympy": 420, "torch": 353, "numpy": 41} if stages else None,
        "modules_added_torch": {"torch.distributed": 115, "torch._dynamo": 97, "torch.fx": 40}
        if stages
        else None,
        "modules_added_total": 814 if stages else None,
        "outputs": [diff] if diff else None,
        "max_abs_diff": diff["max_abs"] if diff else None,
        "within_tol": diff["within_tol"] if diff else None,
        "stage": None if status == "ok" and diff["within_tol"] else ("numerics" if status == "ok" else "run"),
        "stage_status": {"export": "ok", "build": "ok", "run": "ok" if status == "ok" else "failed"},
        "log": None,
        "stderr_tail": stderr or [],
        "n": len(walls_ms),
        "warmup": 1,
        "measured_at": "2026-01-02T03:04:05+0000",
    }


FIXED_RESULTS = {
    "torch-export": record("torch-export", [3490, 3510, 3470, 3620, 3400, 3555], 812, stages=True),
    "onnxruntime": record("onnxruntime", [262, 270, 255, 301, 266, 258], 53.3, stages=True, bump=3e-5),
    "cpp-aoti": record("cpp-aoti", [380, 390, 372, 401], 480),
    "burn-embed": record("burn-embed", [3.1, 3.3, 2.9, 3.0, 3.2], 2.8),
    "cpp-torchscript": record(
        "cpp-torchscript",
        [12.0],
        9.0,
        status="failed",
        error="exit 101: thread 'main' panicked at model file missing",
        stderr=[
            "terminate called after throwing an instance of 'c10::Error'",
            "  what():  open file failed because of errno 2 on fopen",
        ],
    ),
}


def make_artifacts(root: Path, *, results: dict | None = None, built: tuple[str, ...] | None = None) -> Path:
    """An artifacts root (a1's folder and shared/) where the forms in `built` (default: all)
    count as built; stored results come with the outputs their runs wrote."""
    from deploytui.core.modelref import parse
    from deploytui.core.workspace import Workspace
    from deploytui.spec import manifest as manifest_file

    art = root / "artifacts"
    ws = Workspace.at(parse("a1"), art)
    a1 = art / "a1"
    (a1 / "outputs").mkdir(parents=True, exist_ok=True)
    keep = set(built if built is not None else [f.key for f in registry.FORMS])
    steps, artifacts = {}, {}
    shared = {"cpp-build", "burn-tools"}
    for f in registry.FORMS:
        if f.key not in keep:
            continue
        for s in f.steps:
            scope = "shared" if s in shared else "model"
            steps[s] = manifest_file.StepRecord(manifest_file.StepStatus.OK, wall_s=1.0, scope=scope)
        # every file the form may ship, optional ones included
        optional = [o.replace("{m}", "a1") for o in f.optional_files]
        for key in dict.fromkeys([*f.ship_files(ws), *optional]):
            (art / key).parent.mkdir(parents=True, exist_ok=True)
            (art / key).write_bytes(b"x" * 100)
            artifacts[key] = manifest_file.ArtifactRecord(100, sha256="0" * 64, step=f.steps[0])
    tools = {"python": "3.11.7", "torch": "2.15.0+test", "onnx": "1.23.2"}
    manifest = manifest_file.Manifest(tools, steps, artifacts, model="a1")
    manifest_file.write(ws, manifest)
    info = {"model": "a1", "slug": "a1", "class": "Mlp", "params": 67}  # as export-model writes it
    info["inputs"] = [{"dtype": "F32", "shape": [4, 4]}]
    (a1 / "model.json").write_text(json.dumps(info))
    tensorfile.write(a1 / "reference.safetensors", {"output_0": tensorfile.Tensor("F32", (4, 3), FLAT)})
    if results:
        (a1 / "results.json").write_text(json.dumps({"version": 1, "forms": results}))
        for key, rec in results.items():
            for d in rec.get("outputs") or []:
                values = [e for e in FLAT]
                for e in d["worst"]:
                    values[e["index"][0] * 3 + e["index"][1]] = e["got"]
                tensorfile.write(
                    a1 / "outputs" / f"{key}.safetensors",
                    {"output_0": tensorfile.Tensor("F32", (4, 3), values)},
                )
    return art


def install_fake_form(monkeypatch, art: Path, sleep_s: float = 0.15, gate: Path | None = None) -> forms.Form:
    """Replace FAKE_KEY in the registry with a form that runs fake_runner.py (prints the reference)
    after `sleep_s`, or, given a `gate`, once that file exists: in flight for as long as a test
    needs, however loaded the machine."""
    (art / "a1" / "fake_runner.py").write_text(FAKE_RUNNER)
    fake = dataclasses.replace(
        registry.get(FAKE_KEY),
        title="fake runner (test)",
        model_files=("{m}/fake_runner.py",),
        executable=None,
        runner="fake_runner.py (test script)",
        runtime=forms.NO_RUNTIME,
        argv=("{python}", "{art}/{m}/fake_runner.py", str(gate) if gate else str(sleep_s)),
        steps=("burn-embed",),
        mlp_only=False,
        inspect=(),
    )
    new = tuple(fake if f.key == FAKE_KEY else f for f in registry.FORMS)
    monkeypatch.setattr(registry, "FORMS", new)
    monkeypatch.setattr(registry, "BY_KEY", {f.key: f for f in new})
    return fake


def a1_at(art: Path):
    """a1's workspace in the artifacts folder `art` (its bundles beside it)."""
    from deploytui.core.modelref import parse
    from deploytui.core.workspace import Workspace

    return Workspace.at(parse("a1"), art, art.parent / "bundles")


def full_results() -> dict:
    """Every registered form measured (fixed figures, spread over µs to seconds and K to G, one
    beyond tolerance, one failed run): the screens at their fullest, for the layout tests."""
    out = {}
    for i, f in enumerate(registry.FORMS):
        start_ms = [0.9, 3.1, 41.0, 262.0, 3490.0][i % 5] * (1 + i / 50)
        rss_mb = [2.8, 29.8, 53.3, 480.0, 1300.0][(i + 2) % 5] * (1 + i / 40)
        if i == 7:
            out[f.key] = record(f.key, [12.0], 9.0, status="failed", error="exit 101: model file missing")
        else:
            out[f.key] = record(
                f.key, [start_ms] * 5, rss_mb, stages=i % 3 == 0, bump=3e-5 if i == 4 else 0.0
            )
    return out
