"""The target picker (key t): this machine, or a target `deploytui target add` named. The form
list, the Run and Diff tabs and Compare then show the figures measured there, and `r` / `a`
measure there (its bundle sent once, the runs through the launcher there)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static

from deploytui.views.tui.host import close
from deploytui.views.tui.widgets.picker import PickerList

HERE = "this machine"


class TargetScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    TargetScreen { align: center middle; }
    #target-box {
        width: 100; max-width: 95%; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    #target-hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "Close", id="target-close")]

    def __init__(self, targets: list[tuple[str, str]], shown: str) -> None:
        super().__init__()
        self.targets = targets  # (name, what it is)
        self.shown = shown

    def compose(self) -> ComposeResult:
        with Vertical(id="target-box"):
            yield Static(Text("Where the figures are measured", style="bold"))
            choices = [(HERE, "where deploytui runs"), *self.targets]
            yield PickerList(choices, self.shown, id="target-list")
            yield Static(
                "more: deploytui target add NAME ssh://user@host (docs/targets.md)"
                if self.targets
                else "no targets yet: deploytui target add NAME ssh://user@host (docs/targets.md)",
                id="target-hint",
            )

    def on_mount(self) -> None:
        self.query_one("#target-list", OptionList).focus()

    @on(OptionList.OptionSelected, "#target-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        close(self, event.option.id)

    def action_close(self) -> None:
        close(self, None)
