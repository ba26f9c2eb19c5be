"""The list of every form, grouped by family, with its status and last measured numbers."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.binding import Binding
from textual.geometry import Region
from textual.reactive import reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from deploytui.core import shorten, units
from deploytui.core.record import RunRecord, RunStatus
from deploytui.families import registry
from deploytui.spec import forms
from deploytui.views.tui import fmt

WIDE_AT = 120  # terminal columns from which the list has room for its wide columns


class Columns:
    """A row's fixed columns, so every row is one line and every figure lines up: the key cut
    with … when longer, then start-up, RSS and the verdict (or a state in their place)."""

    def __init__(self, key: int, start: int, rss: int, iso: bool) -> None:
        self.key, self.start, self.rss, self.iso = key, start, rss, iso
        self.state = start + 1 + rss + 1 + 1  # a state's words take the figures' room

    @property
    def width(self) -> int:
        """Characters in a row: glyphs, key, figures, verdict (and the isolated mark)."""
        return 2 + self.key + 1 + self.state + (3 if self.iso else 0)


WIDE = Columns(key=23, start=7, rss=6, iso=True)  # every key whole
NARROW = Columns(key=16, start=6, rss=5, iso=False)  # a longer key cut with …
LIST_WIDTH = {False: WIDE.width + 4, True: NARROW.width + 4}  # + border and scrollbar


def cut(text: str, width: int) -> str:
    """`text` in at most `width` characters, a longer one cut with …, padded to `width`."""
    return shorten.end(text, width).ljust(width)


STATE_LABELS = {  # a form's state in a build in flight (session.BuildProgress): label, style
    "building": ("building…", "bold yellow"),
    "waiting": ("waiting", "grey50"),
    "built": ("✓ built", "green"),
}


def row(
    form: forms.Form,
    why: str,
    rec: RunRecord | None,
    running: bool = False,
    compact: bool = False,
    state: str = "",
) -> Text:
    """One form's line, always one line: ●/○ (▶ while it runs) key  start  RSS  verdict, or its
    state in a build in flight, the stage its build failed at, the reason it cannot run, in the
    figures' place; compact: the narrow columns (a long key cut with …, no isolated mark).
    `state`: building / waiting / built (session.BuildProgress) or "✗ STAGE"."""
    cols = NARROW if compact else WIDE
    built = not why
    t = Text(no_wrap=True, overflow="ellipsis", end="")
    if running:
        t.append("▶ ", style="bold yellow")
    else:
        t.append("● " if built else "○ ", style="green" if built else "grey50")
    t.append(cut(form.key, cols.key) + " ", style="" if built else "grey62")
    width = cols.state
    if running:
        t.append(f"{'running…':>{width}}", style="bold yellow")
    elif state in STATE_LABELS and (state != "built" or not rec):
        label, style = STATE_LABELS[state]
        t.append(f"{label:>{width}}", style=style)
    elif state and not built:  # "✗ export": the stage its build stopped at
        t.append(f"{shorten.end(state, width).strip():>{width}}", style="red")
    elif rec and rec.status == RunStatus.OK:
        t.append(f"{units.seconds(fmt.median(rec.wall_s)):>{cols.start}} ")
        t.append(f"{units.short_size(fmt.median(rec.peak_rss_bytes)):>{cols.rss}} ")
        mark = fmt.verdict_mark(rec)
        t.append(mark, style="bold green" if mark == fmt.CHECK else "bold red")
    elif rec and rec.status == RunStatus.FAILED:
        t.append(f"{'failed':>{width - 2}} ", style="red")
        t.append(fmt.BANG, style="bold red")
    elif rec and rec.status == RunStatus.NOT_APPLICABLE:
        t.append(f"{'n/a':>{width - 2}} ", style="grey50")
        t.append(fmt.DASH, style="grey50")
    elif not built:
        t.append(f"{shorten.end(fmt.short_reason(why), width).strip():>{width}}", style="grey50 italic")
    else:
        t.append(f"{'not run':>{width}}", style="grey50")
    if cols.iso and rec and rec.isolated:
        passed = rec.isolated.passed
        t.append(f"  {fmt.CHECK if passed else fmt.CROSS}", style="green" if passed else "red")
    return t


def header(family: str, compact: bool, shipped: bool) -> Text:
    """A family's line: its name, and over the figures' columns their names."""
    cols = NARROW if compact else WIDE
    t = Text(no_wrap=True, overflow="ellipsis", end="")
    t.append(family, style="bold")
    pad = 2 + cols.key + 1 + cols.start - len(family)
    # the padding a segment of its own: an SVG export (the README's picture) drops the spaces
    # that lead a styled run, which pulled "start" against the family's name
    t.append(" " * (max(pad, 6) - len("start")))
    t.append("start", style="dim")
    t.append(" " * (cols.rss - len("RSS") + 1))
    t.append("RSS", style="dim")
    t.append(" iso" if shipped and cols.iso else "", style="dim")
    return t


class FormList(OptionList):
    """Family headers are disabled options, so the cursor moves over forms only."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="form-down"),
        Binding("k", "cursor_up", "Up", show=False, id="form-up"),
    ]

    compact = False  # the narrow columns: set by the screen below WIDE_AT columns
    on_highlight: Callable[[str], None] | None = None  # called as the highlight moves onto a form
    _shown: tuple = ({}, {}, "", {})  # what populate() last drew: status, results, running, states

    def populate(
        self,
        status: dict[str, str],
        results: dict[str, RunRecord],
        running: str = "",
        states: dict[str, str] | None = None,
    ) -> None:
        """(Re)fill the list, keeping the highlighted form."""
        states = states or {}
        self._shown = (status, results, running, states)
        current = self.highlighted_key
        self.clear_options()
        options: list[Option] = []
        shipped = any(r.isolated for r in results.values())  # the bundle's isolated check, when made
        for family in registry.GROUPS:
            head = header(family, self.compact, shipped)
            options.append(Option(head, id=f"family:{family}", disabled=True))
            for f in registry.FORMS:
                if f.family == family:
                    options.append(
                        Option(
                            row(
                                f,
                                status.get(f.key, ""),
                                results.get(f.key),
                                running == f.key,
                                self.compact,
                                states.get(f.key, ""),
                            ),
                            id=f.key,
                        )
                    )
        self.add_options(options)
        self.select_key(current or registry.FORMS[0].key)

    # a move repaints the two options it concerns, not the whole list (see watch_highlighted)
    highlighted: reactive[int | None] = reactive(None, repaint=False)

    def watch_highlighted(self, old: int | None, highlighted: int | None) -> None:  # type: ignore[override]
        """Repaint the options the highlight left and reached, and tell `on_highlight` at once, in
        the same turn: what it draws comes in the same frame as the highlight (OptionHighlighted,
        a message, would come a frame later)."""
        super().watch_highlighted(highlighted)
        for index in {i for i in (old, highlighted) if i is not None}:
            self._repaint_option(index)
        key = self.highlighted_key
        if key is not None and self.on_highlight is not None:
            self.on_highlight(key)

    def _repaint_option(self, index: int) -> None:
        try:
            line, height = self._index_to_line[index], self._heights[index]
        except (KeyError, IndexError):
            self.refresh()
            return
        self.refresh(Region(0, line - self.scroll_offset.y, self.scrollable_content_region.width, height))

    def set_compact(self, compact: bool) -> None:
        if compact != self.compact:
            self.compact = compact
            self.populate(*self._shown)

    def refresh_form(
        self, key: str, why: str, rec: RunRecord | None, running: bool = False, state: str = ""
    ) -> None:
        self.replace_option_prompt(key, row(registry.get(key), why, rec, running, self.compact, state))

    @property
    def highlighted_key(self) -> str | None:
        if self.highlighted is None or not self.option_count:
            return None
        oid = self.get_option_at_index(self.highlighted).id
        return oid if oid and not oid.startswith("family:") else None

    def select_key(self, key: str) -> None:
        try:
            self.highlighted = self.get_option_index(key)
        except Exception:
            pass
