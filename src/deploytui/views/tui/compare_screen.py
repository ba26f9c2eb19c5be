"""The compare screen (key c): every form side by side, sortable, with two bar charts."""

from __future__ import annotations

import math
import platform

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from deploytui.core import shorten, units
from deploytui.core.record import RunRecord
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.scenarios.accuracy import score_text, variants
from deploytui.scenarios.isolated import arch_state
from deploytui.scenarios.isolated.arch_state import ArchState
from deploytui.ship import store as ship_store
from deploytui.ship.store import ShipCheck
from deploytui.spec import forms
from deploytui.spec.manifest import Manifest, runtime_facts
from deploytui.views.tui import fmt
from deploytui.views.tui.host import AppHost, close, host_of
from deploytui.views.tui.widgets.chart import PlotextChart, bars

COLUMNS = [  # the figures the screen is for first, so 80 columns show them; the words last
    ("form", "Form"),
    ("start_med", "Start"),
    ("rss", "RSS"),
    ("size", "Ship"),
    ("diff", "max|diff|"),
    ("verdict", "Verdict"),
    ("start_min", "Start min"),
    ("runtime_size", "Runtime size"),
    ("isolated", "Isolated"),
    ("aarch64", "aarch64 bundle"),
    ("accuracy", "Accuracy (variants)"),
    ("task", "Top-1 on your data: eager, drop [CI]"),
    ("vs_parent", "÷ fp32 parent: ship, start, steady"),
    ("runtime", "Runtime"),
    ("ships", "What ships"),
]
# beside the figures shown, another place's (key v: this machine when a target is shown, or a
# target the model was measured on), and shown ÷ that; p99 of the runs' timed forwards
VERSUS = (("start", "Start"), ("rss", "RSS"), ("p99", "p99"))
HERE = "here"  # the versus place that is this machine


def versus_columns(place: str) -> list[tuple[str, str]]:
    return [c for key, label in VERSUS for c in ((f"{key}_vs", f"{label} {place}"), (f"{key}_x", "×"))]


TEXT_WIDTH = 32  # a runtime's or a bundle's words beyond it are cut with … (the Artifact tab has them whole)


def cut(text: str, width: int = TEXT_WIDTH) -> str:
    return shorten.end(text, width)


class Cell:
    """A table cell that shows `text` and sorts by `raw` (None last, either way)."""

    def __init__(self, raw, text: str, style: str = "", right: bool = False) -> None:
        self.raw, self.text, self.style, self.right = raw, text, style, right

    def __rich__(self) -> Text:
        return Text(self.text, style=self.style, justify="right" if self.right else "left")

    def sort_key(self, descending: bool = False):
        missing = self.raw is None or (isinstance(self.raw, float) and math.isnan(self.raw))
        if descending:
            return (0, 0) if missing else (1, self.raw)
        return (1, 0) if missing else (0, self.raw)


def ship_size(form: forms.Form, manifest: Manifest, ws: Workspace) -> int | None:
    total, known = 0, False
    for p in form.ship_paths(ws):
        size = None
        for key, info in manifest.artifacts.items():
            if p.as_posix().endswith("/" + key):
                size = info.size
                break
        if size is None and p.exists():
            size = p.stat().st_size
        if size is not None:
            total += size
            known = True
    return total if known else None


def runtime_size(form: forms.Form, manifest: Manifest, ws: Workspace) -> int | None:
    """The runtime's size as the build probed it (Python: its distributions; compiled: the
    non-system libraries a run loads), None when not probed."""
    try:
        facts, _why = runtime_facts(form, ws, manifest)
    except (OSError, ValueError):
        return None
    value = (facts or {}).get("runtime_bytes")
    return value if isinstance(value, int) else None


def isolated_cell(check: ShipCheck | None) -> Cell:
    """`deploytui ship FORM --check`'s verdict: ✓ with the bundle's .tar.gz size, or ✗ and why."""
    if check is None:
        return Cell(None, "–", "grey50")
    size = units.short_size(check.compressed_bytes) if check.compressed_bytes else ""
    if check.passed:
        return Cell(0, f"{check.glyph} {size}".strip(), "green")
    why = check.reason
    why = why.split(": ", 1)[1] if why.startswith("exit ") and ": " in why else why
    return Cell(1, f"{check.glyph} {cut(why)}", "red")


