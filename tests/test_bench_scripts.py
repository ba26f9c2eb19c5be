"""Every script under bench/ runs, in its quick mode, on a copy of the real build: none can rot
unnoticed (bench/ui_latency.py looked for a file the per-model layout had removed, and did not
run for weeks). Their figures are not judged here (tests check behaviour, not timings): each
must run to its end and print its JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (ROOT / "bench").glob("*.py"))
# each script's quick run, and the external tool it needs
QUICK = {
    "app_startup.py": (["--quick"], None),
    # the digits CNN with --data of its held-out digits: eager and the Python int8 variants
    "data_results.py": (
        ["--quick", "--out", "{tmp}", "torch-eager", "onnxruntime-int8", "executorch-int8", "openvino-int8"],
        None,
    ),
    # its real run clones and runs make test (an hour): here it renders the stored phases
    "fresh_setup.py": (
        ["--render", "docs/results/setup-time.json", "--before", "docs/results/setup-time-before.json"],
        None,
    ),
    "measure_vs_hyperfine.py": (["--quick", "burn-embed"], "hyperfine"),
    "real_models.py": (["--quick", "--out", "{tmp}"], None),
    "scale_sweep.py": (["--quick"], None),
    "serve_fidelity.py": (["--quick"], None),
    "target_fidelity.py": (["--quick"], None),
    "ui_latency.py": (["--quick"], "tmux"),
}


def test_every_bench_script_has_a_quick_run_here():
    assert sorted(QUICK) == SCRIPTS


def _json_tail(out: str) -> dict:
    """The JSON object a script prints last (after any progress lines)."""
    start = out.rindex("\n{") + 1 if "\n{" in out else out.index("{")
    return json.loads(out[start:])


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_bench_script_runs_in_quick_mode(script, artifacts_copy, tmp_path):
    args, tool = QUICK[script]
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if tool and not shutil.which(tool):
        pytest.skip(f"{script} needs {tool} (Debian: apt-get install {tool})")
    env = {**os.environ, "DEPLOYTUI_ARTIFACTS": str(artifacts_copy)}
    res = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert res.returncode in (0, 1), res.stdout[-3000:] + res.stderr[-3000:]  # 1: a goal missed
    assert res.stdout.strip(), res.stderr[-3000:]  # SystemExit("why") is rc 1 too: show why
    if script == "measure_vs_hyperfine.py":
        assert "burn-embed" in res.stdout and "ratio" in res.stdout, res.stdout
        return
    data = _json_tail(res.stdout)
    if script == "ui_latency.py":
        for phase in ("idle", "run_all"):
            assert data[phase]["settled"]["n"] >= 1 and "ratio_p95" in data[phase]["settled"], data
    elif script == "real_models.py":
        assert data["models"] and "# Real models" in (tmp_path / "real-models.md").read_text(), data
    elif script == "fresh_setup.py":
        assert data["phases"] and all("seconds" in ph for ph in data["phases"]), data
    elif script == "serve_fidelity.py":
        assert data["torch-eager"]["ratio"] > 0 and data["onnxruntime"]["ratio"] > 0, data
    elif script == "app_startup.py":
        assert data["ready_ms_median"]["deploytui"] > 0 and data["ratio"] > 0
        # the split of deploytui's part: the modules the app had by its first frame, imported alone
        assert data["modules_imported"] > 20 and "imports_ms" in data and "first_frame_rest_ms" in data, data
    elif script == "data_results.py":  # issue 31: every form's top-1 on held-out digits, a CI
        scores = data["forms"]
        eager = scores["torch-eager"]
        assert eager["eager"] > 0.9 and eager["drop"] == 0.0, eager  # it learned; eager loses nothing
        for key, t in scores.items():
            assert t is not None and t["eager"] == eager["eager"], (key, t)
            assert t["fingerprint"] == eager["fingerprint"] and t["calibration"] >= 1, (key, t)
            assert t["drop_low"] <= t["drop"] <= t["drop_high"] and t["value"] > 0.8, (key, t)
        assert "## Task metric on your data" in (tmp_path / "digits_cnn-make.md").read_text()
    elif script == "target_fidelity.py":
        assert data["forms"] and all("startup" in v and "rss" in v for v in data["forms"].values()), data
    else:
        assert data["sizes"] and "torch-eager" in data["forms"], data


def test_ui_latency_counts_a_pane_settled_whatever_the_live_gauges_do():
    """A running form's gauges tick by themselves: the pane a key changes is compared without
    them, and any other row still counts."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("ui_latency", ROOT / "bench" / "ui_latency.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    left = " " * (mod.FORMS_W - 1)

    def screen(elapsed: str, status: str) -> list[str]:
        rows = [
            f"│ running torch-eager: {status} │",
            f"│ start-up ███░░ {elapsed} │",
            "│ RSS      ██░░░ 520M │",
        ]
        return [left + r for r in rows] + ["footer"]

    assert mod.pane(screen("1.05s", "2/21")) == mod.pane(screen("1.16s", "2/21"))
    assert mod.pane(screen("1.05s", "2/21")) != mod.pane(screen("1.05s", "3/21"))
