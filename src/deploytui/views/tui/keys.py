"""The palette's commands and the help screen's rows, made from the BINDINGS: a binding's
`tooltip` is its one long text, "Title — what it does" ({runs} is the run settings' words), so
the footer, the palette and the help screen cannot drift apart."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from textual.actions import parse
from textual.binding import Binding

SEP = " — "


def key_label(b: Binding) -> str:
    """How a binding's keys are written: its key_display, else its keys ("escape x")."""
    return b.key_display or b.key.replace(",", " ")


def unique(bindings: Iterable[Any]) -> Iterator[Binding]:
    """Each binding once per id (the first one for keys that share an id)."""
    seen: set[str | None] = set()
    for b in bindings:
        if isinstance(b, Binding) and b.id not in seen:
            seen.add(b.id)
            yield b


def long_text(b: Binding, **words: str) -> tuple[str, str]:
    """(title, what it does) from the tooltip; (description, "") without one."""
    if not b.tooltip:
        return b.description, ""
    title, _, what = b.tooltip.format(**words).partition(SEP)
    return title, what


def commands(
    target: Any, bindings: Iterable[Any], **words: str
) -> Iterator[tuple[str, str, Callable[[], Any]]]:
    """(title, help, callback) for each binding with a tooltip: the callback calls the action on
    `target` (the app or a screen) as the key would; the help ends with the key."""
    for b in unique(bindings):
        if not b.tooltip:
            continue
        title, what = long_text(b, **words)
        _, name, params = parse(b.action)
        yield (
            title,
            f"{what} ({key_label(b)})".strip(),
            functools.partial(getattr(target, f"action_{name}"), *params),
        )


def help_rows(bindings: Iterable[Any], **words: str) -> list[tuple[str, str]]:
    """(keys, what they do) for the help screen."""
    rows = []
    for b in unique(bindings):
        title, what = long_text(b, **words)
        rows.append((key_label(b), f"{title}: {what}" if what else title))
    return rows