def arch_cell(state: ArchState | None) -> Cell:
    """The form's bundle for another architecture: its .tar.gz size and whether it ran there
    (✓/✗, "emulated" when under qemu; · built, never run there), or the stage that stops it."""
    if state is None:
        return Cell(None, "–", "grey50")
    if not state.built:
        return Cell(None, f"✗ {cut(state.why)}", "grey50")
    size = units.short_size(state.compressed_bytes) if state.compressed_bytes else ""
    emulated = " emulated" if state.emulated else ""
    style = {None: "", True: "green", False: "red"}[state.proved]
    text = f"{state.glyph} {size}{emulated}".strip()
    if state.proved is False:
        text += f" {cut(state.proof_why, 24)}"
    return Cell(state.compressed_bytes, text, style, right=False)


def accuracy_cells(
    form: forms.Form, rec: RunRecord | None, parent: RunRecord | None, manifest: Manifest, ws: Workspace
) -> list[Cell]:
    """A variant's accuracy against eager (worst cosine, top-1) and its ratios to its fp32 parent;
    – for fp32 forms (their verdict is the tolerance)."""
    if not form.variant:
        return [Cell(None, "–", "grey50"), Cell(None, "–", "grey50")]
    acc = rec.accuracy if rec is not None else None
    if acc is None or not acc.outputs:
        accuracy = Cell(None, "not measured", "grey50")
    else:
        cos = min(o.cosine for o in acc.outputs)
        top1s = [o.top1 for o in acc.outputs if o.top1 is not None]
        text = f"cos {cos:.5f}" + (f" top-1 {min(top1s):.0%}" if top1s else "")
        accuracy = Cell(
            cos, f"{'✓' if acc.within_budget else '✗'} {text}", "green" if acc.within_budget else "red"
        )
    if rec is None:
        return [accuracy, Cell(None, "–", "grey50")]
    r = variants.ratios(rec, form.parent, parent, lambda key: ship_size(registry.get(key), manifest, ws))
    text = " ".join(f"{v:.2f}×" if v is not None else "–" for v in r.values())
    return [accuracy, Cell(r["steady"], text if any(v is not None for v in r.values()) else "–", right=True)]


def task_cell(rec: RunRecord | None) -> Cell:
    """The task's top-1 on the user's labelled data (`--data`), eager's, the drop and its interval;
    sorted by the drop."""
    t = rec.task if rec is not None else None
    if t is None:
        return Cell(None, "–", "grey50")
    pct, eager, drop, ci = score_text.cells(t)
    return Cell(t.drop, f"{pct}  {eager}  {drop} {ci.split(' (')[0]}", right=True)


def row_cells(
    form: forms.Form,
    why: str,
    rec: RunRecord | None,
    manifest: Manifest,
    ws: Workspace,
    isolated: ShipCheck | None = None,
    parent: RunRecord | None = None,
    arch: ArchState | None = None,
) -> list[Cell]:
    ok = fmt.ok_runs(rec)
    walls = rec.wall_s if rec and ok else None
    rss = fmt.median(rec.peak_rss_bytes) if rec and ok else None
    size = ship_size(form, manifest, ws)
    runtime = runtime_size(form, manifest, ws)
    ships = ", ".join(p.name for p in form.ship_paths(ws)) or "–"
    diff = rec.max_abs_diff if rec else None
    if why and not rec:
        verdict = Cell(4, fmt.short_reason(why), "grey50")
    else:
        mark = fmt.verdict_mark(rec)  # "–" does not apply: not a failure, said as the list says it
        verdict = Cell(
            {fmt.CHECK: 0, fmt.CROSS: 1, fmt.DASH: 4}.get(mark, 3 if not rec else 2),
            {fmt.CHECK: "✓ ok", fmt.CROSS: "✗ differs", fmt.BANG: "! failed", fmt.DASH: "not applicable"}.get(
                mark, "not run"
            ),
            "green" if mark == fmt.CHECK else "red" if mark in (fmt.CROSS, fmt.BANG) else "grey50",
        )
    extra = accuracy_cells(form, rec, parent, manifest, ws)
    cells = {
        "form": Cell(form.key, form.key, "bold" if not why else "grey62"),
        "start_med": Cell(fmt.median(walls), units.seconds(fmt.median(walls)) if walls else "–", right=True),
        "rss": Cell(rss, units.short_size(rss) if rss else "–", right=True),
        "size": Cell(size, units.short_size(size), right=True),
        "diff": Cell(
            diff if isinstance(diff, (int, float)) else None,
            f"{diff:.2g}" if isinstance(diff, (int, float)) else "–",
            right=True,
        ),
        "verdict": verdict,
        "start_min": Cell(
            fmt.minimum(walls), units.seconds(fmt.minimum(walls)) if walls else "–", right=True
        ),
        "runtime_size": Cell(runtime, units.short_size(runtime) if runtime is not None else "–", right=True),
        "isolated": isolated_cell(isolated),
        "aarch64": arch_cell(arch),
        "accuracy": extra[0],
        "task": task_cell(rec),
        "vs_parent": extra[1],
        "runtime": Cell(
            form.runtime, cut(registry.RUNTIME_TITLES.get(form.runtime, form.runtime).split(" and ")[0])
        ),
        "ships": Cell(ships, cut(ships)),
    }
    return [cells[key] for key, _ in COLUMNS]


