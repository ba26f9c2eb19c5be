"""A section per target the model was measured on (`bench --target`): what the target is (as its
records carry it) and each form's start-up and peak RSS there beside this machine's, as ratios."""

from __future__ import annotations

from typing import Any

from deploytui.core.record import RunRecord
from deploytui.core.record_parts import Where
from deploytui.core.units import human, ms
from deploytui.core.workspace import Workspace
from deploytui.scenarios.startup import results
from deploytui.views.report.common import _md_table, scrub


def _where(records: dict[str, RunRecord]) -> Where | None:
    return next((r.target for r in records.values() if r.target is not None), None)


def facts_text(w: Where | None) -> str:
    if w is None:
        return "no facts stored"
    words = [w.arch, w.os, w.glibc, w.cpu, f"{w.cores} cores" if w.cores else ""]
    words.append(human(w.memory_bytes) + " memory" if w.memory_bytes else "")
    text = " · ".join(x for x in words if x)
    return text + (" · emulated: timings are not the device's" if w.emulated else "")


def _median(rec: RunRecord | None, what: str) -> float | None:
    if rec is None or not rec.measured:
        return None
    stats = rec.wall if what == "wall" else rec.rss
    return stats.median if stats else None


def _ratio(there: float | None, here: float | None) -> float | None:
    return there / here if there is not None and here else None


def rows(ws: Workspace, target: str) -> tuple[Where | None, list[dict[str, Any]]]:
    """The target's facts and one row per form it ran (or failed) there."""
    there = results.load(ws.results_on(target)).forms
    here = results.load(ws.results_path).forms
    out = []
    for key, rec in there.items():
        h = here.get(key)
        s_there, s_here = _median(rec, "wall"), _median(h, "wall")
        r_there, r_here = _median(rec, "rss"), _median(h, "rss")
        out.append(
            {
                "form": key,
                "status": rec.status,
                "error": rec.error,
                "startup_s": s_there,
                "startup_here_s": s_here,
                "startup_ratio": _ratio(s_there, s_here),
                "peak_rss_bytes": r_there,
                "peak_rss_here_bytes": r_here,
                "peak_rss_ratio": _ratio(r_there, r_here),
                "max_abs_diff": rec.max_abs_diff,
                "runs": len(rec.wall_s),
            }
        )
    return _where(there), out


def targets_json(ws: Workspace) -> list[dict[str, Any]]:
    found = []
    for name in ws.measured_targets():
        where, table = rows(ws, name)
        found.append({"target": name, "machine": where.__dict__ if where else None, "forms": table})
    return found


def _cell(v: float | None, fmt: Any) -> str:
    return "–" if v is None else fmt(v)


def targets_section(ws: Workspace) -> list[str]:
    parts: list[str] = []
    for name in ws.measured_targets():
        where, table = rows(ws, name)
        if where is not None and where.emulated:
            parts.append(f"## On target {name} (emulated {where.arch or ''}, qemu-user)")
            parts.append(
                f"{facts_text(where)}. Run in an emulated root by the same launcher as here (`bench "
                f"--target {name}`): it proves each bundle starts there with only that root's /usr and "
                "its outputs match eager (judged here); its start-up and peak RSS are qemu's, shown "
                "marked emulated and never ranked."
            )
        else:
            parts.append(f"## On target {name}")
            parts.append(
                f"{facts_text(where)}. Measured there over SSH by the same launcher as here (`bench "
                f"--target {name}`): start-up and peak RSS are the target's own; outputs are judged here "
                "against eager."
            )
        body = []
        for r in table:
            if r["status"] != "ok":
                body.append([r["form"], scrub(r["error"] or r["status"]), "", "", "", "", "", ""])
                continue
            body.append(
                [
                    r["form"],
                    _cell(r["startup_s"], ms),
                    _cell(r["startup_here_s"], ms),
                    _cell(r["startup_ratio"], lambda v: f"{v:.2f}×"),
                    _cell(r["peak_rss_bytes"], human),
                    _cell(r["peak_rss_here_bytes"], human),
                    _cell(r["peak_rss_ratio"], lambda v: f"{v:.2f}×"),
                    _cell(r["max_abs_diff"], lambda v: f"{v:.3g}"),
                ]
            )
        there = "there (emulated)" if where is not None and where.emulated else "there"
        header = [
            "form",
            f"start-up {there}",
            "here",
            "there/here",
            f"peak RSS {there}",
            "here",
            "there/here",
        ]
        parts.append(_md_table([*header, "max\\|diff\\|"], body))
    return parts
