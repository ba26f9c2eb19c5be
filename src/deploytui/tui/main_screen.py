"""The main screen: header line, the forms on the left, the highlighted form's detail on the right."""

from __future__ import annotations

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static

from deploytui import forms
from deploytui.tui import fmt
from deploytui.tui.widgets.form_list import WIDE_AT, FormList

INSPECT_TABS = ("Artifact", "Code", "Graph", "Symbols")


TAB_KEYS = [(str(i), name.lower()) for i, name in enumerate((*INSPECT_TABS, "Run", "Diff"), 1)]


class MainScreen(Screen):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE_AT, "-wide")]
    BINDINGS = [
        Binding(key, f"show_tab('{name}')", name.title(), show=False, id=f"tab-{name}")
        for key, name in TAB_KEYS
    ]

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="banner")
        with Horizontal(id="body"):
            yield FormList(id="forms")
            with Vertical(id="detail"):
                yield Static(id="detail-title")  # the tabs are mounted by mount_rest(), after ready
        yield Footer()

    def on_mount(self) -> None:
        forms_list = self.query_one("#forms", FormList)
        forms_list.border_title = "Forms"
        forms_list.compact = self.query_one(Footer).compact = self.app.size.width < WIDE_AT
        self.refresh_all()
        forms_list.focus()

    # ---- what the app calls -------------------------------------------------------------
    async def mount_rest(self) -> None:
        """Mount the Run and Diff views once the app is on screen (keeps time-to-ready short)."""
        if self.query("#tabs"):
            return
        # imported here, not at start: these pull in TabbedContent, DataTable, Tree, ProgressBar (~30 ms)
        from textual.widgets import TabbedContent, TabPane

        from deploytui.tui.widgets.diff_view import DiffView
        from deploytui.tui.widgets.run_view import RunView
        from deploytui.tui.widgets.sections_view import SectionsView

        panes = [
            TabPane(tab, SectionsView(tab, id=f"sections-{tab.lower()}"), id=f"tab-{tab.lower()}")
            for tab in INSPECT_TABS
        ]
        panes += [
            TabPane("Run", RunView(id="run-view"), id="tab-run"),
            TabPane("Diff", DiffView(id="diff-view"), id="tab-diff"),
        ]
        tabs = TabbedContent(id="tabs")
        await self.query_one("#detail", Vertical).mount(tabs)
        for pane in panes:
            await tabs.add_pane(pane)
        tabs.active = "tab-artifact"
        self.show_detail(self.current, inspect=False)

    @property
    def current(self) -> str:
        return self.query_one("#forms", FormList).highlighted_key or forms.FORMS[0].key

    def refresh_all(self) -> None:
        app = self.app
        self._header()
        banner = self.query_one("#banner", Static)
        if app.store.dropped:
            banner.update(Text("⚠ results file damaged: " + "; ".join(app.store.dropped), style="bold"))
            banner.display = True
        else:
            banner.display = False
        running = app.live.form if app.live else ""
        self.query_one("#forms", FormList).populate(app.status, app.store.forms, running)
        self.show_detail(self.current)

    def refresh_form(self, key: str) -> None:
        app = self.app
        self.query_one("#forms", FormList).refresh_form(
            key, app.status.get(key, ""), app.store.forms.get(key), bool(app.live and app.live.form == key)
        )
        if key == self.current:
            self.show_detail(key, inspect=False)

    def show_live(self, key: str) -> None:
        if key == self.current:
            self._run_view(key)

    def show_tab(self, name: str) -> None:
        for tabs in self.query("#tabs"):
            tabs.active = f"tab-{name}"

    def action_show_tab(self, name: str) -> None:
        self.show_tab(name)

    def _header(self) -> None:
        app = self.app
        tools = app.manifest.get("tools", {})
        built = sum(1 for f in forms.FORMS if not app.status.get(f.key))
        t = Text("deploytui", style="bold")
        t.append(" — A1 MLP 4→8→3")
        t.append(f" · torch {tools.get('torch', '?')}")
        if tools.get("burn"):
            t.append(f" · burn {tools['burn']}")
        self.query_one("#header", Static).update(t)
        self.query_one("#forms", FormList).border_subtitle = f"{built}/{len(forms.FORMS)} built"

    def show_detail(self, key: str, inspect: bool = True) -> None:
        app = self.app
        form = forms.get(key)
        why = app.status.get(key, "")
        title = self.query_one("#detail-title", Static)
        t = Text(f"{form.key}", style="bold")
        t.append(f" — {form.title}\n")
        ships = ", ".join(p.name for p in form.ship_paths()) or "(nothing)"
        t.append("ships ", style="dim")
        t.append(ships)
        t.append("  runtime ", style="dim")
        t.append(forms.RUNTIME_TITLES.get(form.runtime, form.runtime))
        if why:
            t.append("\n○ ", style="grey50")
            t.append(why, style="yellow")
        rec = app.store.forms.get(key)
        if rec and rec.error:
            t.append(f"\n{fmt.verdict_mark(rec)} last run: {rec.error}", style="red")
        if form.note:
            t.append(f"\n{form.note}", style="italic dim")
        title.update(t)
        self.query_one("#detail", Vertical).border_title = form.key
        self._run_view(key)
        self._diff_view(key)
        if inspect:
            app.load_sections(key)

    def show_waiting(self, key: str, text: str) -> None:
        for view in self.query("SectionsView"):
            view.show_message(text)

    def show_sections(self, key: str, sections: list, error: str = "") -> None:
        if key != self.current:
            return
        for view in self.query("SectionsView"):
            if error:
                view.show_message(error, error=True)
            else:
                view.show(key, sections)

    def _run_view(self, key: str) -> None:
        app = self.app
        for view in self.query("#run-view"):
            view.show(key, app.store.forms.get(key), app.live, app.status.get(key, ""))

    def _diff_view(self, key: str) -> None:
        app = self.app
        for view in self.query("#diff-view"):
            ref, err = app.reference()
            view.show(
                key,
                app.store.forms.get(key),
                ref,
                err,
                tolerance=forms.get(key).tolerance,
                unavailable=app.status.get(key, ""),
            )

    # ---- events -------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        self.query_one("#forms", FormList).set_compact(event.size.width < WIDE_AT)
        self.query_one(Footer).compact = event.size.width < WIDE_AT

    @on(OptionList.OptionHighlighted, "#forms")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_id and not event.option_id.startswith("family:"):
            self.show_detail(event.option_id)

    @on(OptionList.OptionSelected, "#forms")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.app.action_run()
