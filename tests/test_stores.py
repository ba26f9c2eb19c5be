"""The four JSON stores behave alike (store.Store): a damaged entry is dropped and said, every
other one kept, the file set aside once; and processes writing one store at once lose nothing:
two benches, two builds, a build racing a bench."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from deploytui.core.modelref import parse
from deploytui.core.record import RunRecord
from deploytui.core.workspace import Workspace
from deploytui.scenarios.startup import results
from deploytui.scenarios.sweep import store as sweep_store
from deploytui.ship import store as ship_store
from deploytui.spec import manifest
from deploytui.spec.manifest import ArtifactRecord, Manifest, StepRecord, StepStatus

ROOT = Path(__file__).resolve().parents[1]
DEPLOYTUI = str(Path(sys.executable).parent / "deploytui")


def run_record(key: str) -> RunRecord:
    return RunRecord.from_json({"form": key, "status": "ok", "wall_s": [0.1], "peak_rss_bytes": [1000]})


def point(model: str, params: int) -> sweep_store.Point:
    return sweep_store.Point(model, params, {"burn-st": run_record("burn-st")})


# what each kind of store holds, two entries of it, and how to damage the second
KINDS = {
    "results": (
        lambda p: results.load(p),
        lambda s: (s.put(run_record("good")), s.put(run_record("bad"))),
        lambda data: data["forms"]["bad"].update(wall_s="fast"),
        lambda s: list(s.forms),
    ),
    "ship": (
        lambda p: ship_store.load(p),
        lambda s: (s.put("good", ship_store.ShipCheck(True)), s.put("bad", ship_store.ShipCheck(False))),
        lambda data: data["forms"]["bad"].update(passed="✓?"),
        lambda s: list(s.forms),
    ),
    "manifest": (
        lambda p: manifest.store(p.parent).load(),
        lambda s: s.update(
            lambda d: d.steps.update(good=StepRecord(StepStatus.OK), bad=StepRecord(StepStatus.FAILED))
        ),
        lambda data: data["steps"]["bad"].update(status="exploded"),
        lambda s: list(s.doc.steps),
    ),
    "sweep": (
        lambda p: sweep_store.load(p),
        lambda s: (s.put(point("good", 10)), s.put(point("bad", 20))),
        lambda data: data["points"][1].update(params="many"),
        lambda s: list(s.points),
    ),
}
FILES = {"results": "results.json", "ship": "ship.json", "manifest": "manifest.json", "sweep": "sweep.json"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_entry_is_dropped_the_others_kept_and_the_file_set_aside_once(tmp_path, kind):
    load, fill, damage, keys = KINDS[kind]
    path = tmp_path / FILES[kind]
    fill(load(path))
    data = json.loads(path.read_text())
    damage(data)
    path.write_text(json.dumps(data))
    hurt = load(path)
    assert keys(hurt) == ["good"], hurt.dropped
    assert len(hurt.dropped) == 2 and "bad" in hurt.dropped[0] and "kept as" in hurt.dropped[1]
    (copy,) = tmp_path.glob(f"{FILES[kind]}.damaged-*")
    assert json.loads(copy.read_text()) == data  # the file as it was
    again = load(path)
    assert keys(again) == ["good"] and again.dropped == []  # rewritten: the next read is clean


@pytest.mark.parametrize("kind", KINDS)
def test_an_unreadable_file_is_set_aside_and_the_next_write_starts_from_empty(tmp_path, kind):
    load, fill, _, keys = KINDS[kind]
    path = tmp_path / FILES[kind]
    path.write_text('{"version": 1, "forms": {"a": ')
    hurt = load(path)
    assert keys(hurt) == [] and "could not be read" in hurt.dropped[0]
    assert len(list(tmp_path.glob(f"{FILES[kind]}.damaged-*"))) == 1
    fill(hurt)
    assert keys(load(path)) == ["good", "bad"] and not load(path).dropped


def test_a_corrupted_ship_json_keeps_the_other_forms_verdicts(tmp_path):
    """The issue's case: one form's verdict damaged; the next check of a third form keeps the
    first form's verdict (before, a parse error became {} and the next put wrote one entry)."""
    path = tmp_path / "ship.json"
    for key, passed in (("burn-embed", True), ("onnxruntime", False), ("tract", True)):
        ship_store.put(path, key, ship_store.ShipCheck(passed, reason="" if passed else "exit 1: no"))
    text = path.read_text().replace('"passed": false', '"passed": "nope"')
    path.write_text(text)
    ship_store.put(path, "cpp-aoti", ship_store.ShipCheck(True))
    checks = ship_store.load(path).forms
    assert {k: c.passed for k, c in checks.items()} == {"burn-embed": True, "tract": True, "cpp-aoti": True}


