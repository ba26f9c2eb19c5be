"""One inspector tab (Artifact, Code, Graph, Symbols): the form's sections, or why there are none.

Sections come from `deploytui.inspectors.form_view.sections(form, manifest)`. A section whose
`error` is set shows that message in place; the other sections still show.
"""

from __future__ import annotations

import functools

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Label, Static, Tree

WHY_EMPTY = {
    "Artifact": "nothing of it exists yet to look inside (build it with b)",
    "Code": "its artifacts hold no source to read (generated a1.rs, torch.export graph code, "
    "or an AOTInductor wrapper)",
    "Graph": "it ships no graph to read (a captured burn GraphIr or an ONNX model)",
    "Symbols": "it is not a native program of ours (no executable to list undefined symbols "
    "and linked libraries of)",
}


class SectionsView(VerticalScroll):
    """Holds the widgets of one tab's sections; `show` replaces them."""

    DEFAULT_CSS = """
    SectionsView { height: 1fr; }
    .section-title { margin-top: 1; color: $accent; }
    TextArea.code { height: 24; }
    DataTable.section-table { height: auto; max-height: 30; }
    """

    def __init__(self, tab: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tab = tab
        self.shown_for: str | None = None
        self._shown: tuple = ()  # what is on show: swapping in the same again is skipped
        self._latest: list = []

    def show_message(self, text: str, *, error: bool = False) -> None:
        self.shown_for = None
        if self._shown == ("message", text, error):
            return
        self._shown = ("message", text, error)
        self._replace([Static(Text(text), classes="error" if error else "note")])

    def show(self, form_key: str, sections: list) -> None:
        self.shown_for = form_key
        if self._shown[:2] == ("sections", form_key) and self._shown[2] is sections:
            return
        self._shown = ("sections", form_key, sections)
        mine = [s for s in sections if getattr(s, "tab", None) == self.tab]
        if not mine:
            self._replace(
                [
                    Static(
                        Text(f"{self.tab} does not apply to {form_key}: {WHY_EMPTY[self.tab]}."),
                        classes="note",
                    )
                ]
            )
            return
        widgets = []
        for s in mine:
            widgets.append(Label(Text(s.title, style="bold"), classes="section-title"))
            widgets.append(_section_widget(s))
        self._replace(widgets)

    def _replace(self, widgets: list) -> None:
        """Swap the content in this widget's own queue, so swaps never overlap."""
        self._latest = widgets
        self.call_later(self._swap, widgets)

    async def _swap(self, widgets: list) -> None:
        if widgets is not self._latest:  # a newer swap is queued behind this one
            return
        await self.remove_children()
        await self.mount_all(widgets)
        self.scroll_home(animate=False)


def _section_widget(s):
    if getattr(s, "error", ""):
        return Static(Text(f"⚠ {s.error}"), classes="error")
    kind = getattr(s, "kind", "text")
    try:
        if kind == "code":
            return _code_area(s.text or "", s.language)
        if kind == "table":
            table = DataTable(show_cursor=False, zebra_stripes=True, classes="section-table")
            table.add_columns(*[str(c) for c in s.columns])
            for r in s.rows:
                table.add_row(*[str(c) for c in r])
            return table
        if kind == "tree":
            return _tree(s)
        return Static(Text(s.text or ""), classes="section-text")
    except Exception as e:  # a view model we cannot draw is a message, not a crash
        return Static(Text(f"⚠ could not show {s.title}: {type(e).__name__}: {e}"), classes="error")


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
    tree: Tree[str] = Tree(s.title, classes="section-tree")
    tree.show_root = False
    tree.root.expand()
    nodes = {"": tree.root}
    for r in s.rows:
        member, size = ([*list(r), "", ""])[:2]
        parts = str(member).strip("/").split("/")
        for depth in range(1, len(parts)):
            key = "/".join(parts[:depth])
            if key not in nodes:
                nodes[key] = nodes["/".join(parts[: depth - 1])].add(parts[depth - 1] + "/", expand=True)
        parent = nodes["/".join(parts[:-1])]
        label = Text(parts[-1])
        label.append(f"  {size}", style="dim")
        parent.add_leaf(label)
    n = len(s.rows)
    tree.styles.height = min(n + len(nodes), 30)
    return tree
