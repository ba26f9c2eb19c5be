"""Run forms through the measuring core and turn each into a RunRecord (deploytui.core.record), the
record that results.json stores and `bench --json` prints.

Every runner speaks the runner protocol: bench appends the model's inputs file, where to write
the outputs (the model's `outputs/<form>.safetensors`: the last run's outputs stay there for
the Diff view) and K steady-state forwards, then diffs each output against eager's
(`reference.safetensors`) with the model's tolerance.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deploytui.core import defaults, jsonio, locks, paths
from deploytui.core.measure import Measurement, Progress
from deploytui.core.modelref import tolerance
from deploytui.core.record import STAGES, RunRecord, RunStatus, StageStatus
from deploytui.core.record_parts import Forwards, Isolated, Threads, median
from deploytui.core.tensorfile import TensorFileError
from deploytui.core.workspace import Workspace
from deploytui.judge.numerics import ShapeError, compare_files
from deploytui.launchers.base import Launcher
from deploytui.launchers.here import HERE
from deploytui.scenarios.accuracy import accuracy
from deploytui.ship import store as ship_store
from deploytui.spec.forms import Form
from deploytui.spec.manifest import Manifest, availability, load, way
from deploytui.spec.steps import MODEL_STEP


def parse_output(stdout: str) -> dict[str, Any]:
    """The runner's JSON line (the last line that is a JSON object)."""
    value = jsonio.last_object(stdout)
    if value is not None:
        return value
    raise ValueError(
        "printed no JSON line with stages"
        + (
            f" (last line: {stdout.strip().splitlines()[-1][:120]!r})"
            if stdout.strip()
            else " (stdout empty)"
        )
    )


def not_run(form: Form, why: str, manifest: Manifest, ws: Workspace) -> RunRecord:
    """A form that did not get to run: not applicable, or its export/build did not pass."""
    ref = ws.model
    stages, first, log, failed = way(form, manifest, ref)
    if form.applies(ref):
        status = RunStatus.NOT_APPLICABLE
        stage_status = {s: StageStatus.NOT_APPLICABLE for s in STAGES}
    else:
        status = RunStatus.FAILED if first else RunStatus.UNAVAILABLE
        stage_status = {**stages, "run": StageStatus.SKIPPED, "numerics": StageStatus.SKIPPED}
    return RunRecord(
        form.key,
        form.command(ws),
        str(paths.ROOT),
        model=ref.text,
        status=status,
        error=failed or why,
        stage=first or None,
        stage_status=stage_status,
        log=log or None,
    )


def bench_form(
    form: Form,
    *,
    n: int = defaults.RUNS,
    warmup: int = defaults.WARMUP,
    repeat: int = defaults.REPEAT,
    timeout_s: float = defaults.RUN_TIMEOUT_S,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    manifest: Manifest | None = None,
    ws: Workspace,
    say: Callable[[str], None] = lambda _line: None,
    feed: Load | None = None,
    launcher: Launcher = HERE,
) -> RunRecord:
    """Measure one form (`feed`: at a batch size and thread count, see `Load`) through
    `launcher` (where its processes run: this machine unless told). Its runs hold
    its build steps' locks for reading (`locks.steps_read`):
    a build of those steps in another process waits for the run, and a run waits (`say` tells)
    for a step being built, then sees the manifest as that build left it."""
    manifest = manifest if manifest is not None else load(ws)
    try:
        with locks.steps_read(step_places(form, manifest, ws), say=say, cancel=cancel) as waited:
            if waited:  # a build of its steps ended meanwhile: what does the manifest say now
                manifest = load(ws)
            why = availability(form, ws, manifest)
            if not why and not ws.reference_path.is_file():
                why = f"no eager reference ({ws.reference_path.name}): run `{ws.command('build')}`"
            rec = (
                not_run(form, why, manifest, ws)
                if why
                else _run(
                    form, n, warmup, repeat, timeout_s, on_progress, cancel, ws, feed or Load(), launcher, say
                )
            )
    except locks.Cancelled as e:
        rec = not_run(form, str(e), manifest, ws)
    rec.isolated = isolated(form, ws)
    if feed is not None:
        rec.batch = feed.batch
    return rec


