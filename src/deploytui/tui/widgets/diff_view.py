"""The Diff tab: the form's logits beside eager's, element by element, and the verdict."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from deploytui import numerics, units
from deploytui.record import RunRecord


class DiffView(VerticalScroll):
    DEFAULT_CSS = """
    DiffView { height: 1fr; }
    #diff-table { height: auto; }
    #diff-summary { height: auto; margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="diff-summary")
        yield DataTable(show_cursor=False, zebra_stripes=True, id="diff-table")

    def show(
        self,
        form_key: str,
        rec: RunRecord | None,
        reference: list | None,
        ref_error: str = "",
        tolerance: float = numerics.DEFAULT_TOL,
        unavailable: str = "",
    ) -> None:
        """Compare the stored logits with eager's afresh: what the table shows is what is judged."""
        summary = self.query_one("#diff-summary", Static)
        table = self.query_one("#diff-table", DataTable)
        table.clear(columns=True)
        table.display = False
        got = rec.logits if rec else None
        if rec is None:
            hint = f"it cannot run: {unavailable}" if unavailable else "press r"
            summary.update(Text(f"{form_key} has not been run: nothing to compare yet ({hint})."))
            return
        if not got:
            why = rec.error or "the run printed no logits"
            summary.update(Text(f"No comparison for {form_key}: {why}", style="red"))
            return
        if reference is None:
            summary.update(Text(f"No comparison for {form_key}: {ref_error}", style="red"))
            return
        try:
            d = numerics.compare(got, reference, tolerance)
        except numerics.ShapeError as e:
            summary.update(Text(f"No comparison for {form_key}: {e}", style="red"))
            return
        t = Text("verdict ", style="bold")
        if d.within_tol:
            t.append(f"OK (max|diff| {d.max_abs:.3g} ≤ {d.tol:g})", style="bold green")
        else:
            t.append(f"FAIL (max|diff| {d.max_abs:.3g} > {d.tol:g})", style="bold red")
        t.append(
            f"\nmax |diff| {d.max_abs:.3g}   mean |diff| {d.mean_abs:.3g}   max rel {d.max_rel:.3g}   "
            f"tolerance {d.tol:g}"
        )
        worst = None
        if d.max_abs == 0:
            t.append("\nbit-identical to eager: every element equal as f32")
        else:
            worst = d.worst_index
            t.append(
                f"\nworst element {tuple(worst)}: got {d.worst_got:.9g}, eager {d.worst_want:.9g}   "
                f"shape {d.shape}  n={d.n}"
            )
        summary.update(t)
        table.display = True
        table.add_columns("index", "this form", "eager", "|diff|", "")
        for i, row in enumerate(d.abs_diffs):
            for j, diff in enumerate(row):
                mark = "◀ worst" if worst == [i, j] else ""
                table.add_row(
                    f"[{i},{j}]",
                    _f32(got[i][j]),
                    _f32(reference[i][j]),
                    f"{diff:.3g}",
                    Text(mark, style="bold yellow"),
                )


def _f32(v: float) -> str:
    """As the comparison sees it: rounded to f32, then printed with 9 digits."""
    return f"{units.f32(float(v)):+.9f}"
