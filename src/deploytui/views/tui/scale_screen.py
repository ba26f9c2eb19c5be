"""The Scale screen (key s): how each form's cost grows across the mlp sweep (scenarios.sweep).

Two log-log charts (start-up and peak RSS against parameters, one line per form), the fitted
figures per form, the measured winners per size and the failed points with their reason, all
from artifacts/sweep.json. `w` sweeps in the background (the job lane), with progress: sizes
done, the size and form in flight, time so far; escape cancels it (the form in flight is not
stored), or closes the screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from deploytui.core import plot
from deploytui.families import registry
from deploytui.scenarios.sweep import text as scale_text
from deploytui.views.tui.host import AppHost, close, host_of
from deploytui.views.tui.widgets.chart import PlotextChart

if TYPE_CHECKING:
    from deploytui.scenarios.sweep.sweep import SweepEvent


class ScaleScreen(Screen):
    DEFAULT_CSS = """
    #scale-box { padding: 0 1; }
    #scale-status { height: auto; }
    #scale-charts { height: 20; }
    #scale-charts PlotextChart { width: 1fr; height: 20; }
    #scale-fit { height: auto; max-height: 18; }
    #scale-notes { height: auto; }
    """
    BINDINGS = [
        Binding("w", "sweep", "Sweep", id="scale-sweep"),
        Binding("escape", "close", "Close / cancel", id="scale-close"),
    ]

    @property
    def host(self) -> AppHost:
        """The app, as the screens see it (they never import it)."""
        return host_of(self)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="scale-box"):
            yield Static("", id="scale-status")
            with Horizontal(id="scale-charts"):
                yield PlotextChart("no sweep yet: press w", id="scale-startup")
                yield PlotextChart("", id="scale-rss")
            yield Static("", id="scale-legend")
            yield DataTable(id="scale-fit", zebra_stripes=True, cursor_type="row")
            yield Static("", id="scale-notes")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_points()
        self.show_status()

    def keys(self) -> list[str]:
        return [f.key for f in registry.FORMS]

    def refresh_points(self) -> None:
        points = self.host.session.sweep_points()
        keys = self.keys()
        table = self.query_one("#scale-fit", DataTable)
        table.clear(columns=True)
        columns, rows = scale_text.fit_rows(points, keys)
        table.add_columns(*columns)
        for row in rows:
            table.add_row(*row, key=row[0])
        if not points:
            for chart in self.query(PlotextChart):
                chart.plot(None)
            self.query_one("#scale-notes", Static).update("")
            self.query_one("#scale-legend", Static).update("")
            return
        stamp = tuple((p.model, len(p.records)) for p in points)
        for measure, title in scale_text.CHARTS:
            self.query_one(f"#scale-{measure}", PlotextChart).plot(
                scale_text.chart(points, keys, measure, title), key=(measure, stamp)
            )
        self.query_one("#scale-legend", Static).update(
            Text(scale_text.legend(points, keys, "startup"), style="dim")
        )
        notes = ["Winners per size (measured)", plot.table(*scale_text.winner_rows(points, keys))]
        fails = scale_text.failure_lines(points, keys)
        if fails:
            notes += ["", "Failed points", *fails]
        text = Text("\n".join(notes))
        for i, line in enumerate(text.plain.splitlines()):
            if line in ("Failed points", "Winners per size (measured)"):
                start = sum(len(s) + 1 for s in text.plain.splitlines()[:i])
                text.stylize("bold", start, start + len(line))
        self.query_one("#scale-notes", Static).update(text)

    def show_status(self, e: SweepEvent | None = None) -> None:
        s = self.host.session
        points = s.sweep_points()
        if e is None:
            if s.lane.find("sweep"):
                line = "sweep waiting for the job in flight…"
            else:
                line = f"{len(points)} sizes measured (artifacts/sweep.json): w sweeps the rest"
        else:
            head = f"sweeping: {e.done}/{e.total} sizes done, {e.elapsed_s:.0f} s so far"
            if e.kind == "done":
                head = f"sweep finished: {e.done}/{e.total} sizes in {e.elapsed_s:.0f} s"
            flight = f" — in flight: {e.model}" + (f", {e.what}" if e.what else "") if e.model else ""
            line = head + flight + (f" ({e.text})" if e.text and e.kind == "form" else "")
        self.query_one("#scale-status", Static).update(Text(line))

    def sweep_event(self, e: SweepEvent) -> None:
        if not self.is_mounted:
            return
        self.show_status(e)
        if e.kind in ("record", "skip", "done"):
            self.refresh_points()

    def finished(self, cancelled: bool, error: str) -> None:
        self.refresh_points()
        if error or cancelled:
            why = f"sweep failed: {error}" if error else "sweep cancelled (the form in flight was not stored)"
            self.query_one("#scale-status", Static).update(Text(why, style="bold"))

    def action_sweep(self) -> None:
        self.host.start_sweep()

    def action_close(self) -> None:
        if self.host.job == "sweep":
            self.host.action_cancel()
            return
        close(self)
