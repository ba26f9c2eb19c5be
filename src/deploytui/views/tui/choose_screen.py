"""The Choose screen (key o): the user's constraints on the left, `choose`'s answer on the right
(the qualifying forms ranked, every other form with the first constraint it breaks) and the
Pareto chart of start-up × ship size. Keyboard first: tab moves between the fields, the answer
follows every change; the first field filled sets the ranking (as the first flag does for
`deploytui choose`) unless "rank by" says otherwise.

The fields are made from `choose.RULES` (a value rule: a one-line input; a switch: a checkbox;
the runtimes: a selection list), so a new rule gets its field without a change here."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Footer, Input, Label, Select, SelectionList, Static

from deploytui.core import shorten, units
from deploytui.decisions import choose
from deploytui.decisions import facts as choose_facts
from deploytui.decisions import text as choose_text
from deploytui.families import registry
from deploytui.views.tui.host import AppHost, close, host_of
from deploytui.views.tui.widgets import form_list
from deploytui.views.tui.widgets.chart import PlotextChart

RUNTIME = "runtime"
FIRST = "first"  # rank by the figure of the first field filled
COLUMNS = ("#", "", "form", *(f.label for f in choose.SHOWN), "why not / front")
NARROW = ("#", "", "form", "start", "RSS", "ship", "iso", "diff", "why not")  # under WIDE_AT
WIDE_AT = 150  # terminal columns from which the fields sit beside the answer (its figures all in view)
FIELDS_W = 46  # the fields' column beside the answer (#choose-fields)
WHY_MIN = 24  # the why column's width below which the form keys are cut (to the form list's)
WHY_FLOOR = 12  # its least: a reason wraps onto more lines of its row, in view, never past the edge
FORM = 2  # the form's column (its key)
SHORT = {"startup_s": units.seconds, "peak_rss_bytes": units.short_size, "ship_bytes": units.short_size}


def field_id(key: str) -> str:
    return f"choose-{key}"


class ChooseScreen(Screen):
    DEFAULT_CSS = """
    #choose-box { height: 1fr; }
    #choose-fields { width: 46; height: 100%; border-right: solid $primary 50%; padding: 0 1; }
    #choose-fields .choose-row { height: 1; margin-bottom: 1; }
    #choose-fields .choose-row Label { width: 17; }
    #choose-fields .choose-row Input {
        width: 1fr; height: 1; border: none; padding: 0 1; background: $boost;
    }
    #choose-fields .choose-row Input:focus { background: $primary 40%; }
    #choose-fields .choose-row Input.-invalid { background: $error 40%; }
    #choose-fields Checkbox { border: none; padding: 0; height: 1; margin-bottom: 1; }
    #choose-fields SelectionList { height: auto; max-height: 9; border: none; padding: 0; margin-bottom: 1; }
    #choose-fields Select { margin-bottom: 1; }
    #choose-fields .choose-hint { color: $text-muted; height: auto; }
    #choose-answer { width: 1fr; padding: 0 1; }
    ChooseScreen.-narrow #choose-box { layout: vertical; }
    ChooseScreen.-narrow #choose-fields {
        width: 100%; height: 35%; border-right: none; border-bottom: solid $primary 50%;
    }
    ChooseScreen.-narrow #choose-answer { height: 1fr; }
    ChooseScreen.-narrow #choose-chart { height: 14; }
    #choose-headline { height: auto; }
    #choose-table { height: 1fr; min-height: 12; }
    #choose-detail { height: auto; max-height: 6; border-top: solid $primary 30%; }
    #choose-chart { height: 18; }
    #choose-legend { height: auto; color: $text-muted; }
    """
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE_AT, "-wide")]
    TYPING = True  # the app's one-letter keys are off here: letters go into the fields
    BINDINGS = [
        Binding("escape", "close", "Back", id="choose-close"),
        Binding("ctrl+l", "clear", "Clear constraints", id="choose-clear"),
    ]

    @property
    def host(self) -> AppHost:
        """The app, as the screens see it (they never import it)."""
        return host_of(self)

    def __init__(self) -> None:
        super().__init__()
        self._order: list[str] = []  # rule keys in the order their fields were filled
        self._facts: list[choose.FormFacts] = []
        self.answer: choose.Answer | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="choose-box"):
            with VerticalScroll(id="choose-fields"):
                yield Static("Constraints (tab moves, the answer follows)", classes="choose-hint")
                for rule in choose.RULES:
                    if rule.key == RUNTIME:
                        yield Label("runtimes allowed")
                        yield SelectionList[str](
                            *((key, key, True) for key in registry.RUNTIME_TITLES), id=field_id(rule.key)
                        )
                    elif not rule.example:
                        box = Checkbox(rule.says(None), id=field_id(rule.key))
                        box.tooltip = rule.help
                        yield box
                    else:
                        with Horizontal(classes="choose-row"):
                            yield Label(rule.key.replace("-", " "))
                            yield Input(placeholder=f"e.g. {rule.example}", id=field_id(rule.key))
                yield Label("rank by")
                options = [("the first figure constrained", FIRST), *((k, k) for k in choose.RANKS)]
                yield Select(options, value=FIRST, allow_blank=False, id="choose-rank")
                yield Static("", id="choose-error", classes="error")
            with VerticalScroll(id="choose-answer"):
                yield Static("", id="choose-headline")
                yield DataTable(id="choose-table", cursor_type="row", zebra_stripes=True)
                yield Static("", id="choose-detail")
                yield PlotextChart("", id="choose-chart")
                yield Static("", id="choose-legend")
        yield Footer()

    def on_mount(self) -> None:
        self.read_facts()
        self.query(Input).first().focus()

    def on_screen_resume(self) -> None:
        self.read_facts()  # runs and ship checks may have been stored meanwhile

    def read_facts(self) -> None:
        """The model's stored figures (the session's results; choose_facts reads the manifests and
        ship.json), then the answer."""
        session = self.host.session
        self._facts, _dropped = choose_facts.read(
            session.ws, session.store, session.target
        )  # the app said so
        self.refresh_answer()

    # ---- the fields -----------------------------------------------------------------------
    def given(self) -> tuple[list[tuple[str, str]], list[str]]:
        """The constraints the fields hold, in the order they were filled, and each field's error."""
        pairs: dict[str, str] = {}
        for rule in choose.RULES:
            text = self._text(rule)
            if text is not None:
                pairs[rule.key] = text
        self._order = [k for k in self._order if k in pairs] + [k for k in pairs if k not in self._order]
        errors = []
        for rule in choose.RULES:
            try:
                if rule.key in pairs:
                    choose.request([(rule.key, pairs[rule.key])])
                self._mark(rule.key, "")
            except ValueError as e:
                errors.append(str(e))
                self._mark(rule.key, str(e))
        return [(k, pairs[k]) for k in self._order], errors

    def _text(self, rule: choose.Rule) -> str | None:
        """The field's text when it states a constraint, else None."""
        if rule.key == RUNTIME:
            picked = self.query_one(f"#{field_id(rule.key)}", SelectionList).selected
            return None if len(picked) == len(registry.RUNTIME_TITLES) else ",".join(picked)
        if not rule.example:
            return "" if self.query_one(f"#{field_id(rule.key)}", Checkbox).value else None
        value = self.query_one(f"#{field_id(rule.key)}", Input).value.strip()
        return value or None

    def _mark(self, key: str, error: str) -> None:
        for widget in self.query(f"#{field_id(key)}"):
            widget.set_class(bool(error), "-invalid")

    @on(Input.Changed)
    @on(Checkbox.Changed)
    @on(SelectionList.SelectedChanged)
    @on(Select.Changed)
    def _changed(self) -> None:
        self.refresh_answer()

    def action_clear(self) -> None:
        with self.prevent(Input.Changed, Checkbox.Changed, SelectionList.SelectedChanged, Select.Changed):
            for i in self.query(Input):
                i.value = ""
            for c in self.query(Checkbox):
                c.value = False
            self.query_one(SelectionList).select_all()
            self.query_one("#choose-rank", Select).value = FIRST
        self._order = []
        self.refresh_answer()

    # ---- the answer -----------------------------------------------------------------------
    def refresh_answer(self) -> None:
        given, errors = self.given()
        rank = self.query_one("#choose-rank", Select).value
        error = self.query_one("#choose-error", Static)
        error.update(Text("\n".join(errors)))  # what was typed, as typed
        if errors:
            return  # the last answer stays until the fields can be read again
        req = choose.request(given, "" if rank == FIRST else str(rank))
        self.answer = answer = choose.choose(self._facts, req, self.host.session.model.text)
        self.query_one("#choose-headline", Static).update(Text(answer.headline(), style="bold"))
        table = self.query_one("#choose-table", DataTable)
        narrow = self.narrow
        table.clear(columns=True)
        heads = NARROW if narrow else COLUMNS
        for head in heads[:-1]:
            table.add_column(head)
        letters = choose_text.markers(answer)
        rows = [
            self._cells(v, letters, narrow)
            for v in answer.verdicts  # the chosen, best first, then the others
        ]
        table_rows: list[list[str | Text]] = [list(heads), *rows]
        widths = [max(len(str(r[i])) for r in table_rows) for i in range(len(heads) - 1)]
        # the screen's width less the fields beside it, the answer's padding, its scrollbar and
        # the table's (both there whenever the answer is taller than the screen)
        room = self.host.size.width - (0 if narrow else FIELDS_W) - 2 - 2 - 2
        short_by = WHY_MIN - (room - sum(w + 2 for w in widths) - 2)
        key_w = max(widths[FORM] - short_by, form_list.NARROW.key)
        if narrow and key_w < widths[FORM]:  # the keys cut with …, as the form list's at this width
            for r in rows:
                key = r[FORM]
                assert isinstance(key, Text)
                r[FORM] = Text(shorten.end(key.plain, key_w), style=key.style)
            widths[FORM] = key_w
        why_w = max(room - sum(w + 2 for w in widths) - 2, WHY_FLOOR)  # what is left to the reasons
        table.add_column(heads[-1], width=why_w)
        for v, cells in zip(answer.verdicts, rows, strict=True):
            if v.qualifies:
                last = Text(choose_text.MARK_FRONT if v.front else "", style="green")
            else:
                style = "red" if v.first and v.first.outcome == choose.BROKEN else "yellow"
                last = Text(" ".join(v.why.split()), style=style)  # whole: the row wraps
            height = max(1, len(last.wrap(self.app.console, why_w)))  # its lines, wrapped at words
            table.add_row(*cells, last, key=v.form.key, height=height)
        self.query_one("#choose-chart", PlotextChart).plot(
            choose_text.chart(answer),
            empty="no form has both a stored start-up and a ship size yet: build, then run (r / a)",
            key=tuple(answer.points()),
        )
        self.query_one("#choose-legend", Static).update(choose_text.legend(answer))
        self.show_detail()

    @on(DataTable.RowHighlighted, "#choose-table")
    def show_detail(self) -> None:
        """Every check of the highlighted form, whole: ✓ met, ✗ broken, ? not measured yet."""
        table = self.query_one("#choose-table", DataTable)
        answer = self.answer
        if answer is None or not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        v = next((v for v in answer.verdicts if v.form.key == key), None)
        if v is None:
            return
        mark = {choose.MET: ("✓", "green"), choose.BROKEN: ("✗", "red"), choose.UNKNOWN: ("?", "yellow")}
        text = Text(f"{v.form.key} ({v.form.title}): ", style="bold")
        for i, c in enumerate(v.checks):
            glyph, style = mark[c.outcome]
            text.append(("" if i == 0 else "  ") + f"{glyph} {c.rule}", style=style)
            text.append(f" {c.text}" if c.outcome != choose.MET else f" ({c.text})")
        self.query_one("#choose-detail", Static).update(text)

    @property
    def narrow(self) -> bool:
        """Under WIDE_AT columns: the fields above the answer, its figures in short units."""
        return self.host.size.width < WIDE_AT

    def _cells(self, v: choose.Verdict, letters: dict[str, str], narrow: bool) -> list[str | Text]:
        style = "bold" if v.qualifies else "grey62"
        req = self.answer.request if self.answer else None
        figures = []
        for f in choose.SHOWN:
            short = SHORT.get(f.key) if narrow else None
            got = f.read(v.form, req.limit_of(f)) if short is not None and req is not None else None
            if got is not None and short is not None and got.value is not None:
                figures.append(short(got.value))
            else:
                figures.append(choose.figure_text(f, v.form, req, True))
        return [str(v.rank or ""), letters.get(v.form.key, ""), Text(v.form.key, style=style), *figures]

    def on_resize(self) -> None:
        if self.answer is not None and self.is_mounted:
            self.refresh_answer()  # the why column takes the room there is

    def action_close(self) -> None:
        close(self)
