"""The sweep over the mlp family: sizes, the store, resume, failures in place, the fit."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import threading

import pytest

from deploytui.core.record import RunRecord
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.scenarios.sweep import fit, sweep
from deploytui.scenarios.sweep import store as sweep_store
from deploytui.scenarios.sweep import text as scale_text

QUICK = ["torch-eager", "onnxruntime"]  # forms whose build is only torch exports: no shared programs


def test_default_sizes_span_1e2_to_2e8_evenly_on_a_log_scale():
    targets = sweep.default_targets()
    assert len(targets) == sweep.POINTS
    assert targets[0] == pytest.approx(1e2) and targets[-1] == pytest.approx(2e8)
    steps = {round(math.log10(b / a), 9) for a, b in itertools.pairwise(targets)}
    assert len(steps) == 1
    for t in targets:
        ref = sweep.shape_for(t)
        assert ref.target == "mlp"
        assert abs(math.log(sweep.params_of(ref) / t)) < math.log(1.15), (t, ref.text)


def test_sizes_as_counts_or_refs_and_bad_ones_rejected():
    assert [r.kwargs["hidden"] for r in sweep.parse_sizes("mlp:hidden=8,depth=1;mlp:hidden=9,depth=1")] == [
        8,
        9,
    ]
    assert len(sweep.parse_sizes("1e3, 1e5")) == 2
    for bad, why in (
        ("abc", "not a parameter count"),
        ("3", "more than 10"),
        ("mlp:hidden=2;a1", "mlp family"),
    ):
        with pytest.raises(ValueError, match=why):
            sweep.parse_sizes(bad)


def test_least_squares_recovers_a_line_and_its_crossover():
    xs = [0.0001, 0.01, 1.0, 100.0]
    line = fit.least_squares(xs, [0.05 + 0.002 * x for x in xs])
    assert line is not None
    assert line.fixed == pytest.approx(0.05) and line.per_mparam == pytest.approx(0.002)
    assert line.r2 == pytest.approx(1.0)
    assert line.crossover_params == pytest.approx(0.05 / 0.002 * 1e6)
    noisy = fit.least_squares([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    assert noisy is not None and noisy.r2 is not None and noisy.r2 < 0.5
    assert fit.least_squares([1.0], [2.0]) is None


def _rec(form: str, wall: float, rss: int, status: str = "ok", error: str | None = None) -> RunRecord:
    ok = status == "ok"
    return RunRecord(
        form,
        [form],
        ".",
        status=status,
        error=error,
        wall_s=[wall, wall] if ok else [],
        peak_rss_bytes=[rss, rss] if ok else [],
        n=2,
        stages_ms={"load": wall * 500} if ok else None,
    )


def synthetic_points() -> list[sweep_store.Point]:
    """Three sizes where torch-eager costs 50 ms + 1 ms/Mparam and holds 2 copies of the weights,
    onnxruntime fails at the largest."""
    pts = []
    for params in (100, 10_000, 100_000_000):
        p = sweep_store.Point(f"mlp:hidden={params}", params)
        p.records["torch-eager"] = _rec("torch-eager", 0.05 + 0.001 * params / 1e6, 300_000_000 + 8 * params)
        p.ship_bytes["torch-eager"] = 1000 + 4 * params
        if params < 100_000_000:
            p.records["onnxruntime"] = _rec("onnxruntime", 0.02, 60_000_000)
        else:
            p.records["onnxruntime"] = _rec(
                "onnxruntime", 0, 0, "failed", "failed: step export-onnx: timeout"
            )
        pts.append(p)
    return pts


def test_fit_of_known_points():
    pts = synthetic_points()
    eager = fit.fit_form(pts, "torch-eager")
    start = eager.lines["startup"]
    assert (
        start is not None and start.fixed == pytest.approx(0.05) and start.per_mparam == pytest.approx(0.001)
    )
    assert eager.copy_ratio == pytest.approx(2.0, rel=1e-3)
    ship = eager.lines["ship"]
    assert ship is not None and ship.per_mparam == pytest.approx(4e6)
    ort = fit.fit_form(pts, "onnxruntime")
    assert ort.points == 2 and ort.failures == [(100_000_000, "failed: step export-onnx: timeout")]
    winners = fit.winners(pts, ["torch-eager", "onnxruntime"], "startup")
    assert [w[1] for w in winners] == ["onnxruntime", "onnxruntime", "torch-eager"]
    text = scale_text.render(pts, ["torch-eager", "onnxruntime"])
    assert "Failed points" in text and "onnxruntime at 100M: failed: step export-onnx: timeout" in text
    assert "50.0ms + 1.0ms/M" in text and "2.00" in text
    assert "a torch-eager  b onnxruntime" in text


def test_store_round_trip_and_damage_set_aside(tmp_path):
    path = tmp_path / "sweep.json"
    store = sweep_store.SweepStore(path)
    for p in synthetic_points():
        store.put(p)
    again = sweep_store.load(path)
    assert not again.dropped and [p.params for p in again.ordered()] == [100, 10_000, 100_000_000]
    assert (
        again.ordered()[0].records["torch-eager"].wall_s
        == synthetic_points()[0].records["torch-eager"].wall_s
    )
    data = json.loads(path.read_text())
    data["points"][1]["params"] = "many"
    data["points"][2]["records"]["onnxruntime"]["form"] = "burn-st"
    path.write_text(json.dumps(data))
    hurt = sweep_store.load(path)
    assert len(hurt.points) == 1
    assert any("params" in d for d in hurt.dropped) and any("names form" in d for d in hurt.dropped)
    assert list(tmp_path.glob("sweep.json.damaged-*"))
    assert len(sweep_store.load(path).points) == 1 and not sweep_store.load(path).dropped


@pytest.mark.slow  # real builds
def test_small_sweep_resumes_and_shows_a_failing_point(tmp_path, monkeypatch):
    """Two small sizes of two forms, interrupted after the first record of the second size, then
    resumed; then a third size whose build passes the memory limit: failed in place."""
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(tmp_path / "art"))  # for `deploytui sweep --show`
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))
    base = Workspace.at(artifacts=tmp_path / "art")
    chosen = [registry.get(k) for k in QUICK]
    refs = sweep.parse_sizes("1e2,1e3")
    cancel = threading.Event()
    events: list[sweep.SweepEvent] = []

    def stop_in_second(e: sweep.SweepEvent) -> None:
        events.append(e)
        if e.kind == "record" and e.index == 2:
            cancel.set()

    store = sweep.run_sweep(refs, chosen, base=base, runs=2, warmup=0, on_event=stop_in_second, cancel=cancel)
    small, second = (store.points[r.text] for r in refs)
    assert set(small.records) == set(QUICK) and len(second.records) == 1
    assert all(r.status == "ok" and r.within_tol for r in small.records.values())
    assert small.params == 108  # the export-model step's count
    assert small.build_s["torch-eager"] > 0 and small.ship_bytes["onnxruntime"] > 0
    # each step a fresh process, not forked: a forked step's memory counts the server's modules
    from deploytui.builder import FORKED

    log = base.for_model(refs[0]).model_dir / "logs" / "export-onnx.log"
    assert log.read_text().startswith("$ ") and FORKED not in log.read_text()

    events.clear()
    store = sweep.run_sweep(refs, chosen, base=base, runs=2, warmup=0, on_event=events.append)
    assert [e.index for e in events if e.kind == "skip"] == [1]
    measured = [e.what for e in events if e.kind == "form"]
    assert measured == [k for k in QUICK if k not in second.records]
    assert all(sweep.complete(p, chosen) for p in store.points.values())

    events.clear()
    big = sweep.parse_sizes("1e4")
    store = sweep.run_sweep(big, chosen, base=base, runs=2, warmup=0, memory_limit=1, on_event=events.append)
    failed = store.points[big[0].text]
    assert all(r.status == "failed" and "memory:" in (r.error or "") for r in failed.records.values())
    steps = [e for e in events if e.kind == "step"]
    assert steps and "memory:" in steps[0].text

    proc = subprocess.run(
        [sys.executable, "-m", "deploytui", "sweep", "--show", "--forms", ",".join(QUICK)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "torch-eager  2/3" in out and "onnxruntime  2/3" in out  # fitted on the two sizes that ran
    assert "Failed points" in out and "torch-eager at 10k: failed: step export-model: memory:" in out
    assert "start-up (median wall, s) against parameters" in out


def test_report_gains_the_scale_section(tmp_path, monkeypatch):
    """The report reads sweep.json (it runs nothing): the fit, the grids, failures and charts."""
    from deploytui.views import report

    ws = Workspace.at(artifacts=tmp_path)
    assert report.scale_section(ws) == []
    store = sweep_store.SweepStore(ws.sweep_path)
    for p in synthetic_points():
        store.put(p)
    text = "\n\n".join(report.scale_section(ws))
    assert text.startswith("## Scale: the mlp family from 100 to 100M parameters")
    assert "| torch-eager | 3/3 | 50.0ms + 1.0ms/M R²1.000 |" in text
    assert "- onnxruntime at 100M: failed: step export-onnx: timeout" in text
    assert text.count("```") == 4 and "a torch-eager  b onnxruntime" in text
