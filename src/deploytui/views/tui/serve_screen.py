"""The Serve screen (key v): the model's serving cells as `deploytui bench --batch … --threads …`
stored them (artifacts/<model>/serve.json): per form, batch size and thread count, the latency
percentiles of its timed forwards, its throughput, the threads its runtime reported and how many
were busy, or the ✗ and the words that stopped the cell; the sizes each form accepts; log-log
charts of p50 and of items/s against batch size. It redraws what is stored (`t` changes the
order: form, p50, p99, items/s); `w` measures every form's cells in the background (the job
lane, like the app's runs: subprocesses, never during a build), the table following as each
cell is stored; escape cancels it (the cell in flight is not stored), or closes the screen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from deploytui.core import defaults
from deploytui.scenarios.serving import store as serve_store
from deploytui.scenarios.serving import text as serve_text
from deploytui.views.tui.host import AppHost, close, host_of
from deploytui.views.tui.widgets.chart import PlotextChart

if TYPE_CHECKING:
    from deploytui.core.record import RunRecord
    from deploytui.core.workspace import Workspace
    from deploytui.scenarios.serving.serve import ServeEvent

SIZES = ",".join(map(str, defaults.SERVE_BATCHES)), ",".join(map(str, defaults.SERVE_THREADS))


def how(ws: Workspace, target: str | None) -> str:
    """How to measure the cells: the key, or the command that does the same."""
    on = ("--target", target) if target else ()
    return f"w measures them (or `{ws.command('bench', *on, '--batch', SIZES[0], '--threads', SIZES[1])}`)"


class ServeScreen(Screen):
    DEFAULT_CSS = """
    #serve-box { padding: 0 1; }
    #serve-status { height: auto; }
    #serve-charts { height: 18; }
    #serve-charts PlotextChart { width: 1fr; height: 18; }
    #serve-cells { height: auto; max-height: 30; }
    #serve-sizes { height: auto; }
    """
    BINDINGS = [
        Binding(
            "t", "sort", "Sort", id="serve-sort", tooltip="Sort — the cells by form, p50, p99 or items/s"
        ),
        Binding(
            "w",
            "measure",
            "Measure",
            id="serve-run",
            tooltip=f"Measure — every form at batch {SIZES[0]} × threads {SIZES[1]}, each cell a fresh "
            "run stored as it ends (the dynamic-batch exports built first); escape cancels",
        ),
        Binding("escape", "close", "Close / cancel", id="serve-close"),
    ]

    @property
    def host(self) -> AppHost:
        """The app, as the screens see it (they never import it)."""
        return host_of(self)

    def __init__(self) -> None:
        super().__init__()
        self.sort_by = serve_text.SORTS[0]
        self.progress = ""  # the serving run in flight, as its last event said
        self.last = ""  # the last cell it stored, and how it went
        self.cells: dict[str, RunRecord] = {}  # as redraw last read them
        self.dropped: list[str] = []

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="serve-box"):
            yield Static("", id="serve-status")
            with Horizontal(id="serve-charts"):
                yield PlotextChart("", id="serve-p50")
                yield PlotextChart("", id="serve-items")
            yield Static("", id="serve-legend")
            yield DataTable(id="serve-cells", zebra_stripes=True, cursor_type="row")
            yield Static("", id="serve-sizes")
        yield Footer()

    def on_mount(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        """This model's serve.json (here, or the chosen target's) read again, its cells drawn."""
        session = self.host.session
        store = serve_store.load(session.ws, session.target)
        self.cells, self.dropped = store.forms, store.dropped
        cells = self.cells
        self.show_status()
        table = self.query_one("#serve-cells", DataTable)
        table.clear(columns=True)
        table.add_columns(*serve_text.COLUMNS)
        for key, row in serve_text.rows(cells, self.sort_by):
            table.add_row(*row, key=key)
        stamp = tuple(sorted((k, r.measured_at or "") for k, r in cells.items()))
        for widget, (measure, title) in (
            ("#serve-p50", serve_text.CHARTS[0]),
            ("#serve-items", serve_text.CHARTS[2]),
        ):
            lines = serve_text.chart_lines(cells, measure)
            self.query_one(widget, PlotextChart).plot(
                serve_text.chart(cells, measure, title) if lines else None,
                empty="no batch sizes measured" if cells else "",
                key=(measure, stamp),
            )
        self.query_one("#serve-legend", Static).update(Text(serve_text.legend(cells), style="dim"))
        sizes = serve_text.accepted(cells)
        self.query_one("#serve-sizes", Static).update(
            Text(
                "\n".join(
                    f"{form}: accepts {', '.join(map(str, yes)) or '–'}"
                    + (f"; refused {', '.join(map(str, no))}" if no else "")
                    for form, (yes, no) in sizes.items()
                )
            )
        )

    def show_status(self) -> None:
        ref, target = self.host.session.model, self.host.session.target
        where = f" on {target}" if target else ""
        stored = (
            f"artifacts/{ref.slug}/targets/{target}/serve.json"
            if target
            else f"artifacts/{ref.slug}/serve.json"
        )
        status = (
            f"{len(self.cells)} cells stored for {ref.text}{where} ({stored}), "
            f"sorted by {self.sort_by}: t changes it"
        )
        if not self.cells:
            status = f"no serving cells for {ref.text}{where} yet: {how(self.host.session.ws, target)}"
        if self.dropped:
            status += "\n" + "\n".join(f"warning: {d}" for d in self.dropped)
        if self.host.session.lane.find("serve") and not self.progress:
            self.progress = "serving run waiting for the job in flight…"
        if self.progress:
            status = f"{self.progress}\n{status}"
        self.query_one("#serve-status", Static).update(Text(status))

    def serve_event(self, e: ServeEvent) -> None:
        """A serving run's progress, in place: the cell in flight, each cell as it is stored."""
        if not self.is_mounted:
            return
        if e.kind == "build":
            self.progress = e.text
        elif e.kind == "done":
            self.progress, self.last = "", ""
        else:
            if e.kind == "cell" and e.record is not None:
                self.last = f" (last: {e.cell} {serve_text.why(e.record)})"
            flight = f" — in flight: {e.cell} (escape cancels)" if e.kind == "start" else ""
            self.progress = f"measuring: {e.done}/{e.total} cells done{self.last}{flight}"
        if e.kind in ("cell", "done"):  # a cell stored: the table and charts change
            self.redraw()
        else:  # a cell or a build under way: the status line alone
            self.show_status()

    def finished(self, cancelled: bool, error: str) -> None:
        self.progress = ""
        if error or cancelled:
            self.progress = (
                f"serving run failed: {error}"
                if error
                else "serving run cancelled (the cell in flight was not stored)"
            )
        if self.is_mounted:
            self.redraw()

    def action_measure(self) -> None:
        self.host.start_serve()
        self.redraw()

    def action_sort(self) -> None:
        order = serve_text.SORTS
        self.sort_by = order[(order.index(self.sort_by) + 1) % len(order)]
        self.redraw()

    def action_close(self) -> None:
        if self.host.job == "serve":
            self.host.action_cancel()
            return
        close(self)
