"""The serving cells as text: one row per cell (latency percentiles, throughput, threads), the
sizes each form accepts, and the log-log charts of p50 / p99 and of items/s against batch size.
`bench --batch --show`, the report and the app's Serve screen all show these."""

from __future__ import annotations

from collections.abc import Callable

from deploytui.core import plot
from deploytui.core.record import RunRecord, RunStatus
from deploytui.core.units import seconds
from deploytui.scenarios.serving import store as serve_store

Cells = dict[str, RunRecord]  # cell key (serve.key) -> record, as serve.json holds them

COLUMNS = ["form", "batch", "threads", "p50", "p90", "p99", "items/s", "reported", "busy", "status"]
SORTS = ("form", "p50", "p99", "items/s")  # what the rows can be sorted by


parts = serve_store.split_key


def ok(rec: RunRecord) -> bool:
    return rec.status == RunStatus.OK and rec.forwards is not None


def why(rec: RunRecord) -> str:
    """✗ and the stage and words that stopped the cell (or FAIL for outputs off tolerance)."""
    if ok(rec):
        return "ok" if rec.outputs_pass is not False else f"FAIL {rec.error or 'numerics'}"[:120]
    where = f"{rec.stage}: " if rec.stage else ""
    return f"✗ {where}{rec.error or rec.status}"[:160]


def row(cell: str, rec: RunRecord) -> list[str]:
    form, batch, threads = parts(cell)
    batch = batch if batch != "-" else f"{rec.batch or '?'} (example)"
    f = rec.forwards
    if not ok(rec) or f is None:
        return [form, batch, threads, "", "", "", "", "", "", why(rec)]
    tput = serve_store.items_per_s(rec)
    th = rec.threads
    return [
        form,
        batch,
        threads,
        seconds(f.p50_ms / 1000),
        seconds(f.p90_ms / 1000),
        seconds(f.p99_ms / 1000),
        f"{tput:.1f}" if tput is not None else "",
        str(th.reported) if th and th.reported is not None else "–",
        f"{th.busy:.2f}" if th and th.busy is not None else "–",
        why(rec),
    ]


def sort_value(cell: str, rec: RunRecord, by: str) -> tuple[object, ...]:
    """Rows in the order `by` asks (failed cells last for a figure)."""
    form, batch, threads = parts(cell)
    place = (form, int(batch) if batch.isdigit() else 0, int(threads) if threads.isdigit() else 0)
    f = rec.forwards if ok(rec) else None
    if by == "form" or f is None:
        return (by != "form" and f is None, place)
    figure = {"p50": f.p50_ms, "p99": f.p99_ms, "items/s": -(serve_store.items_per_s(rec) or 0.0)}[by]
    return (False, figure, place)


def applies(rec: RunRecord) -> bool:
    """The form can exist for the model (a not-applicable form's cells are left out)."""
    return rec.status != RunStatus.NOT_APPLICABLE


def rows(cells: Cells, by: str = "form") -> list[tuple[str, list[str]]]:
    shown = [(k, r) for k, r in cells.items() if applies(r)]
    ordered = sorted(shown, key=lambda kv: sort_value(kv[0], kv[1], by))
    return [(k, row(k, r)) for k, r in ordered]


def accepted(cells: Cells) -> dict[str, tuple[list[int], list[int]]]:
    """Per form, the batch sizes it ran at and those it refused (any thread count)."""
    out: dict[str, tuple[list[int], list[int]]] = {}
    for cell, rec in cells.items():
        form, batch, _ = parts(cell)
        if not batch.isdigit() or not applies(rec):
            continue
        yes, no = out.setdefault(form, ([], []))
        target = yes if ok(rec) else no
        if int(batch) not in target:
            target.append(int(batch))
    for yes, no in out.values():
        yes.sort()
        no[:] = sorted(b for b in no if b not in yes)
    return out


CHARTS = (
    ("p50", "p50 per forward against batch size (one thread count: the lowest)"),
    ("p99", "p99 per forward against batch size"),
    ("items/s", "throughput (items/s) against batch size"),
)


def chart_lines(cells: Cells, measure: str) -> list[tuple[str, list[float], list[float]]]:
    """Per form, its value at each batch size it ran at, at its lowest thread count."""
    by_form: dict[str, dict[int, tuple[int, float]]] = {}
    for cell, rec in cells.items():
        form, batch, threads = parts(cell)
        f = rec.forwards
        if not (ok(rec) and f and batch.isdigit() and threads.isdigit()):
            continue
        value = {
            "p50": f.p50_ms / 1000,
            "p99": f.p99_ms / 1000,
            "items/s": serve_store.items_per_s(rec) or 0.0,
        }[measure]
        seen = by_form.setdefault(form, {})
        if int(batch) not in seen or int(threads) < seen[int(batch)][0]:
            seen[int(batch)] = (int(threads), value)
    return [
        (form, [float(b) for b in sorted(pts)], [pts[b][1] for b in sorted(pts)])
        for form, pts in by_form.items()
    ]


def chart(cells: Cells, measure: str, title: str) -> Callable[[int, int], str]:
    y_text = seconds if measure != "items/s" else (lambda v: f"{v:.3g}")
    return plot.loglog(chart_lines(cells, measure), title=title, x_text=lambda v: f"{v:g}", y_text=y_text)


def legend(cells: Cells, measure: str = "p50") -> str:
    names = [name for name, _, _ in chart_lines(cells, measure)]
    return "  ".join(f"{plot.MARKERS[i % len(plot.MARKERS)]} {n}" for i, n in enumerate(names))


def render(cells: Cells, width: int = 100, height: int = 20, charts: bool = True) -> str:
    """Everything as plain text (the report's section)."""
    out = [
        "Per cell: one fresh run, W warm-up then K timed forwards, each timed alone; p50/p90/p99 of "
        "those, items/s = batch / mean forward, busy = CPU / wall over the timed forwards",
        plot.table(COLUMNS, [r for _, r in rows(cells)]),
    ]
    sizes = accepted(cells)
    if sizes:
        out.append("Batch sizes each form ran at (✓) and refused (✗)")
        out.append(
            "\n".join(
                f"{form}: ✓ {', '.join(map(str, yes)) or '–'}"
                + (f"  ✗ {', '.join(map(str, no))}" if no else "")
                for form, (yes, no) in sizes.items()
            )
        )
    if charts and chart_lines(cells, "p50"):
        for measure, title in CHARTS:
            out.append(plot.plain(chart(cells, measure, title)(width, height)))
        out.append(legend(cells))
    return "\n\n".join(out)
