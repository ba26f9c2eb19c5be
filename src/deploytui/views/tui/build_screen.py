"""The build screen (key b): progress through the build steps and their log, fed by BuildEvents."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, ProgressBar, RichLog, Static

from deploytui.core.units import duration
from deploytui.views.tui.host import AppHost, close, host_of

if TYPE_CHECKING:
    from deploytui.spec.manifest import Manifest

STATUS_STYLE = {
    "ok": "green",
    "up-to-date": "dim green",
    "failed": "bold red",
    "unavailable": "yellow",
    "skipped": "yellow",
}


class BuildScreen(Screen):
    DEFAULT_CSS = """
    #build-box { padding: 0 1; }
    #build-status { height: auto; }
    #build-log { height: 1fr; border: round $primary 50%; }
    """
    BINDINGS = [Binding("escape", "close", "Close / cancel", id="build-close")]

    @property
    def host(self) -> AppHost:
        """The app, as the screens see it (they never import it)."""
        return host_of(self)

    def compose(self) -> ComposeResult:
        with Vertical(id="build-box"):
            yield Static("Building…", id="build-status")
            yield ProgressBar(total=None, show_eta=False, id="build-progress")
            yield RichLog(id="build-log", max_lines=5000, wrap=False, markup=False)
        yield Footer()

    def __init__(self) -> None:
        super().__init__()
        self._pending: list = []

    def on_mount(self) -> None:
        for e in self._pending:
            self.add_event(e)
        self._pending.clear()

    def add_event(self, e) -> None:
        if not self.is_mounted:
            self._pending.append(e)
            return
        log = self.query_one("#build-log", RichLog)
        bar = self.query_one("#build-progress", ProgressBar)
        status = self.query_one("#build-status", Static)
        if e.kind == "plan":
            bar.update(total=max(e.total, 1), progress=0)
            # the log itself does not wrap (compiler output keeps its shape): the plan is wrapped here
            width = max(log.scrollable_content_region.width, 40)
            for line in textwrap.wrap(f"plan ({e.total} steps): {e.text}", width, subsequent_indent="    "):
                log.write(Text(line, style="dim"))
        elif e.kind == "start":
            status.update(Text(f"[{e.index}/{e.total}] {e.step}: {e.title}"))
            log.write(Text(f"[{e.index}/{e.total}] {e.step}: {e.title}", style="bold"))
        elif e.kind == "line":
            log.write(Text(f"    {e.text}"))
        elif e.kind == "end":  # steps run side by side: the end names its step, the bar counts ends
            bar.advance(1)
            t = Text(f"    {e.step}: ")
            t.append(e.status, style=STATUS_STYLE.get(e.status, ""))
            t.append(f" ({duration(e.wall_s)})" + (f" — {e.text}" if e.text else ""))
            log.write(t)

    def finished(self, manifest: Manifest | None, cancelled: bool, error: str) -> None:
        steps = manifest.steps if manifest else {}
        bad = [n for n, r in steps.items() if not r.ok]
        msg = (
            f"build failed: {error}"
            if error
            else "build cancelled"
            if cancelled
            else f"build finished: {len(steps) - len(bad)} steps ok"
            + (f", not ok: {', '.join(bad)}" if bad else "")
        )
        self.query_one("#build-status", Static).update(Text(msg + " — escape returns", style="bold"))
        self.query_one("#build-log", RichLog).write(Text(msg, style="bold"))

    def action_close(self) -> None:
        if self.host.job == "build":
            self.host.action_cancel()
            return
        close(self)
