"""A view-model section (what one inspector shows in one tab), and the shape of a section
builder: the core's (inspectors/form_view.py BUILDERS) and each family's (its `sections` module)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from deploytui.forms import Inspect


@dataclass
class Section:
    tab: str
    title: str
    kind: str  # "text" | "code" | "table" | "tree"
    text: str = ""
    language: str | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    error: str = ""


Builder = Callable[[Inspect], list[Section]]
# Inspect.kind -> (its tab, section kind, title when it cannot be built, builder of its sections)
Builders = dict[str, tuple[str, str, Callable[[Inspect], str], Builder]]


def one(build: Callable[[Inspect], Section]) -> Builder:
    return lambda i: [build(i)]
