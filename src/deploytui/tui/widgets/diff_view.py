"""The Diff tab: the form's logits beside eager's, element by element, and the verdict."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from deploytui.tui import fmt


class DiffView(VerticalScroll):
    DEFAULT_CSS = """
    DiffView { height: 1fr; }
    #diff-table { height: auto; }
    #diff-summary { height: auto; margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="diff-summary")
        yield DataTable(show_cursor=False, zebra_stripes=True, id="diff-table")

    def show(self, form_key: str, rec: dict | None, reference: list | None, ref_error: str = "") -> None:
        summary = self.query_one("#diff-summary", Static)
        table = self.query_one("#diff-table", DataTable)
        table.clear(columns=True)
        diff = (rec or {}).get("diff")
        got = (rec or {}).get("logits")
        if rec is None:
            summary.update(Text(f"{form_key} has not been run: nothing to compare yet (press r)."))
            table.display = False
            return
        if not isinstance(diff, dict):
            why = rec.get("error") or "the run printed no logits"
            summary.update(Text(f"No comparison for {form_key}: {why}", style="red"))
            table.display = bool(reference)
            if reference:
                self._fill(table, got, reference, None, None)
            return
        ok = bool(diff.get("within_tol"))
        t = Text("verdict ", style="bold")
        t.append(fmt.verdict_text(rec), style="bold green" if ok else "bold red")
        t.append(f"\nmax |diff| {diff.get('max_abs', 0):.3g}   mean |diff| {diff.get('mean_abs', 0):.3g}   "
                 f"max rel {diff.get('max_rel', 0):.3g}   tolerance {diff.get('tol', 0):g}")
        wi = diff.get("worst_index") or []
        if not diff.get("max_abs"):
            wi = []  # bit-identical: no element is worse than another
            t.append("\nbit-identical to eager: every element equal as f32")
        else:
            t.append(f"\nworst element {tuple(wi)}: got {diff.get('worst_got', float('nan')):.9g}, "
                     f"eager {diff.get('worst_want', float('nan')):.9g}   shape {diff.get('shape')}  "
                     f"n={diff.get('n')}")
        if ref_error:
            t.append(f"\n⚠ {ref_error}", style="yellow")
        summary.update(t)
        table.display = True
        self._fill(table, got, reference, diff.get("abs_diffs"), wi)

    @staticmethod
    def _fill(table: DataTable, got, want, absd, worst) -> None:
        table.add_columns("index", "this form", "eager", "|diff|", "")
        rows = want if isinstance(want, list) else got
        if not isinstance(rows, list):
            return
        for i, r in enumerate(rows):
            for j, _ in enumerate(r if isinstance(r, list) else []):
                g = _at(got, i, j)
                w = _at(want, i, j)
                d = _at(absd, i, j)
                mark = "◀ worst" if worst and list(worst) == [i, j] else ""
                table.add_row(f"[{i},{j}]", _num(g), _num(w), f"{d:.3g}" if isinstance(d, (int, float)) else "–",
                              Text(mark, style="bold yellow"))


def _at(m, i, j):
    try:
        return m[i][j]
    except (TypeError, IndexError, KeyError):
        return None


def _num(v) -> str:
    return f"{v:+.9f}" if isinstance(v, (int, float)) else "–"
