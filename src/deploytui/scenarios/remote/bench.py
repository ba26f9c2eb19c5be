"""Start-up runs on an SSH target: the form's bundle placed there (bundles.py), then warm-up + n
runs through the measuring launcher there (launchers/ssh.py); the outputs come back and are
judged here against eager, like any run (bench.evaluate), and the evaluation set runs there too
when the form is judged on it (a variant; any form on labelled data), each sample a fresh run of
its bundle. The records go to the model's
targets/<name>/results.json; this machine's stay where they are."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from deploytui.core import defaults
from deploytui.core.record import RunRecord, RunStatus, StageStatus, stamp
from deploytui.core.record_parts import Accuracy, TaskScore, Where, median
from deploytui.core.workspace import Workspace
from deploytui.launchers import ssh
from deploytui.launchers.ssh import TargetError
from deploytui.launchers.targets import Target
from deploytui.scenarios.accuracy import accuracy
from deploytui.scenarios.isolated import cross
from deploytui.scenarios.remote.bundles import Placed, arch_problem, place, send_inputs, target_arch
from deploytui.scenarios.startup import bench, results
from deploytui.ship import store
from deploytui.ship.bundler import ShipError
from deploytui.ship.store import ShipCheck
from deploytui.spec.forms import Form
from deploytui.spec.manifest import availability
from deploytui.spec.manifest import load as load_manifest


def fetch(target: Target, remote: str, local: Path) -> str:
    """A file of the target copied here ("" when it was, else why not)."""
    local.parent.mkdir(parents=True, exist_ok=True)
    local.unlink(missing_ok=True)
    try:
        local.write_bytes(ssh.fetch_file(target.dest, remote))
    except (TargetError, OSError) as e:
        return str(e)
    return ""


def accuracy_there(
    form: Form,
    placed: Placed,
    target: Target,
    ws: Workspace,
    got: Path,
    *,
    timeout_s: float,
    cancel: threading.Event | None,
) -> tuple[Accuracy | None, TaskScore | None]:
    """The form on the model's evaluation set (a variant's accuracy with the example, `got`; the
    task's score with labels), each sample run there by its bundle (`./run OUT 0 INPUTS`),
    judged here (accuracy.evaluate)."""
    s = accuracy.sample_set(ws)
    if s is None:
        raise accuracy.AccuracyError("the evaluation set is missing: run deploytui build")
    samples = [accuracy.sample_paths(ws, k)[0] for k in range(s.samples)]
    missing = [p.name for p in samples if not p.is_file()]
    if missing:
        raise accuracy.AccuracyError(f"{missing[0]} of the evaluation set is missing: run deploytui build")
    there = dict(zip(samples, send_inputs(placed, target, samples), strict=True))

    def run_sample(inputs: Path, out: Path) -> None:
        remote_out = f"{placed.folder}.sample.safetensors"
        m = placed.launcher.measure(
            ["./run", remote_out, "0", there[inputs]], n=1, warmup=0, timeout_s=timeout_s, cancel=cancel
        )
        last = m.runs[-1] if m.runs else None
        if last is None or not last.ok:
            raise accuracy.AccuracyError(last.error if last and last.error else "the run failed")
        if why := fetch(target, remote_out, out):
            raise accuracy.AccuracyError(f"its outputs could not be fetched: {why}")

    return accuracy.evaluate(form, ws, got, timeout_s=timeout_s, cancel=cancel, run_sample=run_sample)


def bench_form(
    form: Form,
    target: Target,
    ws: Workspace,
    *,
    n: int = defaults.RUNS,
    warmup: int = defaults.WARMUP,
    repeat: int = defaults.REPEAT,
    timeout_s: float = defaults.RUN_TIMEOUT_S,
    say: Callable[[str], None] = lambda _line: None,
    cancel: threading.Event | None = None,
) -> RunRecord:
    """Measure one form on the target and store its record there; a form that cannot run there
    (not built, another architecture, no Python for it, the target unreachable) is a not-run
    record with the reason, like bench's."""
    manifest = load_manifest(ws)
    why = availability(form, ws, manifest) or arch_problem(target)
    placed: Placed | None = None
    if not why:
        try:
            placed = place(form, target, ws, say, cancel)
        except (TargetError, ShipError, OSError) as e:
            why = str(e)
    if placed is None:
        rec = bench.not_run(form, why, manifest, ws)
    else:
        out = f"{placed.folder}.outputs.safetensors"
        say(f"{form.key}: {warmup} warm-up + {n} runs on {target.name}")
        m = placed.launcher.measure(
            ["./run", out, str(repeat)], n=n, warmup=warmup, timeout_s=timeout_s, cancel=cancel
        )
        local_out = ws.target_dir(target.name) / "outputs" / f"{form.key}.safetensors"
        local_out.unlink(missing_ok=True)
        if m.runs and m.runs[-1].ok and (problem := fetch(target, out, local_out)):
            say(f"{form.key}: its outputs could not be fetched: {problem}")
        rec = bench.evaluate(form, m, ws, n=n, warmup=warmup, outputs=local_out)
        rec.cwd = m.cwd
        if rec.status == RunStatus.OK and rec.stage_status is not None and accuracy.judges_on_set(form, ws):
            say(f"{form.key}: the evaluation set on {target.name}")
            try:
                acc, rec.task = accuracy_there(
                    form, placed, target, ws, local_out, timeout_s=timeout_s, cancel=cancel
                )
                if form.variant:
                    rec.accuracy = acc
                    bench.judge_variant(rec)
            except (ValueError, OSError, TargetError) as e:
                rec.stage_status["numerics"], rec.stage = StageStatus.FAILED, "numerics"
                rec.error = f"evaluation set: {e}"
    rec.target = Where.of(target.name, target.facts)
    results.load(ws.results_on(target.name)).put(rec)
    arch = target_arch(target) if not arch_problem(target) else None
    if arch and not form.applies(ws.model):
        store.put(ws.ship_path_for(arch), form.key, arch_ship_fact(form, arch, ws, rec))
    return rec


def arch_ship_fact(form: Form, arch: str, ws: Workspace, rec: RunRecord) -> ShipCheck:
    """What a run of the form's `arch` bundle on a target says of that bundle: its sizes (its
    manifest), whether it ran and matched eager, its start-up and peak RSS there."""
    fact = ShipCheck(passed=bench.judged_ok(rec), model=ws.model.text, checked_at=stamp())
    root = cross.default_dir(form, arch, ws)
    fact.bundle = str(root)
    try:
        manifest = json.loads((root / "manifest.json").read_text())
        fact.unpacked_bytes = manifest["unpacked_bytes"]
        fact.compressed_bytes = manifest["compressed_bytes"]
        fact.files = len(manifest["files"])
        fact.libraries = list(manifest.get("libraries", []))
    except (OSError, ValueError, KeyError):
        pass
    fact.reason = "" if fact.passed else (rec.error or rec.status)
    fact.startup_median_s = median(rec.wall_s) if fact.passed else None
    fact.peak_rss_median_bytes = median(rec.peak_rss_bytes) if fact.passed else None
    fact.max_abs_diff = rec.max_abs_diff
    fact.n = len(rec.wall_s)
    fact.stderr_tail = rec.stderr_tail[-4:]
    fact.emulated = rec.target is not None and rec.target.emulated
    return fact
