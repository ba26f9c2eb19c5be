"""Text cut to a width with an ellipsis, at its end, in its middle or at its start: the one
place where the views shorten a label, a form key, a name or a reason."""

from __future__ import annotations

ELLIPSIS = "…"


def end(text: str, width: int) -> str:
    """`text` in `width` characters: whole, or its start and `…` (a label, a key, a reason)."""
    return text if len(text) <= width else text[: width - 1] + ELLIPSIS


def middle(text: str, width: int) -> str:
    """`text` in `width` characters: whole, or its start and end around `…` (a tensor's or a
    symbol's name reads by both ends: `model.layers.1…proj.weight`)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (width - 1 - head) :]


def start(text: str, width: int) -> str:
    """`text` in `width` characters: whole, or `…` and its end (a path: `…/models/lm.py:make`)."""
    return text if len(text) <= width else ELLIPSIS + text[len(text) - width + 1 :]