def test_a_ship_json_from_before_booleans_is_read(tmp_path):
    path = tmp_path / "ship.json"
    old = {"verdict": "✓", "reason": "", "compressed_bytes": 5, "checked_at": "2026-01-02T03:04:05+0000"}
    path.write_text(json.dumps({"version": 1, "forms": {"burn-st": old, "tract": {**old, "verdict": "✗"}}}))
    checks = ship_store.load(path)
    assert not checks.dropped and checks.forms["burn-st"].passed and not checks.forms["tract"].passed
    assert checks.forms["burn-st"].isolated().compressed_bytes == 5


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from deploytui.spec import manifest
    from deploytui.scenarios.startup import results
    from deploytui.spec.manifest import StepRecord, StepStatus
    from deploytui.core.record import RunRecord
    from deploytui.ship import store as ship_store

    folder, who, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    res = results.load(folder / "results.json")
    for i in range(n):
        key = f"{who}-{i}"
        rec = {"form": key, "status": "ok", "wall_s": [0.1], "peak_rss_bytes": [1]}
        res.put(RunRecord.from_json(rec))
        ship_store.put(folder / "ship.json", key, ship_store.ShipCheck(True))
        manifest.store(folder).update(lambda d: d.steps.__setitem__(key, StepRecord(StepStatus.OK)))
    """
)


def test_processes_writing_one_models_stores_at_once_lose_nothing(tmp_path):
    """Three processes, each adding 15 entries to results.json, ship.json and the manifest of one
    folder as fast as they can: every entry of every process is there."""
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), who, "15"], stderr=subprocess.PIPE)
        for who in ("a", "b", "c")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    want = {f"{who}-{i}" for who in "abc" for i in range(15)}
    assert set(results.load(tmp_path / "results.json").forms) == want
    assert set(ship_store.load(tmp_path / "ship.json").forms) == want
    assert set(manifest.store(tmp_path).load().doc.steps) == want
    assert not list(tmp_path.glob("*.damaged-*"))


def test_the_merged_view_splits_back_by_scope(tmp_path):
    view = Manifest({"python": "3.11"}, model="a1")
    view.steps["cpp-build"] = StepRecord(StepStatus.OK, scope="shared")
    view.steps["export-model"] = StepRecord(StepStatus.OK)
    view.artifacts["shared/bin/x"] = ArtifactRecord(1)
    view.artifacts["a1/a1.onnx"] = ArtifactRecord(2)
    ws = Workspace.at(parse("a1"), tmp_path)
    manifest.write(ws, view)
    assert list(manifest.store(tmp_path / "shared").load().doc.steps) == ["cpp-build"]
    own = manifest.store(tmp_path / "a1").load().doc
    assert list(own.steps) == ["export-model"] and list(own.artifacts) == ["a1/a1.onnx"] and own.model == "a1"
    assert manifest.load(ws) == view


# ------------------------------------------------------------------ real processes on a real build


def _cli(art: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "DEPLOYTUI_ARTIFACTS": str(art)}
    return subprocess.Popen(
        [DEPLOYTUI, *args], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_two_benches_of_disjoint_forms_at_once_keep_every_record(artifacts_copy):
    """The app open and a terminal beside it: before, the last writer's records alone survived."""
    one, two = ["burn-embed", "burn-st", "burn-file"], ["tract", "onnxruntime-native", "cpp-executorch"]
    benches = [_cli(artifacts_copy, "bench", *keys, "-n", "3", "--warmup", "0") for keys in (one, two)]
    for b in benches:
        out, err = b.communicate(timeout=600)
        assert b.returncode == 0, out + err
    stored = results.load(artifacts_copy / "a1" / "results.json")
    assert set(stored.forms) == {*one, *two} and not stored.dropped
    assert all(r.status == "ok" and len(r.wall_s) == 3 for r in stored.forms.values())


def _make_stale(art: Path, step: str) -> None:
    m = manifest.store(art / "a1")
    m.update(lambda d: setattr(d.steps[step], "fingerprint", "stale"))


@pytest.mark.slow
def test_a_build_racing_a_bench_waits_and_the_bench_measures_what_it_built(artifacts_copy):
    """A build of export-onnx starts; a bench of onnxruntime (which ships its .onnx) meanwhile
    waits for it, says so, then measures the rebuilt file; both records are kept."""
    _make_stale(artifacts_copy, "export-onnx")
    build = _cli(artifacts_copy, "build", "--only", "export-onnx")
    lock = artifacts_copy / "a1" / ".locks" / "export-onnx.lock"
    deadline = time.monotonic() + 60
    while not _held(lock) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _held(lock), "the build never took its step's lock"
    # --no-build: the runs' read lock is what waits (not the bench's own build of the step)
    bench = _cli(artifacts_copy, "bench", "onnxruntime", "-n", "2", "--warmup", "0", "--no-build")
    b_out, b_err = bench.communicate(timeout=600)
    out, err = build.communicate(timeout=600)
    assert build.returncode == 0, out + err
    assert bench.returncode == 0, b_out + b_err
    assert "waiting: step export-onnx is being built by another deploytui" in b_err
    step = manifest.load(Workspace.at(parse("a1"), artifacts_copy)).steps["export-onnx"]
    assert step.status == StepStatus.OK and step.fingerprint != "stale"
    rec = results.load(artifacts_copy / "a1" / "results.json").forms["onnxruntime"]
    assert rec.status == "ok" and rec.measured_at is not None and rec.measured_at >= step.finished_at


@pytest.mark.slow
def test_two_builds_of_one_step_serialise_and_the_second_finds_it_built(artifacts_copy):
    _make_stale(artifacts_copy, "export-onnx")
    builds = [_cli(artifacts_copy, "build", "--only", "export-onnx", "-v") for _ in range(2)]
    outs = []
    for b in builds:
        out, err = b.communicate(timeout=600)
        assert b.returncode == 0, out + err
        outs.append(out)
    ran = [o for o in outs if "stale: command or inputs changed" in o]
    waited = [o for o in outs if "waiting: step export-onnx" in o]
    assert len(ran) == 1 and len(waited) == 1, outs
    assert "up-to-date" in waited[0]


def _held(lock: Path) -> bool:
    """Whether someone holds the step lock for writing (a read attempt would have to wait)."""
    from filelock import ReadWriteLock, Timeout

    if not lock.exists():
        return False
    rw = ReadWriteLock(lock, is_singleton=False)
    try:
        rw.acquire_read(timeout=0, blocking=False)
    except Timeout:
        return True
    else:
        rw.release()
        return False
    finally:
        rw.close()
