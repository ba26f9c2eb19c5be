"""The help screen (key ?): every key of the app, of the main screen and of the other screens."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from deploytui.views.tui import keys
from deploytui.views.tui.host import AppHost, close, host_of
from deploytui.views.tui.main_screen import TAB_KEYS

EXTRA = [
    ("↑ ↓  j k", "move through the forms"),
    ("enter", "run the highlighted form"),
    ("1 … 6", "tabs: " + ", ".join(name.title() for _, name in TAB_KEYS)),
    ("tab", "move focus (form list, tabs)"),
    ("ctrl+p", "command palette: every action by name"),
]


class HelpScreen(ModalScreen):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    #help-box { width: 64; height: auto; border: thick $primary; background: $surface; padding: 1 2; }
    #help-box .title { text-style: bold; margin-bottom: 1; }
    """
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="help-close")]

    @property
    def host(self) -> AppHost:
        """The app, as the screens see it (they never import it)."""
        return host_of(self)

    def compose(self) -> ComposeResult:
        from deploytui.views.tui.build_screen import BuildScreen
        from deploytui.views.tui.choose_screen import ChooseScreen
        from deploytui.views.tui.compare_screen import CompareScreen

        table = Table(box=None, show_header=False, padding=(0, 2))
        table.add_column(style="bold cyan")
        table.add_column()
        from deploytui.views.tui.scale_screen import ScaleScreen
        from deploytui.views.tui.serve_screen import ServeScreen

        runs = self.host.session.settings.describe()
        for k, d in keys.help_rows(self.host.BINDINGS, runs=runs) + EXTRA:
            table.add_row(k, d)
        screens = (
            ("compare screen (c)", CompareScreen),
            ("choose screen (o: tab moves between its fields)", ChooseScreen),
            ("scale screen (s)", ScaleScreen),
            ("serve screen (v)", ServeScreen),
            ("build screen (b)", BuildScreen),
        )
        for title, screen in screens:
            table.add_row("", "")
            table.add_row("", title, style="bold")
            for k, d in keys.help_rows(screen.BINDINGS):
                table.add_row(k, d)
        with Vertical(id="help-box"):
            yield Static("deploytui — keys", classes="title")
            yield Static(table)
            yield Static("escape closes this", classes="note")

    def action_close(self) -> None:
        close(self)