@dataclass(frozen=True)
class Load:
    """What a run feeds the runner besides its model: `inputs` and `reference` (None: the
    model's example and eager's outputs; `serve.batch_files` makes them for a batch size),
    `warmup` untimed forwards before the timed ones, `threads`."""

    inputs: Path | None = None
    reference: Path | None = None
    batch: int | None = None
    warmup: int = 0
    threads: int = 1


def step_places(form: Form, manifest: Manifest, ws: Workspace) -> list[tuple[Path, str]]:
    """(folder, step) of every step whose outputs a run of `form` reads: its own steps and the
    one that writes the inputs and the reference, each in the folder of its scope."""
    places = []
    for step in (MODEL_STEP, *form.steps):
        rec = manifest.steps.get(step)
        shared = rec is not None and rec.scope == "shared"
        places.append((ws.shared_dir if shared else ws.model_dir, step))
    return places


def isolated(form: Form, ws: Workspace) -> Isolated | None:
    """The form's last `deploytui ship --check` for the model, or None (never, or unreadable)."""
    check = ship_store.load(ws.ship_path).forms.get(form.key)
    return check.isolated() if check else None


def _run(
    form: Form,
    n: int,
    warmup: int,
    repeat: int,
    timeout_s: float,
    on_progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
    ws: Workspace,
    feed: Load,
    launcher: Launcher,
    say: Callable[[str], None],
) -> RunRecord:
    out = ws.outputs_path(form.key)
    if feed.inputs is not None:  # a batch's outputs stay out of the Diff view's file
        out = feed.inputs.with_name(f"{form.key}.safetensors")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    m = launcher.measure(
        form.run_command(out, repeat, ws, warmup=feed.warmup, threads=feed.threads, inputs=feed.inputs),
        n=n,
        warmup=warmup,
        timeout_s=timeout_s,
        on_progress=on_progress,
        cancel=cancel,
    )
    rec = evaluate(form, m, ws, n=n, warmup=warmup, outputs=out, reference=feed.reference)
    on_set = feed.inputs is None and rec.status == RunStatus.OK and rec.stage_status is not None
    if on_set and (form.variant or launcher is HERE) and accuracy.judges_on_set(form, ws):  # runs here
        assert rec.stage_status is not None
        try:  # the example inputs alone judged it in evaluate: now the whole evaluation set
            acc, rec.task = accuracy.evaluate(form, ws, out, timeout_s=timeout_s, cancel=cancel, say=say)
        except (ValueError, OSError) as e:  # AccuracyError, a damaged sample or outputs file
            rec.stage_status["numerics"], rec.stage = StageStatus.FAILED, "numerics"
            rec.error = f"evaluation set: {e}"
            return rec
        if form.variant:
            rec.accuracy = acc
            judge_variant(rec)
    return rec


def judged_ok(rec: RunRecord) -> bool:
    """The run's outputs pass: a variant's within its accuracy budget, any other form's within the
    model's tolerance."""
    if rec.accuracy is not None:
        return rec.status == RunStatus.OK and rec.accuracy.within_budget
    return rec.status == RunStatus.OK and bool(rec.within_tol)


def judge_variant(rec: RunRecord) -> None:
    """A variant's numerics stage and error from its accuracy budget (never from the tolerance)."""
    assert rec.accuracy is not None and rec.stage_status is not None
    if rec.accuracy.within_budget:
        rec.stage_status["numerics"], rec.stage, rec.error = StageStatus.OK, None, None
    else:
        rec.stage_status["numerics"], rec.stage = StageStatus.FAILED, "numerics"
        rec.error = f"outside its accuracy budget: {rec.accuracy.reason}"


def _numbers(v: object) -> list[float]:
    if not isinstance(v, list):
        return []
    ok = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
    return [float(x) for x in v] if ok else []


