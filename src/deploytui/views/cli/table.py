"""One run record as `bench` and `measure` print it: the timings, the accuracy, the failure."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deploytui.core.record import RunRecord


def name_width() -> int:
    """The form key's column: as wide as the longest key (onnxruntime-native-int8)."""
    from deploytui.families import registry

    return max(len(f.key) for f in registry.FORMS)


def table_line(rec: RunRecord, label: str | None = None) -> str:
    """One record as `bench` and `measure` print it; `label` in place of the form key."""
    from deploytui.core import units
    from deploytui.core.record import RunStatus
    from deploytui.core.units import human, ms

    name = label if label is not None else rec.form
    w = name_width()
    wall, rss = rec.wall, rec.rss
    if rec.status in (RunStatus.UNAVAILABLE, RunStatus.NOT_APPLICABLE) or wall is None or rss is None:
        line = f"{name:<{w}} {_problem(rec)}"
        if rec.stage:
            line += f"\n{'':<{w}} stage {rec.stage} failed" + (f"; full log: {rec.log}" if rec.log else "")
        return line
    line = (
        f"{name:<{w}} n={wall.n:<3} min={ms(wall.min, 9)} median={ms(wall.median, 9)} "
        f"max={ms(wall.max, 9)}  rss={human(rss.median):>10}"
    )
    if rec.max_abs_diff is not None and rec.accuracy is not None:  # a variant: judged by its budget
        line += f"  max|diff|={rec.max_abs_diff:.3g} ({rec.accuracy.precision})"
    elif rec.max_abs_diff is not None:
        line += f"  max|diff|={rec.max_abs_diff:.3g} {'OK' if rec.within_tol else 'FAIL'}"
    if rec.stages_ms:
        st = rec.stages_ms

        def stage(key: str) -> str:
            return units.ms_value(st.get(key), sig=3)

        line += f"\n{'':<{w}} " + (f"import {stage('import')}  " if "import" in st else "")
        line += f"load {stage('load')}  forward#1 {stage('first_forward')}  steady {stage('steady_forward')}"
        if rec.modules_added_total is not None:
            line += f"  load added {rec.modules_added_total} modules"
        top = list((rec.modules_added or {}).items())[:4]
        if top:
            line += ": " + ", ".join(f"{k} {v}" for k, v in top)
        sub = list((rec.modules_added_torch or {}).items())[:3]
        if sub:
            line += " (" + ", ".join(f"{k} {v}" for k, v in sub) + ")"
    for d in [] if rec.accuracy is not None else rec.outputs or []:
        if len(rec.outputs or []) > 1 or not d.within_tol:
            line += f"\n{'':<{w}} {d.line()}"
    if rec.accuracy is not None:
        from deploytui.scenarios.accuracy.variants import accuracy_text

        line += f"\n{'':<{w}} accuracy: {accuracy_text(rec.accuracy)}"
    if rec.task is not None:
        from deploytui.scenarios.accuracy.score_text import task_text

        line += f"\n{'':<{w}} on your data: {task_text(rec.task)}"
    if rec.error:
        line += f"\n{'':<{w}} {_problem(rec)}"
        if rec.stage:
            line += f"\n{'':<{w}} stage {rec.stage} failed" + (f"; full log: {rec.log}" if rec.log else "")
    return line


def _problem(rec: RunRecord) -> str:
    """`failed: exit 1: …`, `unavailable: step …`, or `FAIL: output_0 differs …` for a run that is
    ok but beyond tolerance; the status is not repeated when the reason starts with it."""
    from deploytui.core.record import RunStatus

    if rec.status == RunStatus.NOT_APPLICABLE:
        return rec.error or "not applicable"
    label = str(rec.status) if rec.status != RunStatus.OK else "FAIL"
    error = rec.error or ""
    return error if error.startswith(label + ":") else f"{label}: {error}"
