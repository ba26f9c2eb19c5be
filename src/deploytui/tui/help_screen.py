"""The help screen (key ?): every key of the app and of the screen below it."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

EXTRA = [
    ("↑ ↓  j k", "move through the forms"),
    ("enter", "run the highlighted form"),
    ("1 … 6", "tabs: Artifact, Code, Graph, Symbols, Run, Diff"),
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

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2))
        table.add_column(style="bold cyan")
        table.add_column()
        seen = set()
        for b in self.app.BINDINGS:
            if isinstance(b, Binding) and b.id not in seen:
                seen.add(b.id)
                table.add_row(b.key_display or b.key.replace(",", " "), b.description)
        for k, d in EXTRA:
            table.add_row(k, d)
        with Vertical(id="help-box"):
            yield Static("deploytui — keys", classes="title")
            yield Static(table)
            yield Static("escape closes this", classes="note")

    def action_close(self) -> None:
        self.dismiss()
