"""The main screen: header line (the model shown, and its build in flight), the forms on the
left, the highlighted form's detail on the right."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static

from deploytui.families import registry
from deploytui.spec import manifest
from deploytui.views.tui import fmt
from deploytui.views.tui.host import AppHost, host_of
from deploytui.views.tui.session import BUILDING, WAITING, describe_model, model_label
from deploytui.views.tui.widgets.form_list import WIDE_AT, FormList

if TYPE_CHECKING:
    from textual.timer import Timer


INSPECT_TABS = ("Artifact", "Code", "Graph", "Symbols")


TAB_KEYS = [(str(i), name.lower()) for i, name in enumerate((*INSPECT_TABS, "Run", "Diff"), 1)]
TABS = tuple(name for _, name in TAB_KEYS)
INSPECT_NAMES = tuple(t.lower() for t in INSPECT_TABS)
TITLE_MIN_LINES, TITLE_MAX_LINES = 3, 5  # app.tcss: #detail-title min-height, max-height
DETAIL_DEBOUNCE_S = 0.05  # a burst of highlight moves draws the visible tab once, when it rests


class MainScreen(Screen):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE_AT, "-wide")]
    BINDINGS = [
        Binding(
            key,
            f"show_tab('{name}')",
            name.title(),
            show=False,
            id=f"tab-{name}",
            tooltip=f"Show the {name.title()} tab — of the highlighted form",
        )
        for key, name in TAB_KEYS
    ]

    @property
    def host(self) -> AppHost:
        """The app, as the screens see it (they never import it)."""
        return host_of(self)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._stale: set[str] = set(TABS)  # tabs showing another form, or older facts, than they should
        # the widgets a highlight move touches, looked up once (a query walks the whole DOM: with
        # the inspector pages kept mounted that cost ~14 ms a move)
        self._tabs: Any = None  # the TabbedContent, once mounted
        self._views: dict[str, Any] = {}  # tab name -> its view, once mounted

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="build-line")
        yield Static(id="targets-line")
        yield Static(id="banner")
        with Horizontal(id="body"):
            yield FormList(id="forms")
            with Vertical(id="detail"):
                yield Static(id="detail-title")  # the tabs are mounted by mount_rest(), after ready
        yield Footer()

    def on_mount(self) -> None:
        self._forms = forms_list = self.query_one("#forms", FormList)
        self._detail = self.query_one("#detail", Vertical)
        self._detail_title = self.query_one("#detail-title", Static)
        forms_list.border_title = "Forms"
        forms_list.compact = self.query_one(Footer).compact = self.host.size.width < WIDE_AT
        self.refresh_all()  # fills the list and draws the detail of its highlighted form, once
        forms_list.on_highlight = self._highlighted  # from now on: the user's moves
        forms_list.focus()

    # ---- what the app calls -------------------------------------------------------------
    async def mount_rest(self) -> None:
        """Mount the detail tabs once the app is on screen (keeps time-to-ready short)."""
        if self._tabs is not None:
            return
        # imported here, not at start: these pull in TabbedContent, DataTable, Tree, ProgressBar (~30 ms)
        from textual.widgets import TabbedContent, TabPane

        from deploytui.views.tui.widgets.diff_view import DiffView
        from deploytui.views.tui.widgets.run_view import RunView
        from deploytui.views.tui.widgets.sections_view import SectionsView

        panes = [
            TabPane(tab, SectionsView(tab, id=f"sections-{tab.lower()}"), id=f"tab-{tab.lower()}")
            for tab in INSPECT_TABS
        ]
        panes += [
            TabPane("Run", RunView(id="run-view"), id="tab-run"),
            TabPane("Diff", DiffView(id="diff-view"), id="tab-diff"),
        ]
        tabs = TabbedContent(id="tabs")
        await self._detail.mount(tabs)
        for pane in panes:
            await tabs.add_pane(pane)
        tabs.active = "tab-artifact"
        self._tabs = tabs
        self._views = {name: pane.children[0] for name, pane in zip(TABS, panes, strict=True)}
        self.show_detail(self.current, inspect=False)

    @property
    def current(self) -> str:
        return self._forms.highlighted_key or self.host.session.current

    def refresh_all(self, inspect: bool = True) -> None:
        s = self.host.session
        self._header()
        banner = self.query_one("#banner", Static)
        if s.store.dropped:
            banner.update(Text("⚠ results file damaged: " + "; ".join(s.store.dropped), style="bold"))
            banner.display = True
        else:
            banner.display = False
        running = s.live.form if s.live else ""
        self._forms.populate(s.status, s.store.forms, running, self._states())
        self.show_detail(self.current, inspect=inspect)

    def _states(self) -> dict[str, str]:
        """Each form's row label beside the results: its state in the build of the model shown,
        or the stage its build failed at."""
        s, states = self.host.session, {}
        for f in registry.FORMS:
            state = s.form_state(f.key)
            if not state and s.status.get(f.key):
                _, stage, _, _ = manifest.way(f, s.manifest, s.model)
                state = f"{fmt.CROSS} {stage}" if stage else ""
            states[f.key] = state
        return states

    def refresh_form(self, key: str) -> None:
        s = self.host.session
        self._forms.refresh_form(
            key,
            s.status.get(key, ""),
            s.store.forms.get(key),
            bool(s.live and s.live.form == key),
            self._states()[key],
        )
        if key == self.current:
            self.show_detail(key, inspect=False)

    def show_live(self, key: str) -> None:
        if key == self.current:
            self._changed(("run",))

    def show_tab(self, name: str) -> None:
        if self._tabs is not None:  # mounted after the first frame (start-up)
            self._tabs.active = f"tab-{name}"

    def action_show_tab(self, name: str) -> None:
        self.show_tab(name)

    def _header(self) -> None:
        """deploytui — MODEL · class · params · inputs · torch VERSION; under it, while the
        model shown is being built, where that build stands."""
        s = self.host.session
        tools = s.manifest.tools
        t = Text("deploytui", style="bold")
        t.append(" — ")
        t.append(model_label(s.model), style="bold")
        if s.target:
            t.append(f" on {s.target}", style="bold magenta")
            if any(r.target is not None and r.target.emulated for r in s.store.forms.values()):
                t.append(" (emulated: qemu's timings, never ranked)", style="magenta")
        t.append(f" · {describe_model(s.info)}" if s.info else " · not built yet")
        t.append(f" · torch {tools.get('torch', '?')}" if "torch" in tools else "")
        self.query_one("#header", Static).update(t)
        built = len(s.runnable())
        self._forms.border_subtitle = f"{built}/{len(registry.FORMS)} built"
        line = self.query_one("#build-line", Static)
        progress = s.progress
        if progress is not None and not progress.done:
            failed = sum(1 for st in self._states().values() if st.startswith(fmt.CROSS))
            what = progress.describe(title=False)
            b = Text(f"⚙ building {model_label(s.model)}: {what}", style="yellow")
            b.append(f" · {built} forms built, {failed} failed · b: the log", style="dim")
            line.update(b)
            line.display = True
        else:
            line.display = False

    def show_fleet(self) -> None:
        """Where a run on every target (A) stands, a part per target, on one line (cut with …)."""
        fleet = self.host.session.fleet
        line = self.query_one("#targets-line", Static)
        line.display = bool(fleet)
        text = Text(" · ".join(p.line() for p in fleet.values()), no_wrap=True, overflow="ellipsis")
        line.update(text)

    def show_detail(self, key: str, inspect: bool = True, defer: bool = False) -> None:
        """The detail pane for `key`: its title and visible tab now, the hidden tabs when they
        are shown. A highlight move (`defer`) within DETAIL_DEBOUNCE_S of the one before is a
        burst (a held key): it draws the title only, and the visible tab once the highlight
        rests, so a burst draws the tab twice, not once per form it passes."""
        self._title(key)
        self._stale.update(TABS)
        burst = defer and self._timer is not None
        if defer:
            self._fill_inspect = False  # that result was for the form highlighted before
            if self._timer is not None:
                self._timer.stop()
            self._timer = self.set_timer(DETAIL_DEBOUNCE_S, self._rested)
        if inspect:
            self.host.load_sections(key)
        if not burst:
            self._draw_visible()

    def show_waiting(self, key: str, text: str) -> None:
        self._note = (key, text, False)
        self._changed(INSPECT_NAMES)

    def show_sections(self, key: str, sections: list, error: str = "") -> None:
        """An inspection's result: drawn in every inspector tab at once (it comes once per form)."""
        self._note = (key, error, True) if error else None
        if key != self.current:
            return
        self._fill_inspect = True
        self._changed(INSPECT_NAMES)

    # ---- drawing ------------------------------------------------------------------------
    _timer: Timer | None = None  # the debounce of highlight moves: the visible tab waits for it
    _fill_inspect = False  # an inspection's result came: draw it in the hidden inspector tabs too
    _note: tuple[str, str, bool] | None = None  # (form, message, is error) for the inspector tabs

    def _title(self, key: str) -> None:
        """What names the form: cheap, so it is drawn with the highlight move itself (in its
        frame when the title keeps its number of lines, which 3 of 5 allowed lines make usual)."""
        s = self.host.session
        form = registry.get(key)
        why = s.status.get(key, "")
        state = s.form_state(key)
        t = Text(f"{form.key}", style="bold")
        t.append(f" — {form.title}\n")
        ships = ", ".join(p.name for p in form.ship_paths(s.ws)) or "(nothing)"
        t.append("ships ", style="dim")
        t.append(ships)
        t.append("  runtime ", style="dim")
        t.append(registry.RUNTIME_TITLES.get(form.runtime, form.runtime))
        if state in (BUILDING, WAITING) and s.progress is not None:
            t.append("\n○ ", style="grey50")
            what = "building now" if state == BUILDING else "waiting for its build steps"
            t.append(f"{what} ({s.progress.describe()})", style="yellow")
        elif why:
            t.append("\n○ ", style="grey50")
            t.append(why, style="yellow")
            _, stage, log, _ = manifest.way(form, s.manifest, s.model)
            if stage:
                t.append(f"  (stage {stage} failed" + (f"; full log: {log})" if log else ")"), style="yellow")
        rec = s.store.forms.get(key)
        if rec and rec.error:
            mark = fmt.verdict_mark(rec)  # "–": the form does not apply, no failure
            t.append(f"\n{mark} last run: {rec.error}", style="grey50" if mark == fmt.DASH else "red")
        if form.note:
            t.append(f"\n{form.note}", style="italic dim")
        title = self._detail_title
        height = title.size.height
        title.update(t, layout=False)  # a layout pass would put the title a frame later
        width = title.content_region.width
        lines = title.get_content_height(title.size, self.size, width) if width else 0
        if width and max(TITLE_MIN_LINES, min(lines, TITLE_MAX_LINES)) != height:
            title.refresh(layout=True)  # it takes more or fewer lines than before

    def _rested(self) -> None:
        self._timer = None
        self._draw_visible()  # draws only what a move during the burst left stale

    def _changed(self, tabs) -> None:
        """`tabs` show older facts: the visible one is redrawn now, unless a highlight move is
        about to redraw it anyway."""
        self._stale.update(tabs)
        if self._timer is None:
            self._draw_visible()

    def _active_tab(self) -> str | None:
        if self._tabs is None:
            return None
        return (self._tabs.active or "").removeprefix("tab-") or None

    def _draw_visible(self) -> None:
        # the border too: setting it repaints the whole pane, so it goes with the tab's redraw
        detail = self._detail
        if str(detail.border_title) != self.current:
            detail.border_title = self.current
        tab = self._active_tab()
        if tab in self._stale:
            self._draw(tab)
        if self._fill_inspect:
            self._fill_inspect = False
            for name in INSPECT_NAMES:
                if name in self._stale:
                    self._draw(name)

    def _draw(self, tab: str) -> None:
        view = self._views.get(tab)
        if view is None:
            return
        self._stale.discard(tab)
        s = self.host.session
        key = self.current
        rec = s.store.forms.get(key)
        why = s.status.get(key, "")
        if tab == "run":
            view.show(key, rec, s.live, why, s.settings)
        elif tab == "diff":
            view.show(key, rec, s.ws, unavailable=why)
        else:
            if key in s.sections:
                view.show(key, s.sections[key])
            elif self._note and self._note[0] == key:
                view.show_message(self._note[1], error=self._note[2])
            else:
                view.show_message(f"Looking inside {key}…")

    # ---- events -------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        self.query_one("#forms", FormList).set_compact(event.size.width < WIDE_AT)
        self.query_one(Footer).compact = event.size.width < WIDE_AT

    def on_tabbed_content_tab_activated(self, event) -> None:
        """A tab comes into view: drawn now if it shows older facts (by name: TabbedContent is
        imported after the first frame)."""
        tab = (event.pane.id or "").removeprefix("tab-")
        if tab in self._stale:
            self._draw(tab)

    def _highlighted(self, key: str) -> None:
        """The form list's highlight moved onto `key` (called by the list itself, in that turn)."""
        self.host.session.current = key
        self.show_detail(key, defer=True)

    @on(OptionList.OptionSelected, "#forms")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.host.action_run()
