"""Fixed artifacts folders for the app's tests: a manifest, the eager reference, stored results,
and one fake but real form (a tiny Python script that prints the reference logits as JSON)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from deploytui import forms, numerics

REFERENCE = [[-0.132, -0.07, 0.127], [-0.106, 0.002, 0.105], [-0.114, 0.084, 0.072], [-0.127, 0.142, 0.056]]
FAKE_KEY = "burn-embed"  # the registry slot the fake form takes over in live-run tests

FAKE_RUNNER = f"""\
import json, sys, time
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.0)
print(json.dumps({{"logits": {json.dumps(REFERENCE)}}}))
"""


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
    got = [
        [v + (bump if (i, j) == (2, 1) else 0.0) for j, v in enumerate(r)] for i, r in enumerate(REFERENCE)
    ]
    diff = numerics.compare(got, REFERENCE).to_json() if status == "ok" else None  # as a real run stores it
    return {
        "form": key,
        "argv": [key],
        "cwd": ".",
        "status": status,
        "error": error
        or (
            f"logits differ from eager by {bump:.3g} > tolerance 1e-06"
            if diff and not diff["within_tol"]
            else None
        ),
        "wall_s": [w / 1e3 for w in walls_ms],
        "peak_rss_bytes": [int(rss_mb * (1 << 20))] * len(walls_ms),
        "exit_codes": [0] * len(walls_ms),
        "stages_ms": {"import": 1210.5, "load": 380.2, "forward": 2.4} if stages else None,
        "modules_added": {"sympy": 420, "torch": 353, "numpy": 41} if stages else None,
        "modules_added_torch": {"torch.distributed": 115, "torch._dynamo": 97, "torch.fx": 40}
        if stages
        else None,
        "modules_added_total": 814 if stages else None,
        "logits": got if status == "ok" else None,
        "diff": diff,
        "max_abs_diff": diff["max_abs"] if diff else None,
        "within_tol": diff["within_tol"] if diff else None,
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
    """An artifacts folder where the forms in `built` (default: all) count as built."""
    art = root / "artifacts"
    (art / "bin").mkdir(parents=True, exist_ok=True)
    keep = set(built if built is not None else [f.key for f in forms.FORMS])
    steps, artifacts = {}, {}
    for f in forms.FORMS:
        if f.key not in keep:
            continue
        for s in f.steps:
            steps[s] = {"status": "ok", "reason": "", "wall_s": 1.0, "facts": {}, "log_tail": []}
        for rel in f.ship_files():
            (art / rel).parent.mkdir(parents=True, exist_ok=True)
            (art / rel).write_bytes(b"x" * 100)
            artifacts[rel] = {"size": 100, "sha256": "0" * 64, "step": f.steps[0]}
    manifest = {
        "version": 1,
        "tools": {"python": "3.11.7", "torch": "2.15.0+test", "onnx": "1.23.2"},
        "steps": steps,
        "artifacts": artifacts,
    }
    (art / "manifest.json").write_text(json.dumps(manifest))
    (art / "reference.json").write_text(json.dumps({"logits": REFERENCE, "torch": "2.15.0+test"}))
    if results:
        (art / "results.json").write_text(json.dumps({"version": 1, "forms": results}))
    return art


def install_fake_form(monkeypatch, art: Path, sleep_s: float = 0.15) -> forms.Form:
    """Replace FAKE_KEY in the registry with a form that runs fake_runner.py (prints the reference)."""
    (art / "fake_runner.py").write_text(FAKE_RUNNER)
    fake = dataclasses.replace(
        forms.get(FAKE_KEY),
        title="fake runner (test)",
        model_files=("fake_runner.py",),
        executable=None,
        runner="fake_runner.py (test script)",
        runtime=forms.NO_RUNTIME,
        argv=("{python}", "{art}/fake_runner.py", str(sleep_s)),
        steps=("burn-deploy",),
        inspect=(),
    )
    new = tuple(fake if f.key == FAKE_KEY else f for f in forms.FORMS)
    monkeypatch.setattr(forms, "FORMS", new)
    monkeypatch.setattr(forms, "BY_KEY", {f.key: f for f in new})
    return fake
