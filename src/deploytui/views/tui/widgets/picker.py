"""The options of a picker (the model picker, the target picker): one line a choice, its name
in a column as wide as the longest (NAME_W at most), two spaces, then what it is, dim. The list
that shows them cuts that line with … (`PickerList`'s CSS), so a choice never wraps under the
next one and a long name never runs into its description."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from deploytui.core import shorten

NAME_W = 26  # the widest the names' column gets


def short_name(text: str) -> str:
    """A name in NAME_W characters: whole, else without the options after a comma (`,…`), a
    long one keeping its end, where a path or a model's name is (`…on:mobilenet_v3_small,…`,
    `…ts/models/char_lm.py:make`)."""
    if len(text) <= NAME_W:
        return text
    base = text.split(",", 1)[0]
    options = ",…" if base != text else ""
    keep = NAME_W - len(options)
    return shorten.start(base, keep) + options


class PickerList(OptionList):
    """An OptionList of (name, what it is) choices, ▶ on the one shown; an option's id is its
    name, whole."""

    DEFAULT_CSS = "PickerList { height: auto; max-height: 16; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, choices: list[tuple[str, str]], shown: str, *, id: str) -> None:
        width = max((len(short_name(name)) for name, _ in choices), default=0)
        options = []
        for name, about in choices:
            prompt = Text(f"{'▶' if name == shown else ' '} {short_name(name):<{width}}  ", style="bold")
            prompt.append(about, style="dim")
            options.append(Option(prompt, id=name))
        super().__init__(*options, id=id)
