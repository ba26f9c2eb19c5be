"""The options of a picker (the model picker, the target picker): one line a choice, its name
in a column as wide as the longest (NAME_SHARE of the list's width at most, never under NAME_W),
two spaces, then what it is, dim. The list that shows them cuts that line with … (`PickerList`'s
CSS), so a choice never wraps under the next one and a long name never runs into its
description; it lays the names out again when its width changes."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from deploytui.core import shorten

NAME_W = 26  # the names' column at 80 columns, and its floor
NAME_SHARE = 0.45  # the most of a wider list's width the names' column takes


def short_name(text: str, width: int = NAME_W) -> str:
    """A name in `width` characters: whole, else without the options after a comma (`,…`), a
    long one keeping its end, where a path or a model's name is (`…on:mobilenet_v3_small,…`,
    `…ts/models/char_lm.py:make`)."""
    if len(text) <= width:
        return text
    base = text.split(",", 1)[0]
    options = ",…" if base != text else ""
    keep = width - len(options)
    return shorten.start(base, keep) + options


def name_width(longest: int, list_width: int) -> int:
    """The names' column for a list `list_width` wide: the longest name's, at most NAME_SHARE of
    the width, at least NAME_W (when a name is that long)."""
    return min(longest, max(NAME_W, int(list_width * NAME_SHARE)))


class PickerList(OptionList):
    """An OptionList of (name, what it is) choices, ▶ on the one shown; an option's id is its
    name, whole."""

    DEFAULT_CSS = "PickerList { height: auto; max-height: 16; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, choices: list[tuple[str, str]], shown: str, *, id: str) -> None:
        self.choices = choices
        self.shown = shown
        self.longest = max((len(name) for name, _ in choices), default=0)
        self.name_w = name_width(self.longest, 0)
        super().__init__(*(Option(self._prompt(name, about), id=name) for name, about in choices), id=id)

    def _prompt(self, name: str, about: str) -> Text:
        prompt = Text(
            f"{'▶' if name == self.shown else ' '} {short_name(name, self.name_w):<{self.name_w}}  ",
            style="bold",
        )
        prompt.append(about, style="dim")
        return prompt

    def on_resize(self, event: events.Resize) -> None:
        width = name_width(self.longest, self.scrollable_content_region.width)
        if width != self.name_w:
            self.name_w = width
            for name, about in self.choices:
                self.replace_option_prompt(name, self._prompt(name, about))
