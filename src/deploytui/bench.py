"""Run forms through the measuring core and turn each into a RunRecord (deploytui.record), the
record that results.json stores and `bench --json` prints.
"""

from __future__ import annotations

import statistics
import threading
from collections.abc import Callable
from typing import Any

from deploytui import jsonio, paths
from deploytui.forms import Form
from deploytui.manifest import availability
from deploytui.measure import Measurement, Progress, measure
from deploytui.numerics import ShapeError, compare
from deploytui.record import RunRecord, is_matrix
from deploytui.runenv import runner_env


def reference_logits() -> list[Any]:
    try:
        logits: list[Any] = jsonio.read(paths.reference_path())["logits"]
        return logits
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise FileNotFoundError(f"no eager reference ({paths.reference_path().name}): {e}") from None


def parse_output(stdout: str) -> dict[str, Any]:
    """The runner's JSON line (the last line that is a JSON object)."""
    value = jsonio.last_object(stdout)
    if value is not None:
        return value
    raise ValueError(
        "printed no JSON line with logits"
        + (
            f" (last line: {stdout.strip().splitlines()[-1][:120]!r})"
            if stdout.strip()
            else " (stdout empty)"
        )
    )


def unavailable(form: Form, why: str) -> RunRecord:
    return RunRecord(form.key, form.command(), str(paths.ROOT), status="unavailable", error=why)


def bench_form(
    form: Form,
    *,
    n: int = 20,
    warmup: int = 1,
    timeout_s: float = 120.0,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    manifest: dict[str, Any] | None = None,
) -> RunRecord:
    why = availability(form, manifest)
    if why:
        return unavailable(form, why)
    try:
        want = reference_logits()
    except FileNotFoundError as e:
        return unavailable(form, str(e))
    m = measure(
        form.command(),
        n=n,
        warmup=warmup,
        timeout_s=timeout_s,
        cwd=paths.ROOT,
        env=runner_env(),
        on_progress=on_progress,
        cancel=cancel,
    )
    return evaluate(form, m, want, n=n, warmup=warmup)


def evaluate(form: Form, m: Measurement, want: list[Any], *, n: int, warmup: int) -> RunRecord:
    """Turn a measurement into a record: numbers, the runner's own output, the diff."""
    s = m.summary()
    rec = RunRecord(
        form.key,
        m.argv,
        m.cwd,
        wall_s=s["wall_s"],
        peak_rss_bytes=s["peak_rss_bytes"],
        exit_codes=s["exit_codes"],
        n=n,
        warmup=warmup,
    )
    last = (m.runs or m.warmup)[-1] if (m.runs or m.warmup) else None
    if last is not None:
        rec.stderr_tail = last.stderr_tail
    if not m.ok:
        rec.error = m.error
        return rec
    outputs = []
    for run in m.runs:
        try:
            outputs.append(parse_output(run.stdout))
        except ValueError as e:
            rec.error = str(e)
            return rec
    out = outputs[-1]
    logits = out.get("logits")
    rec.logits = logits if is_matrix(logits) else None  # what cannot be compared is not kept
    try:
        diff = compare(logits, want, form.tolerance)
    except ShapeError as e:
        rec.error = f"bad logits: {e}"
        return rec
    rec.diff, rec.max_abs_diff, rec.within_tol, rec.status = diff, diff.max_abs, diff.within_tol, "ok"
    if not diff.within_tol:
        rec.error = f"logits differ from eager by {diff.max_abs:.3g} > tolerance {diff.tol:g}"
    stage_runs = [o["stages_ms"] for o in outputs if isinstance(o.get("stages_ms"), dict)]
    if stage_runs:
        rec.stages_ms = {k: statistics.median(r[k] for r in stage_runs if k in r) for k in stage_runs[-1]}
        rec.modules_added = out.get("modules_added")
        rec.modules_added_torch = out.get("modules_added_torch")
        rec.modules_added_total = out.get("modules_added_total")
    return rec