def versus_cells(shown: RunRecord | None, other: RunRecord | None) -> list[Cell]:
    """Another place's start-up, peak RSS and p99 beside the figures shown, and shown ÷ other."""
    cells = []
    for get, text in (
        (lambda r: fmt.median(r.wall_s), units.seconds),
        (lambda r: fmt.median(r.peak_rss_bytes), units.short_size),
        (lambda r: r.forwards.p99_ms / 1e3 if r.forwards else None, units.seconds),
    ):
        theirs = get(other) if other and fmt.ok_runs(other) else None
        ours = get(shown) if shown and fmt.ok_runs(shown) else None
        ratio = ours / theirs if ours is not None and theirs else None
        cells.append(Cell(theirs, text(theirs) if theirs is not None else "–", right=True))
        cells.append(Cell(ratio, f"{ratio:.2f}×" if ratio is not None else "–", right=True))
    return cells


def versus_places(shown: str | None, ws: Workspace) -> list[str | None]:
    """What key v cycles through: nothing beside, then this machine (when a target is shown),
    then every other target the model was measured on."""
    return [None, *([HERE] if shown else []), *(t for t in ws.measured_targets() if t != shown)]


class CompareScreen(Screen):
    DEFAULT_CSS = """
    #compare-box { height: 1fr; }
    #compare-hint { height: 1; padding: 0 1; }
    #compare-table { height: 1fr; }
    #compare-charts-box { height: 1fr; }
    #compare-charts { height: auto; }
    #compare-charts PlotextChart { width: 1fr; height: auto; padding: 0 1; }
    """
    BINDINGS = [
        Binding("escape,c", "close", "Back", id="compare-close"),
        Binding("s", "sort", "Sort by column", id="compare-sort"),
        Binding(
            "v",
            "versus",
            "Beside",
            id="compare-versus",
            tooltip="Beside — another place's start-up, RSS and p99 next to the figures shown, with the "
            "ratio: this machine, or each target the model was measured on, in turn",
        ),
    ]

    @property
    def host(self) -> AppHost:
        """The app, as the screens see it (they never import it)."""
        return host_of(self)

    def __init__(self) -> None:
        super().__init__()
        self._sorted: tuple[str, bool] | None = None
        self.versus: str | None = None  # the place shown beside (None: none); set on mount

    def compose(self) -> ComposeResult:
        with Vertical(id="compare-box"):
            yield Static("", id="compare-hint")
            yield DataTable(id="compare-table", cursor_type="cell", zebra_stripes=True)
            with VerticalScroll(id="compare-charts-box"), Horizontal(id="compare-charts"):
                yield PlotextChart("no form measured yet", id="chart-start")
                yield PlotextChart("no form measured yet", id="chart-rss")
        yield Footer()

    def on_mount(self) -> None:
        self.versus = HERE if self.host.session.target else None
        self.fill()
        self.draw_charts()
        self.query_one("#compare-table", DataTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "versus":
            return len(versus_places(self.host.session.target, self.host.session.ws)) > 1
        return True

    def action_versus(self) -> None:
        places = versus_places(self.host.session.target, self.host.session.ws)
        self.versus = places[(places.index(self.versus) + 1) % len(places)] if self.versus in places else None
        self._sorted = None
        self.fill()

    def fill(self) -> None:
        """The table: every form's figures where they are shown, and the place beside them."""
        table = self.query_one("#compare-table", DataTable)
        table.clear(columns=True)
        app = self.host
        target, versus = app.session.target, self.versus
        columns = list(COLUMNS)
        at = [k for k, _ in COLUMNS].index("diff") + 1
        other: dict[str, RunRecord] = {}
        if versus:
            from deploytui.scenarios.startup import results

            other = results.load(app.session.ws.results_on(None if versus == HERE else versus)).forms
            columns[at:at] = versus_columns("here" if versus == HERE else versus)
        where = f" on {target}" if target else ""
        beside = f", {'this machine' if versus == HERE else versus}'s beside them" if versus else ""
        keys = " — s (or a click on a header) sorts by the cursor's column"
        if len(versus_places(target, app.session.ws)) > 1:
            keys = " — s sorts, v changes what is beside"
        hint = f"Every form{where}{beside or ' side by side'}{keys}"
        self.query_one("#compare-hint", Static).update(Text(hint, style="dim"))
        for key, label in columns:
            table.add_column(label, key=key)
        # a target of another architecture: its bundles' sizes (ship-<arch>.json), not this machine's
        there = [r.target for r in app.session.store.forms.values() if target and r.target is not None]
        arch = there[0].arch if there and there[0].arch not in ("", platform.machine()) else None
        if arch:
            emulated = " (emulated: qemu's timings, never ranked)" if there[0].emulated else ""
            self.query_one("#compare-hint", Static).update(
                Text(
                    f"Every form on {target}{emulated}, this machine's figures beside them; "
                    f"ship sizes of the {arch} bundles — s sorts",
                    style="dim",
                )
            )
        ship = ship_store.load(app.session.ws.ship_path_for(arch))
        if ship.dropped:
            self.notify("; ".join(ship.dropped), title="ship.json damaged", severity="warning", timeout=15)
        shipped = ship.forms
        aarch64 = arch_state.Stored.read(app.session.ws, "aarch64")
        for f in registry.FORMS:
            cells = row_cells(
                f,
                app.session.status.get(f.key, ""),
                app.session.store.forms.get(f.key),
                app.session.manifest,
                app.session.ws,
                shipped.get(f.key),
                app.session.store.forms.get(f.parent) if f.parent else None,
                arch_state.other(f, "aarch64", app.session.ws, aarch64),
            )
            if versus:
                cells[at:at] = versus_cells(app.session.store.forms.get(f.key), other.get(f.key))
            table.add_row(*cells, key=f.key)

    def draw_charts(self) -> None:
        app = self.host
        measured = [
            (f.key, app.session.store.forms[f.key])
            for f in registry.FORMS
            if fmt.ok_runs(app.session.store.forms.get(f.key))
        ]
        if measured:
            labels = [k for k, _ in measured]
            for chart in self.query(PlotextChart):
                chart.styles.height = len(labels) + 1  # one row a form, under the title
            starts = [(fmt.median(r.wall_s) or 0.0) * 1e3 for _, r in measured]
            rss = [(fmt.median(r.peak_rss_bytes) or 0.0) / (1 << 20) for _, r in measured]
            self.query_one("#chart-start", PlotextChart).plot(
                bars(
                    labels,
                    starts,
                    title="start-up median (log scale)",
                    log=True,
                    value_text=lambda v: units.seconds(v / 1e3),
                )
            )
            self.query_one("#chart-rss", PlotextChart).plot(
                bars(
                    labels, rss, title="peak RSS median", value_text=lambda v: units.short_size(v * (1 << 20))
                )
            )

    def sort_by(self, column: str) -> None:
        reverse = self._sorted == (column, False)
        self.query_one("#compare-table", DataTable).sort(
            column, key=lambda c: c.sort_key(reverse), reverse=reverse
        )
        self._sorted = (column, reverse)

    def action_sort(self) -> None:
        table = self.query_one("#compare-table", DataTable)
        col = table.ordered_columns[table.cursor_column].key.value
        self.sort_by(str(col))

    @on(DataTable.HeaderSelected, "#compare-table")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(str(event.column_key.value))

    def action_close(self) -> None:
        close(self)
