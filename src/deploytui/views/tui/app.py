"""The deploytui Textual app, `DeployApp`: its start-up, its keys' actions and the palette. Its
state is a `session.Session` (no Textual in it); the screens show it and see the app as a
`host.AppHost` (they never import this module).

`DeployApp` is the last of a few layers, each about one thing:
- `jobs.JobLaneApp`: the session's one job lane and the thread workers that run its jobs;
- `models.ModelsApp`: the model shown, and opening another (checked, then built in the background);
- `outcomes.OutcomesApp`: the workers' messages taken on the app's thread, and each job's end;
- `DeployApp` (here): start-up, the keys (`keys.BINDINGS`) and their actions, the palette.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from deploytui.core import defaults
from deploytui.core.workspace import Workspace
from deploytui.views.tui import _start, keys
from deploytui.views.tui.outcomes import TIMELINE_ENV, OutcomesApp
from deploytui.views.tui.session import (
    BUILD,
    EXPORT,
    RUN,
    SERVE,
    SHIP,
    SWEEP,
    Job,
    Session,
    Settings,
    model_label,
)

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from deploytui.views.tui.host import AppHost

EXIT_ON_READY_ENV = "DEPLOYTUI_EXIT_ON_READY"
__all__ = ["EXIT_ON_READY_ENV", "TIMELINE_ENV", "DeployApp"]


class DeployApp(OutcomesApp):
    CSS_PATH = Path(__file__).parent / "app.tcss"
    TITLE = "deploytui"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = keys.BINDINGS  # their tooltips are the palette's and the help screen's text

    def __init__(
        self,
        ws: Workspace | None = None,
        *,
        handle_signals: bool = False,
        runs: int = defaults.RUNS,
        warmup: int = defaults.WARMUP,
    ) -> None:
        """`ws`: the model to show first and where the files are (default: a1 in the default
        artifacts folder)."""
        super().__init__()
        self.started_ns = _start.START_NS
        self.ready_ms: float | None = None
        self.ready_at_ns = 0
        self.handle_signals = handle_signals
        self.session = Session(ws or Workspace.at(), Settings(runs=runs, warmup=warmup))
        self.timeline_built = set()  # forms whose `built` event the timeline has

    # shortcuts to the session (tests and screens read these)
    @property
    def store(self):
        return self.session.store

    @property
    def status(self) -> dict[str, str]:
        return self.session.status

    @property
    def job(self) -> str:
        return self.session.job

    def get_default_screen(self) -> Screen:
        from deploytui.views.tui.main_screen import MainScreen

        self.main = MainScreen(id="main")
        return self.main

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification as plain text, whatever the caller (a screen's `notify` passes
        markup=True): its messages carry runners' errors, reasons and paths, and a `[/x]` in one
        read as markup raised MarkupError while the toast was drawn, taking the app down."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    # ---- lifecycle ------------------------------------------------------------------------
    def on_mount(self) -> None:
        if self.store.dropped:
            self.notify(
                "Results file damaged — " + "; ".join(self.store.dropped),
                title="Some results dropped",
                severity="warning",
                timeout=15,
            )
        if self.handle_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGHUP):
                try:
                    loop.add_signal_handler(sig, self.shutdown)
                except (NotImplementedError, RuntimeError, ValueError):
                    pass

    def on_ready(self) -> None:
        self.ready_ms = (time.perf_counter_ns() - self.started_ns) / 1e6
        self.ready_at_ns = time.monotonic_ns()  # for bench/app_startup.py, comparable across processes
        _start.release_gc()
        self.set_interval(_start.FULL_EVERY_S, _start.collect_at_rest)
        self.log.info(f"ready in {self.ready_ms:.0f} ms")
        self.timeline("ready")
        if os.environ.get(EXIT_ON_READY_ENV):
            self.exit(return_code=0, result=self.ready_ms)
            return
        self.call_after_refresh(self._after_ready)

    async def _after_ready(self) -> None:
        await self.main.mount_rest()
        self.session.ready = True  # the inspectors' imports waited until the app was on screen
        if self.session.never_built:  # a fresh clone (`make run`) or a new --model: build it here
            self.notify(f"{model_label(self.session.model)} is not built yet: building it in the background")
            self.submit(Job(BUILD, ws=self.session.ws))
        self.load_sections(self.main.current)
        self.run_worker(self._warm_up, thread=True, group="warm-up", exit_on_error=False)

    def _warm_up(self) -> None:
        """Off the UI thread, once the app is up: import the chart library (~150 ms the first
        chart would wait for, in a key's turn), then freeze what start-up left (the tabs, the
        modules) so that full collections skip it."""
        from deploytui.core import plot

        plot.preload()
        self.call_from_thread(_start.settle_gc)

    def shutdown(self) -> None:
        """The one way out (q, ctrl+q, SIGTERM, SIGHUP): close the lane, cancel the job in flight."""
        self.session.shutdown()
        self.exit()

    def on_unmount(self) -> None:
        self.session.shutdown()  # however the app went (also when run_test ends)

    # ---- actions --------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Off once the app is quitting (a key typed right after q, the s of "qs", pushed a screen
        that the exit tore down while it mounted: a traceback); off on a screen of fields
        (ctrl+p, ctrl+q and the screen's own keys still work)."""
        if self.session.quitting:
            return False
        return not (getattr(self.screen, "TYPING", False) and action in keys.TYPED_OVER)

    def _busy(self) -> bool:
        """A run or build is asked for already: say so (one at a time) and refuse."""
        job = self.session.lane.find(RUN, BUILD, SWEEP, SERVE)
        if job is None:
            return False
        live = self.session.live
        what = (
            f"{live.form} is running"
            if live
            else f"a {job.kind} is {'running' if job is self.session.lane.running else 'waiting'}"
        )
        self.notify(f"{what}: one job at a time (escape cancels it)", severity="warning")
        return True

    def action_run(self, key: str | None = None) -> None:
        key = key or self.main.current
        if self._busy():
            return
        if self.status.get(key):
            self.notify(f"{key} cannot run: {self.status[key]}", severity="warning")
            return
        self.main.show_tab("run")
        self.submit(Job(RUN, (key,), ws=self.session.ws, target=self.session.target))

    def action_run_all(self) -> None:
        if self._busy():
            return
        keys = self.session.runnable()
        if not keys:
            self.notify("No form is built yet: press b to build", severity="warning")
            return
        self.main.show_tab("run")
        self.submit(Job(RUN, tuple(keys), ws=self.session.ws, target=self.session.target))

    def action_run_everywhere(self) -> None:
        """Every built form on every target named (deploytui target add), the targets at once."""
        if self._busy():
            return
        names = [name for name, _ in self.session.known_targets()]
        keys = self.session.runnable()
        if not names or not keys:
            self.notify(
                "No target yet: deploytui target add NAME ssh://user@host (docs/targets.md)"
                if not names
                else "No form is built yet: press b to build",
                severity="warning",
            )
            return
        self.session.fleet = {}
        self.submit(Job(RUN, tuple(keys), ws=self.session.ws, targets=tuple(names)))

    def action_ship(self, key: str | None = None) -> None:
        """Bundle the highlighted form and run the bundle isolated: a job of the lane, like a run."""
        key = key or self.main.current
        if self.status.get(key):
            self.notify(f"{key} cannot ship: {self.status[key]}", severity="warning")
            return
        if self.session.lane.find(RUN, BUILD, SHIP):
            self.notify(f"The ship check of {key} starts once the job in flight ends", title="Queued")
        self.submit(Job(SHIP, (key,), ws=self.session.ws))

    def action_cancel(self) -> None:
        job = self.session.lane.find(RUN, BUILD, SWEEP, SHIP, SERVE)
        if job is not None:
            if self.session.lane.cancel(job):  # it had not started: nothing of it to wait for
                self.notify(f"The {job.kind} waiting is cancelled")
                for screen in self._build_screens():
                    screen.finished(None, True, "")
                for scale in self._scale_screens():
                    scale.finished(True, "")
                for served in self._serve_screens():
                    served.finished(True, "")
            else:
                self.notify("Cancelling…")
        elif self.screen is not self.main:
            self.pop_screen()

    def action_build(self) -> None:
        from deploytui.views.tui.build_screen import BuildScreen

        if isinstance(self.screen, BuildScreen):
            return
        if self.job == RUN:
            self._busy()
            return
        self.push_screen(BuildScreen())
        if self.session.lane.find(BUILD, model=self.session.model) is None:
            self.submit(Job(BUILD, ws=self.session.ws))

    def action_compare(self) -> None:
        from deploytui.views.tui.compare_screen import CompareScreen

        if isinstance(self.screen, CompareScreen):
            self.pop_screen()
            return
        self.push_screen(CompareScreen())

    def action_scale(self) -> None:
        from deploytui.views.tui.scale_screen import ScaleScreen

        if isinstance(self.screen, ScaleScreen):
            self.pop_screen()
            return
        self.push_screen(ScaleScreen())

    def action_serve(self) -> None:
        from deploytui.views.tui.serve_screen import ServeScreen

        if isinstance(self.screen, ServeScreen):
            self.pop_screen()
            return
        self.push_screen(ServeScreen())

    def action_choose(self) -> None:
        from deploytui.views.tui.choose_screen import ChooseScreen

        if not isinstance(self.screen, ChooseScreen):
            self.push_screen(ChooseScreen())

    def start_sweep(self) -> None:
        """The default sweep in the background (sizes already measured are skipped)."""
        if self._busy():
            return
        self.submit(Job(SWEEP, ws=self.session.ws))

    def start_serve(self) -> None:
        """The serving cells of every form for the model shown, in the background (the lane: no
        timed run overlaps a build); each cell is stored as it ends."""
        if self._busy():
            return
        self.submit(Job(SERVE, ws=self.session.ws, target=self.session.target))

    def action_help(self) -> None:
        from deploytui.views.tui.help_screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_export(self) -> None:
        if self.session.lane.find(RUN, BUILD):
            self.notify("The report is written once the job in flight ends", title="Export queued")
        self.submit(Job(EXPORT, ws=self.session.ws))

    async def action_quit(self) -> None:
        self.shutdown()

    # ---- palette --------------------------------------------------------------------------
    @classmethod
    def key_of(cls, action: str) -> str:
        """The key bound to `action`, as the footer shows it: the palette's texts name it from
        the bindings, so they cannot drift from them."""
        binding = next(b for b in cls.BINDINGS if isinstance(b, Binding) and b.action == action)
        return binding.key_display or binding.key.split(",")[0]

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        runs = self.session.settings.describe()
        for title, help, callback in keys.commands(self, self.BINDINGS, runs=runs):
            yield SystemCommand(title, help, callback)
        for text, line in self.session.known_models():
            if text != self.session.model.text:
                yield SystemCommand(f"Open model {text}", line, lambda text=text: self.open_model(text))
        if screen is self.main:
            for title, help, callback in keys.commands(self.main, self.main.BINDINGS):
                yield SystemCommand(title, help, callback)


if TYPE_CHECKING:

    def _is_a_host(app: DeployApp) -> AppHost:
        return app  # what the screens ask of the app (host.AppHost), checked by mypy
