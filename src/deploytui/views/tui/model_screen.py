"""The model picker (key m): the zoo, the models built here, or a model of your own by name.

It only chooses: the app opens what it returns (`DeployApp.open_model`), which checks and builds
a model never built here in the background.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static

from deploytui.views.tui.host import close
from deploytui.views.tui.widgets.picker import PickerList


class ModelScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    ModelScreen { align: center middle; }
    #model-box {
        width: 130; max-width: 95%; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    #model-hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "Close", id="model-close")]

    def __init__(self, models: list[tuple[str, str]], shown: str) -> None:
        super().__init__()
        self.models = models  # (--model text, one line about it)
        self.shown = shown

    def compose(self) -> ComposeResult:
        with Vertical(id="model-box"):
            yield Static(Text("Open a model", style="bold"))
            yield PickerList(self.models, self.shown, id="model-list")
            yield Static(
                "or your own: path/to/file.py:factory, package.module:factory, mlp:hidden=64,depth=3,\n"
                "torchvision:resnet18, timm:NAME, hf:FOLDER, hf-config:config.json (,seq_len=N / "
                ",input_shape=1x3x64x64); then ` --data SPEC` to judge it on your samples (docs/data.md)",
                id="model-hint",
            )
            yield Input(placeholder="model (enter opens it)", id="model-input")

    def on_mount(self) -> None:
        self.query_one("#model-list", OptionList).focus()

    @on(OptionList.OptionSelected, "#model-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        close(self, event.option.id)

    @on(Input.Submitted, "#model-input")
    def _typed(self, event: Input.Submitted) -> None:
        close(self, event.value.strip() or None)

    def action_close(self) -> None:
        close(self, None)