def timed_forwards(lines: list[dict[str, Any]]) -> tuple[Forwards | None, Threads | None]:
    """The counted runs' timed forwards (each runner line's `forward_ms`, pooled) and their
    threads: asked and reported (the last line's), CPU over wall summed over the runs."""
    runs = [t for t in (_numbers(o.get("forward_ms")) for o in lines) if t]
    warmup = lines[-1].get("warmup") if lines else None
    forwards = Forwards.of(runs, warmup if isinstance(warmup, int) else 0) if runs else None
    asked = lines[-1].get("threads") if lines else None
    if not isinstance(asked, dict) or not isinstance(asked.get("requested"), int):
        return forwards, None
    reported = asked.get("reported")
    cpu = _numbers([o.get("cpu_ms") for o in lines])
    loop = _numbers([o.get("loop_ms") for o in lines])
    threads = Threads(asked["requested"], reported if isinstance(reported, int) else None)
    if cpu and loop and len(cpu) == len(loop) == len(lines) and sum(loop) > 0:
        threads.cpu_ms, threads.loop_ms = sum(cpu), sum(loop)
        threads.busy = round(sum(cpu) / sum(loop), 3)
    return forwards, threads


def evaluate(
    form: Form,
    m: Measurement,
    ws: Workspace,
    *,
    n: int,
    warmup: int,
    outputs: Path | None = None,
    reference: Path | None = None,
) -> RunRecord:
    """Turn a measurement into a record: numbers, the runner's stages, the per-output diffs of
    the outputs file the run wrote (`outputs`, default the model's outputs/<form>.safetensors)
    against `reference` (default eager's outputs of the example)."""
    s = m.summary()
    ok, failed, skipped = StageStatus.OK, StageStatus.FAILED, StageStatus.SKIPPED
    stage_status = {"export": ok, "build": ok, "run": failed, "numerics": skipped}
    rec = RunRecord(
        form.key,
        m.argv,
        m.cwd,
        model=ws.model.text,
        wall_s=s["wall_s"],
        peak_rss_bytes=s["peak_rss_bytes"],
        exit_codes=s["exit_codes"],
        n=n,
        warmup=warmup,
        stage_status=stage_status,
        stage="run",
    )
    last = (m.runs or m.warmup)[-1] if (m.runs or m.warmup) else None
    if last is not None:
        rec.stderr_tail = last.stderr_tail
    if not m.ok:
        rec.error = m.error
        return rec
    lines = []
    for run in m.runs:
        try:
            lines.append(parse_output(run.stdout))
        except ValueError as e:
            rec.error = str(e)
            return rec
    line = lines[-1]
    stage_status["run"] = ok
    rec.stage = "numerics"
    stage_runs = [o["stages_ms"] for o in lines if isinstance(o.get("stages_ms"), dict)]
    if stage_runs:
        rec.stages_ms = {}
        for k in stage_runs[-1]:
            vals = [r[k] for r in stage_runs if isinstance(r.get(k), (int, float))]
            if vals:
                rec.stages_ms[k] = median(vals) or 0.0
        rec.modules_added = line.get("modules_added")
        rec.modules_added_torch = line.get("modules_added_torch")
        rec.modules_added_total = line.get("modules_added_total")
    rec.forwards, rec.threads = timed_forwards(lines)
    atol, rtol = tolerance(ws.model)
    got = outputs or ws.outputs_path(form.key)
    try:
        diffs = compare_files(got, reference or ws.reference_path, atol, rtol)
    except (ShapeError, TensorFileError) as e:
        stage_status["numerics"] = failed
        rec.error = f"bad outputs: {e}"
        return rec
    rec.outputs = diffs
    rec.max_abs_diff = max((d.max_abs for d in diffs), default=0.0)
    rec.within_tol = all(d.within_tol for d in diffs)
    rec.status = RunStatus.OK
    if form.variant:  # judged by its accuracy budget, here on the example inputs alone
        try:
            rec.accuracy = accuracy.on_example(form, got, ws, reference)
        except (ValueError, OSError) as e:
            stage_status["numerics"] = failed
            rec.error = f"bad outputs: {e}"
            return rec
        judge_variant(rec)
    elif rec.within_tol:
        stage_status["numerics"], rec.stage = ok, None
    else:
        stage_status["numerics"] = failed
        bad = next(d for d in diffs if not d.within_tol)
        rec.error = (
            f"{bad.name} differs from eager by {bad.max_abs:.3g} ({bad.failing} of {bad.n} elements "
            f"outside atol {bad.atol:g} + rtol {bad.rtol:g}·|want|)"
        )
    return rec
