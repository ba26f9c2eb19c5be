"""The Run tab: progress, live start-up and RSS gauges, the run times, stages, modules, errors."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import ProgressBar, Static

from deploytui.core import units
from deploytui.core.record import RunRecord
from deploytui.views.tui import fmt
from deploytui.views.tui.session import LiveRun, Settings
from deploytui.views.tui.widgets.chart import PlotextChart, series
from deploytui.views.tui.widgets.gauge import Gauge

LIVE_CHART_EVERY_S = 1.0  # a drawing costs ~15 ms: fast forms finish runs 4 times a second
STAGE_STYLES = {"import": "blue", "load": "magenta", "first_forward": "green", "steady_forward": "cyan"}


class RunView(VerticalScroll):
    DEFAULT_CSS = """
    RunView { height: 1fr; }
    #run-status, #run-stages, #run-modules { height: auto; }
    #run-progress { margin: 1 0; }
    #run-chart { height: 12; margin-top: 1; }
    #run-stages, #run-modules { margin-top: 1; }
    """
    _shown: tuple = ()
    _chart_at = 0.0  # when the live chart was last drawn
    _stages_shown: dict | None = None  # the stages the bar shows

    def compose(self) -> ComposeResult:
        yield Static(id="run-status")
        yield Static(id="run-error", classes="error")
        yield ProgressBar(total=None, show_eta=False, id="run-progress")
        yield Gauge("start-up", id="gauge-start")
        yield Gauge("RSS", id="gauge-rss")
        yield PlotextChart("", id="run-chart")
        yield Static(id="run-stages")
        yield Static(id="run-modules")

    def show(
        self,
        form_key: str,
        rec: RunRecord | None,
        live: LiveRun | None,
        why: str = "",
        settings: Settings | None = None,
    ) -> None:
        settings = settings or Settings()
        status = self.query_one("#run-status", Static)
        bar = self.query_one("#run-progress", ProgressBar)
        start = self.query_one("#gauge-start", Gauge)
        rss = self.query_one("#gauge-rss", Gauge)
        chart = self.query_one("#run-chart", PlotextChart)
        err = self.query_one("#run-error", Static)
        prev_wall = fmt.median(rec.wall_s) if fmt.ok_runs(rec) else None
        prev_rss = fmt.median(rec.peak_rss_bytes) if fmt.ok_runs(rec) else None
        if live is not None and live.form == form_key:
            # live readings come 20 times a second: only the gauges change with each
            top = max(live.max_elapsed, prev_wall or 0.0, live.elapsed) * 1.15 or 1.0
            start.set(live.elapsed, top, units.seconds(live.elapsed))
            rtop = max(live.peak_rss, prev_rss or 0, live.rss) * 1.15 or 1.0
            rss.set(live.rss, rtop, units.short_size(live.rss))
            if self._shown != (form_key, "live", live.done):  # the rest changes once per finished run
                self._shown = (form_key, "live", live.done)
                status.update(
                    Text(
                        f"running {form_key}: {live.done}/{live.total} runs done ({live.warmup} warm-up, "
                        f"then {live.total - live.warmup} counted) — escape or x cancels",
                        style="bold yellow",
                    )
                )
                bar.update(total=live.total, progress=live.done)
                now = time.monotonic()
                if not live.walls or now - self._chart_at >= LIVE_CHART_EVERY_S:
                    self._chart_at = now if live.walls else 0.0
                    chart.plot(
                        run_times(live.walls) if live.walls else None,
                        empty="first run in flight…",
                        key=("walls", tuple(live.walls)),
                    )
                err.update(Text(live.failed))
                err.display = bool(live.failed)
                self._stages(None)
            return
        self._shown = (form_key, "rec", id(rec))
        n_total = (rec.n if rec else 0) + (rec.warmup if rec else 0)
        if rec is None:
            status.update(
                Text(
                    f"{form_key} has not been run yet. "
                    + (
                        f"It cannot run: {why}"
                        if why
                        else f"Press r (or enter) to run it: {settings.describe()}."
                    ),
                    style="" if not why else "yellow",
                )
            )
            bar.update(total=settings.total, progress=0)
        else:
            state = {
                "ok": "ok",
                "failed": "FAILED",
                "unavailable": "unavailable",
                "not-applicable": "not applicable",
            }.get(rec.status, "?")
            walls = rec.wall_s or []
            status.update(
                Text(
                    f"last run {rec.measured_at or '?'}: {state}, "
                    f"{len(walls)} runs after {rec.warmup} warm-up — "
                    f"start-up min {units.seconds(fmt.minimum(walls))} median {units.seconds(prev_wall)}, "
                    f"peak RSS median {units.short_size(prev_rss)}"
                )
            )
            bar.update(total=max(n_total, 1), progress=len(walls) + (rec.warmup if walls else 0))
        start.set(prev_wall or 0.0, (prev_wall or 1.0) * 1.15, units.seconds(prev_wall))
        rss.set(prev_rss or 0, (prev_rss or 1) * 1.15, units.short_size(prev_rss))
        walls = (rec.wall_s if rec else None) or []
        chart.plot(run_times(walls) if walls else None, empty="no run times yet", key=("walls", tuple(walls)))
        problem = ""
        if rec and rec.error:
            problem = f"⚠ {rec.error}"
            if rec.stage:
                problem += f"\nstage {rec.stage} failed" + (f"; full log: {rec.log}" if rec.log else "")
            tail = rec.stderr_tail or []
            if tail:
                problem += "\nstderr (last lines):\n" + "\n".join(f"  {ln}" for ln in tail)
        err.update(Text(problem))
        err.display = bool(problem)
        self._stages(rec)

    def on_resize(self) -> None:
        """The stage bar spans the view: drawn again at its new width (a tab drawn as it comes
        into view for the first time is drawn before it has a size)."""
        if self._stages_shown:
            bar = stage_bar(self._stages_shown, max(self.size.width - 4, 30))
            self.query_one("#run-stages", Static).update(bar)

    def _stages(self, rec: RunRecord | None) -> None:
        stages = self.query_one("#run-stages", Static)
        modules = self.query_one("#run-modules", Static)
        st = rec.stages_ms if rec else None
        if not isinstance(st, dict) or not st:
            stages.update("")
            stages.display = False
        else:
            stages.display = True
            stages.update(stage_bar(st, max(self.size.width - 4, 30)))
        self._stages_shown = st if isinstance(st, dict) and st else None
        mods = rec.modules_added if rec else None
        if not isinstance(mods, dict):
            modules.update("")
            modules.display = False
        else:
            modules.display = True
            total = (rec.modules_added_total if rec else None) or sum(
                v for v in mods.values() if isinstance(v, int)
            )
            top = sorted(mods.items(), key=lambda kv: -kv[1] if isinstance(kv[1], (int, float)) else 0)
            t = Text(f"load imported {total} modules", style="bold")
            if top:
                t.append(": " + ", ".join(f"{k} {v}" for k, v in top[:12]))
                if len(top) > 12:
                    t.append(f", … {len(top) - 12} more packages")
            sub = rec.modules_added_torch if rec else None
            if isinstance(sub, dict) and sub:
                t.append("\n  of torch's own: ", style="dim")
                t.append(", ".join(f"{k} {v}" for k, v in list(sub.items())[:8]))
            modules.update(t)


def run_times(walls: list[float]):
    """The per-run chart in ms, or in s once runs take a second (plotext would print 1.9e3)."""
    scale, unit = (1.0, "s") if max(walls) >= 1 else (1e3, "ms")
    return series([w * scale for w in walls], title=f"start-up per run ({unit})")


def stage_bar(stages: dict, width: int) -> Text:
    """import / load / forward as one stacked bar, then the numbers."""
    vals = {k: float(v) for k, v in stages.items() if isinstance(v, (int, float))}
    total = sum(vals.values()) or 1.0
    t = Text("Stages (median; steady_forward is one forward of a warm process) ", style="bold")
    t.append("\n")
    bar_w = max(width, 10)
    used = 0
    for i, (k, v) in enumerate(vals.items()):
        w = bar_w - used if i == len(vals) - 1 else round(v / total * bar_w)
        used += w
        t.append("█" * w, style=STAGE_STYLES.get(k, "white"))
    t.append("\n")
    t.append("  ".join(f"{k} {units.from_ms(v)}" for k, v in vals.items()))
    legend = Text("  ")
    for k in vals:
        legend.append("■ ", style=STAGE_STYLES.get(k, "white"))
        legend.append(k + " ")
    t.append(legend)
    return t
