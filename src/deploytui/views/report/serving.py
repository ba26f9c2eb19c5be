"""The serving section: the model's `bench --batch` cells, the sizes each form accepts, the charts."""

from __future__ import annotations

from deploytui.core import plot
from deploytui.core.workspace import Workspace
from deploytui.views.report.common import _md_table, scrub


def serve_section(ws: Workspace) -> list[str]:
    """The model's serving cells (`bench --batch … --threads …`, artifacts/<model>/serve.json),
    when there are some: the cells, the sizes each form accepts, the charts."""
    from deploytui.scenarios.serving import store as serve_store
    from deploytui.scenarios.serving import text as serve_text

    cells = serve_store.load(ws).forms
    if not cells:
        return []
    parts = [
        "## Serving: latency percentiles and throughput per batch size and thread count",
        "One fresh run per cell: W warm-up then K timed forwards, each timed alone; items/s = batch / "
        "mean forward; busy = the process's CPU time / wall time over the timed forwards. At a batch "
        "size the inputs are the example's first item repeated along dim 0 and the form runs on its "
        "dynamic-batch export where it has one.",
        _md_table(
            serve_text.COLUMNS, [[scrub(c).replace("|", "\\|") for c in r] for _, r in serve_text.rows(cells)]
        ),
    ]
    sizes = serve_text.accepted(cells)
    if sizes:
        parts.append(
            _md_table(
                ["form", "ran at batch", "refused batch"],
                [
                    [f, ", ".join(map(str, yes)) or "–", ", ".join(map(str, no)) or "–"]
                    for f, (yes, no) in sizes.items()
                ],
            )
        )
    if serve_text.chart_lines(cells, "p50"):
        for measure, title in serve_text.CHARTS:
            parts.append(f"```\n{plot.plain(serve_text.chart(cells, measure, title)(100, 20))}\n```")
        parts.append(f"`{serve_text.legend(cells)}`")
    return parts
