"""The scale section: the mlp sweep's fit, grids, winners, failed points and charts."""

from __future__ import annotations

from deploytui.core import plot
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.views.report.common import _md_table, scrub


def scale_section(ws: Workspace) -> list[str]:
    """The mlp sweep (artifacts/sweep.json), when there is one: the fit, the measured grids, the
    winners per size, the failed points and the two log-log charts as text."""
    from deploytui.scenarios.sweep import store as sweep_store
    from deploytui.scenarios.sweep import text as scale_text

    points = sweep_store.load(ws.sweep_path).ordered()
    if not points:
        return []
    keys = [f.key for f in registry.FORMS]
    parts = [
        f"## Scale: the mlp family from {scale_text.params_text(points[0].params)} "
        f"to {scale_text.params_text(points[-1].params)} parameters",
        "Per form, least squares over the sizes it ran at: cost = fixed + per-Mparam × parameters/10⁶ "
        "(R² shown); copies = (peak RSS at the largest size − at the smallest) ÷ the weights' bytes; "
        "x-over = the size where the per-parameter part equals the fixed part (start-up, peak RSS).",
        _md_table(*scale_text.fit_rows(points, keys)),
        "### Start-up (median) per size",
        _md_table(*scale_text.grid_rows(points, keys, "startup")),
        "### Peak RSS (median) per size",
        _md_table(*scale_text.grid_rows(points, keys, "rss")),
        "### Build per size: seconds of its model steps / peak memory of the build / ship size",
        _md_table(*scale_text.build_rows(points, keys)),
        "### Winners per size (measured)",
        _md_table(*scale_text.winner_rows(points, keys)),
    ]
    fails = scale_text.failure_lines(points, keys)
    if fails:
        parts += ["### Failed points", "\n".join(f"- {scrub(line)}" for line in fails)]
    for measure, title in scale_text.CHARTS:
        chart = plot.plain(scale_text.chart(points, keys, measure, title)(100, 24))
        parts.append(f"```\n{chart}\n{scale_text.legend(points, keys, measure)}\n```")
    return parts
