"""The Diff tab: each output of the form's last run against eager's, its worst elements and the
verdict, recomputed from the stored outputs (`outputs/<form>.safetensors`) and the reference
(`reference.safetensors`) with tensorfile and numerics.compare_output: what is shown is what is
judged. No numpy: a million-element output is read as Python floats, and only its worst
elements are shown."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from deploytui.core.modelref import tolerance
from deploytui.core.record import RunRecord
from deploytui.core.tensorfile import TensorFileError
from deploytui.core.workspace import Workspace
from deploytui.judge import numerics
from deploytui.scenarios.accuracy import score_text, variants


class DiffView(VerticalScroll):
    DEFAULT_CSS = """
    DiffView { height: 1fr; }
    #diff-table { height: auto; }
    #diff-summary { height: auto; margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="diff-summary")
        yield DataTable(show_cursor=False, zebra_stripes=True, id="diff-table")

    def show(self, form_key: str, rec: RunRecord | None, ws: Workspace, unavailable: str = "") -> None:
        """`ws`: the workspace of the model shown (its outputs and eager's reference)."""
        summary = self.query_one("#diff-summary", Static)
        table = self.query_one("#diff-table", DataTable)
        table.clear(columns=True)
        table.display = False
        if rec is None:
            hint = f"it cannot run: {unavailable}" if unavailable else "press r"
            summary.update(Text(f"{form_key} has not been run: nothing to compare yet ({hint})."))
            return
        if not rec.outputs:
            why = rec.error or "the run wrote no outputs"
            summary.update(Text(f"No comparison for {form_key}: {why}", style="red"))
            return
        atol, rtol = tolerance(ws.model)
        try:
            diffs = numerics.compare_files(ws.outputs_path(form_key), ws.reference_path, atol, rtol)
        except (numerics.ShapeError, TensorFileError) as e:
            summary.update(Text(f"No comparison for {form_key}: {e}", style="red"))
            return
        ok = all(d.within_tol for d in diffs)
        t = Text()
        if rec.accuracy is not None:  # a variant: its budget is the verdict, the tolerance a figure
            acc = rec.accuracy
            t.append(f"verdict ({acc.precision}, its accuracy budget) ", style="bold")
            t.append(
                "OK" if acc.within_budget else "FAIL",
                style="bold green" if acc.within_budget else "bold red",
            )
            t.append(f": {variants.accuracy_text(acc)}\n")
            t.append("the fp32 tolerance, for reference: ", style="bold")
        else:
            t.append("verdict ", style="bold")
        # an output may be judged apart from the model's tolerance (numerics.output_atol, HALF_RTOL)
        own = [(d.atol, d.rtol) != (atol, rtol) for d in diffs]
        within = f"atol {atol:g} + rtol {rtol:g}·|eager|" + (" or its own (below)" if any(own) else "")
        t.append(
            f"OK: every output within {within}" if ok else "FAIL",
            style="bold green" if ok else "bold red",
        )
        if rec.task is not None:  # labelled --data: the task's metric beside the agreement
            t.append("\non your data ", style="bold")
            t.append(f"{score_text.task_text(rec.task)}\n")
            t.append(f"data: {score_text.data_text(rec.task)}")
        for d, apart in zip(diffs, own, strict=True):
            t.append(f"\n{d.name} {d.shape} n={d.n}: ", style="bold")
            if apart:
                t.append(f"atol {d.atol:g} + rtol {d.rtol:g}·|eager|   ")
            t.append(
                f"max |diff| {d.max_abs:.3g}   mean |diff| {d.mean_abs:.3g}   max rel {d.max_rel:.3g}   "
                f"min atol to pass {d.min_atol:.3g}   "
            )
            if d.within_tol:
                t.append("OK", style="green")
            else:
                t.append(f"FAIL ({d.failing} outside)", style="red")
            if d.max_abs == 0:
                t.append("   bit-identical to eager")
        summary.update(t)
        table.display = True
        table.add_columns("output", "index", "this form", "eager", "|diff|")
        for d in diffs:
            for el in d.worst if d.max_abs else []:
                table.add_row(Text(d.name), str(el.index), _num(el.got), _num(el.want), f"{el.abs_diff:.3g}")


def _num(v: float) -> str:
    return f"{v:+.9g}" if isinstance(v, float) else str(v)
