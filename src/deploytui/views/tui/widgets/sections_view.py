"""One inspector tab (Artifact, Code, Graph, Symbols): the form's sections, or why there are none.

Sections come from `deploytui.views.form_view.sections(form, manifest)`. A section whose
`error` is set shows that message in place; the other sections still show.
"""

from __future__ import annotations

import functools
from collections import OrderedDict

from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Label, Static, Tree

from deploytui.core import shorten

WHY_EMPTY = {
    "Artifact": "nothing of it exists yet to look inside (build it with b)",
    "Code": "its artifacts hold no source to read (generated a1.rs, torch.export graph code, "
    "or an AOTInductor wrapper)",
    "Graph": "it ships no graph to read (a captured burn GraphIr or an ONNX model)",
    "Symbols": "it is not a native program of ours (no executable to list undefined symbols "
    "and linked libraries of)",
}


class SectionsView(VerticalScroll):
    """One tab's sections of a form, or a message. The widgets of the last KEEP forms stay
    mounted, hidden: going back to a form shows them again instead of building them anew."""

    DEFAULT_CSS = """
    SectionsView { height: 1fr; }
    SectionsView > .page { height: auto; }
    .section-title { margin-top: 1; color: $accent; width: 1fr; }
    TextArea.code { height: 24; }
    """
    KEEP = 8

    def __init__(self, tab: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tab = tab
        self.shown_for: str | None = None
        self._pages: OrderedDict[str, tuple[list, Vertical]] = OrderedDict()  # form → (sections, page)
        self._note: Static | None = None
        self._latest: object = None  # the page to show (or a message): the last asked for wins

    def show_message(self, text: str, *, error: bool = False) -> None:
        self.shown_for = None
        self._show(("message", text, error))

    def show(self, form_key: str, sections: list) -> None:
        self.shown_for = form_key
        have = self._pages.get(form_key)
        if have is None or have[0] is not sections:
            if have is not None:
                _drop(have[1])
            self._pages[form_key] = (sections, Vertical(*self._widgets(form_key, sections), classes="page"))
        self._pages.move_to_end(form_key)
        while len(self._pages) > self.KEEP:
            _drop(self._pages.popitem(last=False)[1][1])
        self._show(self._pages[form_key][1])

    def _widgets(self, form_key: str, sections: list) -> list:
        mine = [s for s in sections if getattr(s, "tab", None) == self.tab]
        if not mine:
            why = Text(f"{self.tab} does not apply to {form_key}: {WHY_EMPTY[self.tab]}.")
            return [Static(why, classes="note")]
        widgets = []
        for s in mine:
            widgets.append(Label(Text(s.title, style="bold"), classes="section-title"))
            widgets.append(_section_widget(s))
        return widgets

    def _show(self, what) -> None:
        """Show a page or a message. A page already mounted is shown at once, in the caller's
        turn (a highlight move then lays out and paints once); one to mount goes through this
        widget's own queue, so swaps never overlap."""
        self._latest = what
        if isinstance(what, Widget) and what.parent is self:
            self._display(what)
            return
        self.call_later(self._swap, what)

    def _display(self, page: Widget) -> None:
        for child in self.children:
            child.display = child is page
        self.scroll_home(animate=False)

    async def _swap(self, what) -> None:
        if what is not self._latest:  # a newer swap is queued behind this one
            return
        if isinstance(what, tuple):  # a message: one Static, reused
            _, text, error = what
            if self._note is None:
                self._note = Static()
                await self.mount(self._note)
            self._note.update(Text(text))
            self._note.set_class(error, "error")
            self._note.set_class(not error, "note")
            page: Widget = self._note
        else:
            assert isinstance(what, Widget)
            page = what
            if page.parent is None:
                await self.mount(page)
        self._display(page)


def _drop(page) -> None:
    if page.parent is not None:
        page.remove()


def _section_widget(s):
    if getattr(s, "error", ""):
        return Static(Text(f"⚠ {s.error}"), classes="error")
    kind = getattr(s, "kind", "text")
    try:
        if kind == "code":
            return _code_area(s.text or "", s.language)
        if kind == "table":
            return _table(s)
        if kind == "tree":
            return _tree(s)
        return Static(Text(s.text or ""), classes="section-text")
    except Exception as e:  # a view model we cannot draw is a message, not a crash
        return Static(Text(f"⚠ could not show {s.title}: {type(e).__name__}: {e}"), classes="error")


# A cell longer than this is prose (a reason, a command to run), not a figure or a name
PROSE = 40
# the least width a prose column is given before the table turns into records
PROSE_MIN = 16
# the most rows a table is laid out for the pane's width; a longer one is a DataTable that
# scrolls (its max-height below)
MAX_ROWS = 30


def natural_widths(columns: list[str], rows: list[list[str]]) -> list[int]:
    """Each column's width with nothing cut: its longest cell or its heading."""
    return [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]


class FittedTable:
    """A table of a few rows, laid out at the width it is drawn at: a table whose short columns
    keep their width and whose prose (a cell over PROSE) wraps, a long word folded; or, where the
    short columns alone leave no room (the prose under PROSE_MIN), one record per row
    (`column: value`, wrapped). Either way every cell is read whole and nothing runs past the
    pane's edge: the 40-column pane at 80×24 shows What ships, ldd's libraries or an IR's layers
    as records, a wide one as a table."""

    def __init__(self, columns: list[str], rows: list[list[str]]) -> None:
        self.columns, self.rows = columns, rows
        self.widths = natural_widths(columns, self.rows)

    def fits(self, width: int) -> bool:
        short = [w for w in self.widths if w <= PROSE]
        prose = len(self.widths) - len(short)
        return sum(short) + prose * PROSE_MIN + 2 * (len(self.widths) - 1) <= width

    def __rich_console__(self, console, options):
        if self.fits(options.max_width):
            from rich import box  # here, not at import: the app's start-up draws no section
            from rich.table import Table as RichTable

            grid = RichTable(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, expand=False)
            for c, w in zip(self.columns, self.widths, strict=True):  # (min_width crops the prose)
                grid.add_column(c, overflow="fold", no_wrap=w <= PROSE)
            for r in self.rows:
                grid.add_row(*[Text(c) for c in r])
            yield grid
            return
        for n, r in enumerate(self.rows):
            if n:
                yield Text("")
            for c, v in zip(self.columns, r, strict=True):
                if v:
                    line = Text(f"{c}: ", style="bold")
                    line.append(v)
                    line.overflow = "fold"
                    yield line


def _table(s) -> Widget:
    """A table section: up to MAX_ROWS rows, a FittedTable in a Static (laid out for the pane's
    width); more, a FittedDataTable (one line a row, laid out for its width as it changes)."""
    columns = [str(c) for c in s.columns]
    rows = [[*(str(c) for c in r), *[""] * len(columns)][: len(columns)] for r in s.rows]  # as many cells
    if len(rows) <= MAX_ROWS:
        return Static(FittedTable(columns, rows), classes="section-fitted")
    return FittedDataTable(columns, rows)


# the least a long table's column is cut to: CUT_MIN characters and CUT_KEEP of its text;
# below that the table stacks its rows
CUT_MIN, CUT_KEEP = 16, 0.75


def fit_widths(natural: list[int], room: int) -> list[int] | None:
    """Column widths that fit `room` (the columns' padding left out): each column its natural
    width, except the widest, all cut to the one width that makes the sum fit; None where that
    would leave a column under CUT_MIN or under CUT_KEEP of its text (a name cut to a few
    letters, or `features.…, 3, 7, 7]` for every layer, says nothing)."""
    if sum(natural) <= room:
        return list(natural)
    least = max(CUT_MIN, round(CUT_KEEP * max(natural)))
    cap = max(natural)
    while cap >= least and sum(min(n, cap) for n in natural) > room:
        cap -= 1
    return [min(n, cap) for n in natural] if cap >= least else None


class FittedDataTable(DataTable):
    """A long table (over MAX_ROWS rows): a DataTable that scrolls down, laid out again when its
    width changes, its short columns (sizes, shapes, counts) always in view. Where its columns
    together are wider than it, the widest are cut in the middle (`shorten.middle`) to the one
    width that fits; where that would leave too little of them (`fit_widths`), each row is
    stacked: its first cell (the name) on one line, the others below it (the 40-column pane at
    80×24).
    The whole text is in `deploytui inspect`. Cells are Text, never markup: a name such as
    `to_string[abi:cxx11]` or `[/x]` shows as it is."""

    DEFAULT_CSS = "FittedDataTable { height: auto; max-height: 30; }"

    def __init__(self, columns: list[str], rows: list[list[str]]) -> None:
        super().__init__(show_cursor=False, zebra_stripes=True, classes="section-table")
        self.texts = [columns, *rows]
        self.natural = natural_widths(columns, rows)
        self.layout_key: object = None
        self._lay_out(self.natural)

    def _lay_out(self, widths: list[int]) -> None:
        self.layout_key = widths
        self.clear(columns=True)
        self.header_height = 1
        head, *rows = self.texts
        for c, w in zip(head, widths, strict=True):
            self.add_column(Text(shorten.middle(c, w), style="bold"), width=w)
        self.add_rows([[Text(shorten.middle(v, w)) for v, w in zip(r, widths, strict=True)] for r in rows])

    def _stack(self, width: int) -> None:
        """One column, two lines a row: the name, then the other cells aligned below it."""
        self.layout_key = ("stacked", width)
        self.clear(columns=True)
        self.header_height = 2
        rest = self.natural[1:]

        def two_lines(r: list[str], style: str) -> Text:
            figures = "  ".join(v.ljust(w) for v, w in zip(r[1:], rest, strict=True)).rstrip()
            if len(figures) > width:  # aligned they do not fit: whole, one after the other
                figures = "  ".join(v for v in r[1:] if v)
            text = Text(shorten.middle(r[0], width), style=style)
            text.append("\n" + shorten.middle(figures, width), style=style or "dim")
            return text

        head, *rows = self.texts
        self.add_column(two_lines(head, "bold"), width=width)
        for r in rows:
            self.add_row(two_lines(r, ""), height=2)

    def on_resize(self, event) -> None:
        # the room left by the cells' padding and the vertical scrollbar (always there: the
        # rows are more than max-height)
        inner = event.size.width - self.styles.scrollbar_size_vertical
        widths = fit_widths(self.natural, inner - 2 * self.cell_padding * len(self.natural))
        if widths is None:
            stacked = max(inner - 2 * self.cell_padding, CUT_MIN)
            if self.layout_key != ("stacked", stacked):
                self._stack(stacked)
        elif widths != self.layout_key:
            self._lay_out(widths)


def _code_area(text: str, language: str | None):
    """Read-only, highlighted where Textual (or our C++ grammar) knows the language, else plain."""
    from textual.widgets import TextArea

    area = TextArea.code_editor(text, read_only=True, soft_wrap=False, classes="code")
    if language == "cpp" and (cpp := _cpp_grammar()):
        area.register_language("cpp", *cpp)
    if language in area.available_languages:
        area.language = language
    return area


@functools.cache
def _cpp_grammar():
    """tree-sitter-cpp with C's highlight rules plus its own (its query alone only adds C++'s
    extras): the AOTInductor wrapper and kernels are C++. None when the grammar is missing."""
    try:
        import importlib.resources

        import tree_sitter_c
        import tree_sitter_cpp
        from tree_sitter import Language
    except ImportError:
        return None
    query = "\n".join(
        importlib.resources.files(m).joinpath("queries/highlights.scm").read_text()
        for m in (tree_sitter_c, tree_sitter_cpp)
    )
    return Language(tree_sitter_cpp.language()), query


def _tree(s) -> Tree:
    tree: Tree[str] = Tree(Text(s.title), classes="section-tree")  # names as they are, never markup
    tree.show_root = False
    tree.root.expand()
    nodes = {"": tree.root}
    for r in s.rows:
        member, size = ([*list(r), "", ""])[:2]
        parts = str(member).strip("/").split("/")
        for depth in range(1, len(parts)):
            key = "/".join(parts[:depth])
            if key not in nodes:
                folder = Text(parts[depth - 1] + "/")
                nodes[key] = nodes["/".join(parts[: depth - 1])].add(folder, expand=True)
        parent = nodes["/".join(parts[:-1])]
        label = Text(parts[-1])
        label.append(f"  {size}", style="dim")
        parent.add_leaf(label)
    n = len(s.rows)
    tree.styles.height = min(n + len(nodes), 30)
    return tree
