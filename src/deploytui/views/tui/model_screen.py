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
from textual.widgets.option_list import Option

NAME_W = 26  # the widest the names' column gets; the description after it (one line a model, cut with …)


def short_name(text: str) -> str:
    """A model's --model text in NAME_W characters: whole, else its name without the options
    after a comma (`,…`), a long one keeping its end (`…on:mobilenet_v3_small,…`,
    `…ts/models/char_lm.py:make`)."""
    if len(text) <= NAME_W:
        return text
    base = text.split(",", 1)[0]
    options = ",…" if base != text else ""
    keep = NAME_W - len(options)
    return (base if len(base) <= keep else "…" + base[len(base) - keep + 1 :]) + options


class ModelScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    ModelScreen { align: center middle; }
    #model-box {
        width: 130; max-width: 95%; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    #model-list { height: auto; max-height: 16; text-wrap: nowrap; text-overflow: ellipsis; }
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
            options = []
            width = max((len(short_name(text)) for text, _ in self.models), default=0)
            for text, line in self.models:
                mark = "▶" if text == self.shown else " "
                prompt = Text(f"{mark} {short_name(text):<{width}}  ", style="bold")
                prompt.append(line, style="dim")
                options.append(Option(prompt, id=text))
            yield OptionList(*options, id="model-list")
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
        self.dismiss(event.option.id)

    @on(Input.Submitted, "#model-input")
    def _typed(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_close(self) -> None:
        self.dismiss(None)
