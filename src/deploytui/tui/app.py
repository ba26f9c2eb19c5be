"""The deploytui Textual app: state (results, manifest, availability), workers, keys, palette.

Measurements and builds run in thread workers, one at a time (group "job"); they post messages
(`messages.py`) and never touch widgets. Quitting sets the cancel Event of the job in flight, so
the measuring core kills the running child's process group: nothing is left running.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from deploytui import forms, manifest, results
from deploytui.record import RunRecord
from deploytui.tui import _start  # first: the start-up clock
from deploytui.tui import messages as msg
from deploytui.tui.live import LiveRun

RUNS = 20
WARMUP = 1
LIVE_EVERY_S = 0.05  # live RSS/elapsed updates posted at most this often
SAMPLES_EVERY_S = 0.25  # finished runs too: redrawing after each 2 ms run slowed the runs ~50 %
EXIT_ON_READY_ENV = "DEPLOYTUI_EXIT_ON_READY"


class DeployApp(App):
    CSS_PATH = Path(__file__).parent / "app.tcss"
    TITLE = "deploytui"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding("r", "run", "Run", id="run"),
        Binding("a", "run_all", "Run all", id="run-all"),
        Binding("b", "build", "Build", id="build"),
        Binding("c", "compare", "Compare", id="compare"),
        Binding("e", "export", "Export report", id="export"),
        Binding("escape,x", "cancel", "Cancel run", id="cancel", show=False),
        Binding("question_mark", "help", "Help", key_display="?", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit-ctrl"),
    ]

    def __init__(self, *, handle_signals: bool = False, runs: int = RUNS, warmup: int = WARMUP) -> None:
        super().__init__()
        self.started_ns = _start.START_NS
        self.ready_ms: float | None = None
        self.ready_at_ns = 0
        self.handle_signals = handle_signals
        self.runs = runs
        self.warmup_runs = warmup
        self.store = results.load()
        self.manifest: dict = {}
        self.status: dict[str, str] = {}
        self.live: LiveRun | None = None
        self.job: str = ""  # "run" | "build" | "" (nothing in flight)
        self.cancel_event = threading.Event()
        self._sections: dict[str, list] = {}
        self._reference: tuple[list | None, str] | None = None
        self._last_live = 0.0
        self._want_inspect: str | None = None
        self._inspecting = threading.Event()  # set while the inspector thread works
        self._quitting = False
        self.load_state()

    # ---- state ----------------------------------------------------------------------------
    def load_state(self) -> None:
        """Read the manifest and work out which forms can run (cheap: no subprocess, no torch)."""
        self.manifest = manifest.load()
        self.status = {}
        for f in forms.FORMS:
            try:
                self.status[f.key] = manifest.availability(f, self.manifest)
            except Exception as e:  # never die on a strange manifest
                self.status[f.key] = f"cannot tell: {type(e).__name__}: {e}"
        self._sections.clear()
        self._reference = None

    def reference(self) -> tuple[list | None, str]:
        if self._reference is None:
            from deploytui import bench

            try:
                self._reference = (bench.reference_logits(), "")
            except Exception as e:
                self._reference = (None, str(e))
        return self._reference

    def get_default_screen(self) -> Screen:
        from deploytui.tui.main_screen import MainScreen

        self.main = MainScreen(id="main")
        return self.main

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
                    loop.add_signal_handler(sig, self._on_signal)
                except (NotImplementedError, RuntimeError, ValueError):
                    pass

    def on_ready(self) -> None:
        self.ready_ms = (time.perf_counter_ns() - self.started_ns) / 1e6
        self.ready_at_ns = time.monotonic_ns()  # for bench/app_startup.py, comparable across processes
        _start.release_gc()
        self.log.info(f"ready in {self.ready_ms:.0f} ms")
        if os.environ.get(EXIT_ON_READY_ENV):
            self.exit(return_code=0, result=self.ready_ms)
            return
        self.call_after_refresh(self._after_ready)

    async def _after_ready(self) -> None:
        await self.main.mount_rest()
        self.load_sections(self.main.current)

    def _on_signal(self) -> None:
        self.cancel_event.set()
        self.exit()

    def on_unmount(self) -> None:
        self._quitting = True
        self._want_inspect = None
        self.cancel_event.set()

    # ---- actions --------------------------------------------------------------------------
    def _busy(self) -> bool:
        if self.job:
            what = f"{self.live.form} is running" if self.live else "a build is running"
            self.notify(f"{what}: one job at a time (escape cancels it)", severity="warning")
            return True
        return False

    def action_run(self, key: str | None = None) -> None:
        key = key or self.main.current
        if self._busy():
            return
        if self.status.get(key):
            self.notify(f"{key} cannot run: {self.status[key]}", severity="warning")
            return
        self._start_job("run")
        self.main.show_tab("run")
        self._measure([key])

    def action_run_all(self) -> None:
        if self._busy():
            return
        keys = [f.key for f in forms.FORMS if not self.status.get(f.key)]
        if not keys:
            self.notify("No form is built yet: press b to build", severity="warning")
            return
        self._start_job("run")
        self.main.show_tab("run")
        self._measure(keys)

    def action_cancel(self) -> None:
        if self.job:
            self.cancel_event.set()
            self.notify("Cancelling…")
        elif self.screen is not self.main:
            self.pop_screen()

    def action_build(self) -> None:
        from deploytui.tui.build_screen import BuildScreen

        if isinstance(self.screen, BuildScreen):
            return
        if self.job == "run":
            self._busy()
            return
        self.push_screen(BuildScreen())
        if not self.job:
            self._start_job("build")
            self._build()

    def action_compare(self) -> None:
        from deploytui.tui.compare_screen import CompareScreen

        if isinstance(self.screen, CompareScreen):
            self.pop_screen()
            return
        self.push_screen(CompareScreen())

    def action_help(self) -> None:
        from deploytui.tui.help_screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_export(self) -> None:
        self._export()

    @work(thread=True, group="export", exit_on_error=False, name="export")
    def _export(self) -> None:
        from deploytui import report

        path = report.write_report(self.store, self.manifest, "md")
        self.call_from_thread(self.notify, f"Report written to {path}", title="Exported")

    async def action_quit(self) -> None:
        self._quitting = True
        self._want_inspect = None
        self.cancel_event.set()
        self.exit()

    def _start_job(self, kind: str) -> None:
        self.job = kind
        self.cancel_event = threading.Event()

    # ---- palette --------------------------------------------------------------------------
    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Run highlighted form", "Measure it: 20 runs after 1 warm-up (r)", self.action_run
        )
        yield SystemCommand(
            "Run all forms", "Measure every built form in order, storing each (a)", self.action_run_all
        )
        yield SystemCommand(
            "Cancel run", "Stop the measurement or build in flight (escape)", self.action_cancel
        )
        yield SystemCommand("Build", "Build every artifact, incrementally (b)", self.action_build)
        yield SystemCommand("Compare", "Every form side by side (c)", self.action_compare)
        yield SystemCommand(
            "Export report", "Write the Markdown report from stored results (e)", self.action_export
        )
        yield SystemCommand("Help", "deploytui's keys, on every screen (?)", self.action_help)
        if screen is self.main:
            from deploytui.tui.main_screen import TAB_KEYS

            for key, name in TAB_KEYS:
                yield SystemCommand(
                    f"Show the {name.title()} tab",
                    f"of the highlighted form ({key})",
                    lambda name=name: self.main.show_tab(name),
                )

    # ---- workers --------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="job", exit_on_error=False, name="measure")
    def _measure(self, keys: list[str]) -> None:
        from deploytui import bench

        cancel = self.cancel_event
        worker = get_current_worker()
        done = 0
        while self._inspecting.is_set() and not cancel.is_set():  # never overlap the inspector's run
            time.sleep(0.05)
        for key in keys:
            if cancel.is_set() or worker.is_cancelled:
                break
            self.post_message(msg.RunStarted(key, self.runs + self.warmup_runs))
            last = {"live": 0.0, "sample": 0.0}
            finished, walls = [0], []

            def progress(p, key=key, last=last, finished=finished, walls=walls) -> None:
                kind, every = ("live", LIVE_EVERY_S) if p.sample is None else ("sample", SAMPLES_EVERY_S)
                if p.sample is not None:
                    finished[0] += 1
                    if p.sample.ok and p.phase == "run":
                        walls.append(p.sample.wall_s)
                now = time.monotonic()
                if now - last[kind] < every and finished[0] < self.runs + self.warmup_runs:
                    return
                last[kind] = now
                self.post_message(msg.RunProgress(key, p, finished[0], list(walls)))

            record = bench.bench_form(
                forms.get(key),
                n=self.runs,
                warmup=self.warmup_runs,
                on_progress=progress,
                cancel=cancel,
                manifest=self.manifest,
            )
            cancelled = cancel.is_set()
            if not cancelled:
                try:
                    self.call_from_thread(self._store_put, record)
                except RuntimeError:  # the app is gone
                    return
                done += 1
            self.post_message(msg.RunFinished(key, record, cancelled))
        self.post_message(msg.RunAllDone(done, len(keys), cancel.is_set()))

    def _store_put(self, record: RunRecord) -> None:
        self.store.put(record)

    @work(thread=True, exclusive=True, group="job", exit_on_error=False, name="build")
    def _build(self) -> None:
        from deploytui.builder import run_build

        try:
            built = run_build(
                on_event=lambda e: self.post_message(msg.BuildLine(e)), cancel=self.cancel_event
            )
            self.post_message(msg.BuildDone(built, self.cancel_event.is_set()))
        except Exception as e:
            self.post_message(msg.BuildDone({}, False, f"{type(e).__name__}: {e}"))

    def load_sections(self, key: str) -> None:
        """Show the inspector sections of `key`: cached, or computed by the one inspector thread.

        Inspecting runs ldd, nm and the ONNX reader (the runtime facts were probed by the build),
        so it never overlaps a measurement: it waits while a job runs, and a job waits for it.
        """
        if key in self._sections:
            self.main.show_sections(key, self._sections[key])
            return
        if self.ready_ms is None:  # the inspectors' imports wait until the app is on screen
            self._want_inspect = key
            return
        if self.job:
            self.main.show_waiting(
                key, "Looking inside waits until the job in flight ends (inspecting runs ldd and nm)."
            )
            return
        self.main.show_waiting(key, f"Looking inside {key}…")
        self._want_inspect = key
        if not self._inspecting.is_set():
            self._inspecting.set()
            self._inspect()

    @work(thread=True, group="inspect", exit_on_error=False, name="inspect")
    def _inspect(self) -> None:
        try:
            try:
                from deploytui.inspectors.form_view import sections
            except ImportError as e:
                self.post_message(
                    msg.SectionsReady(self._want_inspect or "", [], f"inspectors not available: {e}")
                )
                return
            while True:
                key = self._want_inspect
                if not key or (self.cancel_event.is_set() and self._quitting):
                    return
                try:
                    found = sections(forms.get(key), self.manifest)
                    self.post_message(msg.SectionsReady(key, list(found)))
                except Exception as e:  # sections() should never raise; if it does, say so in place
                    self.post_message(
                        msg.SectionsReady(key, [], f"inspecting {key} failed: {type(e).__name__}: {e}")
                    )
                if self._want_inspect == key:
                    self._want_inspect = None
                    return
        finally:
            self._inspecting.clear()

    # ---- messages from workers ------------------------------------------------------------
    def on_sections_ready(self, m: msg.SectionsReady) -> None:
        if self._quitting:
            return
        if not m.error:
            self._sections[m.form] = m.sections
        self.main.show_sections(m.form, m.sections, m.error)
        if not self._inspecting.is_set() and self.main.current not in self._sections and not self.job:
            self.load_sections(self.main.current)

    def on_run_started(self, m: msg.RunStarted) -> None:
        if self._quitting:
            return
        self.live = LiveRun(m.form, m.total, self.warmup_runs)
        self.main.refresh_form(m.form)
        self.main.query_one("#forms").select_key(m.form)

    def on_run_progress(self, m: msg.RunProgress) -> None:
        if self._quitting:
            return
        live, p = self.live, m.progress
        if live is None or live.form != m.form:
            return
        if p.sample is None:
            live.rss, live.elapsed = p.rss_bytes, p.elapsed_s
            live.peak_rss = max(live.peak_rss, p.rss_bytes)
            live.max_elapsed = max(live.max_elapsed, p.elapsed_s)
        else:
            live.done, live.walls = m.done, m.walls
            s = p.sample
            live.elapsed = s.wall_s
            live.peak_rss = max(live.peak_rss, s.peak_rss_bytes)
            live.rss = s.peak_rss_bytes
            if not s.ok:
                live.failed = f"⚠ {s.error}"
        self.main.show_live(m.form)

    def on_run_finished(self, m: msg.RunFinished) -> None:
        if self._quitting:
            return
        self.live = None
        self.main.refresh_form(m.form)
        rec = m.record
        if m.cancelled:
            kept = "earlier result kept" if m.form in self.store.forms else "nothing stored"
            self.notify(f"{m.form}: cancelled, {kept}", severity="warning")
        elif rec.status != "ok" or rec.error:
            self.notify(
                f"{m.form}: {rec.error}",
                title="Run failed" if rec.status != "ok" else "Logits differ",
                severity="error",
                timeout=10,
            )

    def on_run_all_done(self, m: msg.RunAllDone) -> None:
        if self._quitting:
            return
        self.job = ""
        self.live = None
        if m.total > 1:
            self.notify(f"Ran {m.done}/{m.total} forms" + (" (cancelled)" if m.cancelled else ""))
        self.main.refresh_all()

    def on_build_line(self, m: msg.BuildLine) -> None:
        if self._quitting:
            return
        from deploytui.tui.build_screen import BuildScreen

        for s in self.screen_stack:
            if isinstance(s, BuildScreen):
                s.add_event(m.event)

    def on_build_done(self, m: msg.BuildDone) -> None:
        if self._quitting:
            return
        from deploytui.tui.build_screen import BuildScreen

        self.job = ""
        self.load_state()
        self.main.refresh_all()
        for s in self.screen_stack:
            if isinstance(s, BuildScreen):
                s.finished(m.manifest, m.cancelled, m.error)
        built = sum(1 for f in forms.FORMS if not self.status.get(f.key))
        self.notify(
            m.error
            or f"Build {'cancelled' if m.cancelled else 'done'}: {built}/{len(forms.FORMS)} forms built",
            severity="error" if m.error else "information",
        )

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        """The one place worker errors are shown; a failed job frees the slot."""
        worker = event.worker
        if event.state != WorkerState.ERROR:
            return
        name = worker.name or "worker"
        self.notify(
            f"{name} failed: {type(worker.error).__name__}: {worker.error}",
            title="Error",
            severity="error",
            timeout=15,
        )
        if worker.group == "job":
            self.job = ""
            self.live = None
            self.main.refresh_all()
