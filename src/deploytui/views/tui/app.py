"""The deploytui Textual app: keys, palette, and the job lane's workers. Its state is a
`session.Session` (no Textual in it); the screens show it.

Every job (run, build, export, inspect, opening a model) goes through the session's one
`JobLane`: one job at a time, in the order asked, each in a thread worker that gets its `Job`
(keys, cancel Event, model), posts `JobMessage`s and never touches widgets or the session.
Its last message, `JobEnded`, frees the lane and starts the next job. Quitting closes the lane
and cancels the job in flight, so the measuring core (or the build) kills the running child's
process group: nothing is left running.

The app shows one model at a time (`session.model`); m (or the palette) switches to another.
A model never built here is checked first (in a subprocess: one clear message if it cannot be
used), then built in the background while the app stays usable; each form's row follows its
build steps (waiting, building…, ✓ built, or the stage that failed).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from deploytui.core import defaults
from deploytui.core.modelref import ModelRef, ModelRefError, parse
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.views.tui import _start
from deploytui.views.tui import messages as msg
from deploytui.views.tui.session import (
    BUILD,
    BUILT,
    EXPORT,
    INSPECT,
    OPEN,
    RUN,
    SERVE,
    SHIP,
    SWEEP,
    BuildProgress,
    Job,
    ModelState,
    ProgressGate,
    Session,
    Settings,
    model_label,
)

EXIT_ON_READY_ENV = "DEPLOYTUI_EXIT_ON_READY"
# the one-letter actions that are off on a screen of fields (`TYPING`): a letter typed there
# while a checkbox or a list has the focus (the b of 20MiB, the s of 50ms) must not build or run
TYPED_OVER = frozenset(
    {"run", "run_all", "build", "compare", "scale", "choose", "open_model", "export", "ship", "cancel"}
)
# a file the app appends "<CLOCK_MONOTONIC ns> <event>" lines to: `ready` at its first frame,
# `built FORM` when a build it runs finishes a form (bench/fresh_setup.py times `make run` with it)
TIMELINE_ENV = "DEPLOYTUI_TIMELINE"


class DeployApp(App):
    CSS_PATH = Path(__file__).parent / "app.tcss"
    TITLE = "deploytui"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [  # tooltip: "Title — what it does", the palette's and the help screen's text
        Binding("r", "run", "Run", id="run", tooltip="Run highlighted form — measure it: {runs}"),
        Binding(
            "a",
            "run_all",
            "Run all",
            id="run-all",
            tooltip="Run all forms — measure every built form in order, storing each",
        ),
        Binding("b", "build", "Build", id="build", tooltip="Build — every artifact, incrementally"),
        Binding("c", "compare", "Compare", id="compare", tooltip="Compare — every form side by side"),
        Binding("s", "scale", "Scale", id="scale", tooltip="Scale — every form's costs across the mlp sizes"),
        Binding(
            "v",
            "serve",
            "Serve",
            id="serve",
            tooltip="Serve — latency percentiles and throughput per batch size and thread count",
        ),
        Binding(
            "o",
            "choose",
            "Choose",
            id="choose",
            tooltip="Choose — the forms that meet your constraints, ranked, and why the others do not",
        ),
        Binding(
            "m",
            "open_model",
            "Model",
            id="model",
            tooltip="Open a model — the zoo, the models built here, or your own file.py:factory",
        ),
        Binding(
            "e",
            "export",
            "Export report",
            id="export",
            tooltip="Export report — write the Markdown report from the stored results",
        ),
        Binding(
            "i",
            "ship",
            "Ship check",
            id="ship",
            show=False,
            tooltip="Ship check — bundle the highlighted form, run it where only the bundle and /usr exist",
        ),
        Binding(
            "escape,x",
            "cancel",
            "Cancel run",
            id="cancel",
            show=False,
            tooltip="Cancel run — stop the measurement, build or ship check in flight",
        ),
        Binding(
            "question_mark", "help", "Help", key_display="?", id="help", tooltip="Help — deploytui's keys"
        ),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit-ctrl"),
    ]

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
        self.timeline_built: set[str] = set()  # forms whose `built` event the timeline has

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

    def timeline(self, event: str) -> None:
        path = os.environ.get(TIMELINE_ENV)
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"{time.monotonic_ns()} {event}\n")

    def on_unmount(self) -> None:
        self.session.shutdown()  # however the app went (also when run_test ends)

    # ---- actions --------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Off on a screen of fields (ctrl+p, ctrl+q and the screen's own keys still work)."""
        return not (getattr(self.screen, "TYPING", False) and action in TYPED_OVER)

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
        self.submit(Job(RUN, (key,), ws=self.session.ws))

    def action_run_all(self) -> None:
        if self._busy():
            return
        keys = self.session.runnable()
        if not keys:
            self.notify("No form is built yet: press b to build", severity="warning")
            return
        self.main.show_tab("run")
        self.submit(Job(RUN, tuple(keys), ws=self.session.ws))

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

    def action_open_model(self) -> None:
        from deploytui.views.tui.model_screen import ModelScreen

        if isinstance(self.screen, ModelScreen):
            return
        self.push_screen(ModelScreen(self.session.known_models(), self.session.model.text), self.open_model)

    def open_model(self, text: str | None) -> None:
        """Show the model `text` names: at once when it was built here, else after its check
        (a subprocess, in the lane) and then with its build in the background."""
        if not text:
            return
        try:
            ref = parse(text)
        except ModelRefError as e:
            self.notify(str(e), title="Not a model", severity="error", timeout=15)
            return
        why = self.session.open_check(ref)
        if why:
            self.notify(why, severity="warning")
            return
        from deploytui.spec import manifest

        if ref.text in manifest.built_models(self.session.ws.artifacts):
            self._switch(ref)
            return
        if self.session.lane.find(OPEN, model=ref):
            return  # asked already
        busy = self.session.lane.find(RUN, BUILD)
        self.notify(f"Checking {model_label(ref)}…" + (" once the job in flight ends" if busy else ""))
        self.submit(Job(OPEN, ws=self.session.ws.for_model(ref)))

    def _switch(self, ref: ModelRef, info: dict | None = None) -> None:
        self.session.switch(ref, info)
        self.main.refresh_all()
        self.notify(f"Showing {model_label(ref)}", title="Model")

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
        self.submit(Job(SERVE, ws=self.session.ws))

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
        from deploytui.views.tui import keys

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

    # ---- the job lane ---------------------------------------------------------------------
    def submit(self, job: Job) -> None:
        """Queue a job in the lane; it starts now if the lane is free."""
        self._launch(self.session.lane.submit(job))

    def _launch(self, job: Job | None) -> None:
        while job is not None and job.kind == INSPECT:
            key = self.session.inspect_target()
            if key is not None:
                job.keys, job.ws = (key,), self.session.ws  # what is shown when it starts
                self.main.show_waiting(key, f"Looking inside {key}…")
                break
            job = self.session.lane.finish(job)  # nothing left to look at: next one
        if job is not None and job.kind == BUILD and job.model is not None:
            self.session.builds[job.model.slug] = BuildProgress(job.model)
        if job is not None:
            self.run_worker(
                lambda: self._job_thread(job), thread=True, group="job", name=job.kind, exit_on_error=False
            )

    def _job_thread(self, job: Job) -> None:
        """A worker's whole life: the job's body, then JobEnded (always, also on error)."""
        body = {
            RUN: self._measure,
            BUILD: self._build,
            EXPORT: self._export,
            INSPECT: self._inspect,
            SWEEP: self._sweep,
            SHIP: self._ship,
            OPEN: self._open,
            SERVE: self._serve,
        }
        try:
            result, error = body[job.kind](job), ""
        except Exception as e:  # shown by the app, in one place
            result, error = None, f"{type(e).__name__}: {e}"
        self.post_message(msg.JobEnded(job, result, error))

    # the bodies run in the worker thread: they read the session's settings (which do not change
    # while a job runs) and the job's own workspace (the model shown may change), and post
    # messages for the rest
    def _measure(self, job: Job) -> tuple[int, int]:
        from deploytui.scenarios.startup import bench, results

        ws = job.ws
        assert ws is not None
        settings, done = self.session.settings, 0
        disk = results.ResultsStore(ws.results_path)  # written here, off the UI
        for key in job.keys:
            if job.cancel.is_set():
                break
            self.post_message(msg.RunStarted(key, settings.total, ws.slug))
            gate = ProgressGate(settings.total)

            def progress(p, key=key, gate=gate) -> None:
                if gate.admit(p):
                    self.post_message(msg.RunProgress(key, p, gate.finished, list(gate.walls), ws.slug))

            record = bench.bench_form(
                registry.get(key),
                n=settings.runs,
                warmup=settings.warmup,
                on_progress=progress,
                cancel=job.cancel,
                ws=ws,  # its manifest read there: the model shown may change meanwhile
                say=self._say,  # waiting for a step another deploytui is building
            )
            cancelled = job.cancel.is_set()
            if not cancelled:
                disk.put(record)  # under the store's lock; what other processes stored is kept
                try:  # the app's copy, on the app's thread, before the next form starts
                    self.call_from_thread(self.session.stored, ws.model, disk.doc)
                except RuntimeError:  # the app is gone
                    break
                done += 1
            self.post_message(msg.RunFinished(key, record, cancelled, ws.slug))
        return done, len(job.keys)

    def _say(self, line: str) -> None:
        """A worker's one-line note for the user."""
        try:
            self.call_from_thread(self.notify, line, severity="warning")
        except RuntimeError:  # the app is gone
            pass

    def _build(self, job: Job):
        from deploytui.builder import BuildEvent, run_build
        from deploytui.spec.context import BuildContext

        ws = job.ws
        assert ws is not None

        def on_event(e: BuildEvent) -> None:  # the manifest read here, off the app's thread
            state = ModelState.read(ws) if e.kind == "end" else None
            self.post_message(msg.BuildLine(e, ws.slug, state))

        view = run_build(BuildContext.of(ws), on_event=on_event, cancel=job.cancel)
        return view, ModelState.read(ws)

    def _open(self, job: Job) -> tuple[dict | None, str]:
        """The model's check (`deploytui.models.describe`, a subprocess that imports torch)."""
        from deploytui.models.check import check

        assert job.model is not None
        return check(job.model.text, job.cancel)

    def _sweep(self, job: Job) -> int:
        from deploytui.scenarios.sweep import sweep

        def on_event(e: sweep.SweepEvent) -> None:
            self.post_message(msg.SweepLine(e))

        assert job.ws is not None
        refs = [sweep.shape_for(t) for t in sweep.default_targets()]
        store = sweep.run_sweep(refs, base=job.ws, on_event=on_event, cancel=job.cancel)
        return len(store.points)

    def _serve(self, job: Job) -> int:
        """Build the dynamic-batch exports the cells need, then time every cell (serve.run_cells)."""
        from deploytui.builder import run_build
        from deploytui.scenarios.serving import serve
        from deploytui.scenarios.serving import store as serve_store
        from deploytui.spec import manifest
        from deploytui.spec.context import BuildContext

        ws = job.ws  # the model shown when it was asked, whatever is shown now
        assert ws is not None
        todo = serve.cells(list(registry.FORMS), defaults.SERVE_BATCHES, defaults.SERVE_THREADS)

        def post(e: serve.ServeEvent) -> None:
            self.post_message(msg.ServeLine(e))

        steps = serve.dynamic_steps(todo, ws)
        if steps:

            def on_build(e) -> None:
                if e.kind == "start":
                    post(
                        serve.ServeEvent(
                            "build", 0, len(todo), text=f"building {e.step} (dynamic-batch exports)"
                        )
                    )

            run_build(BuildContext.of(ws), only=steps, on_event=on_build, cancel=job.cancel)
        if job.cancel.is_set():
            return 0
        done = serve.run_cells(
            todo,
            repeat=defaults.SERVE_REPEAT,
            warmup=defaults.SERVE_WARMUP,
            timeout_s=defaults.RUN_TIMEOUT_S,
            manifest=manifest.load(ws),
            ws=ws,
            store=serve_store.load(ws),
            on_event=post,
            cancel=job.cancel,
            say=self._say,
        )
        return len(done)

    def _ship(self, job: Job):
        """The check, and its verdict put on the form's stored record (files: off the UI thread)."""
        from deploytui.scenarios.isolated import shipping
        from deploytui.scenarios.startup import bench, results

        ws = job.ws
        assert ws is not None
        form = registry.get(job.keys[0])
        check = shipping.check(form, ws=ws, cancel=job.cancel)
        disk = results.load(ws.results_path)
        rec = disk.forms.get(form.key)
        if rec is not None:
            rec.isolated = bench.isolated(form, ws)
            disk.put(rec)
        return check, disk.doc

    def _export(self, job: Job) -> Path:
        from deploytui.scenarios.startup import results
        from deploytui.spec import manifest
        from deploytui.views import report

        ws = job.ws  # the model shown when it was asked, whatever is shown now
        assert ws is not None
        return report.write_report(ws, results.load(ws.results_path), manifest.load(ws), "md")

    def _inspect(self, job: Job) -> tuple[list, str]:
        """Inspecting runs ldd, nm and the ONNX reader (the runtime facts were probed by the build): a job."""
        key, ws = job.keys[0], job.ws
        assert ws is not None
        try:
            from deploytui.spec import manifest
            from deploytui.views.form_view import sections
        except ImportError as e:
            return [], f"inspectors not available: {e}"
        try:
            return list(sections(registry.get(key), manifest.load(ws), ws)), ""
        except Exception as e:  # sections() should never raise; if it does, say so in place
            return [], f"inspecting {key} failed: {type(e).__name__}: {e}"

    def load_sections(self, key: str) -> None:
        """Make sure the inspector sections of `key` are known, or asked of the lane."""
        s = self.session
        if key in s.sections or not s.ready:  # the screen draws cached sections from the session
            return
        if s.lane.find(RUN, BUILD):
            self.main.show_waiting(
                key, "Looking inside waits until the job in flight ends (inspecting runs ldd and nm)."
            )
        self.submit(Job(INSPECT, ws=s.ws))

    # ---- messages from workers: one handler, one quitting guard ---------------------------
    @on(msg.JobMessage)
    def _from_worker(self, m: msg.JobMessage) -> None:
        if self.session.quitting:  # the screens may be half torn down
            return
        handle: Callable[[Any], None] = {  # type: ignore[assignment]
            msg.RunStarted: self._run_started,
            msg.RunProgress: self._run_progress,
            msg.RunFinished: self._run_finished,
            msg.BuildLine: self._build_line,
            msg.SweepLine: self._sweep_line,
            msg.ServeLine: self._serve_line,
            msg.JobEnded: self._job_ended,
        }[type(m)]
        handle(m)

    def _run_started(self, m: msg.RunStarted) -> None:
        if m.slug != self.session.model.slug:
            return  # a run of a model no longer shown: it records into that model's folder
        self.session.live = self.session.live_run(m.form, m.total)
        self.main.refresh_form(m.form)
        from deploytui.views.tui.widgets.form_list import FormList

        self.main.query_one("#forms", FormList).select_key(m.form)

    def _run_progress(self, m: msg.RunProgress) -> None:
        live = self.session.live
        if live is None or live.form != m.form or m.slug != self.session.model.slug:
            return
        live.update(m.progress, m.done, m.walls)
        self.main.show_live(m.form)

    def _run_finished(self, m: msg.RunFinished) -> None:
        rec = m.record
        if m.slug != self.session.model.slug:  # stored in its own model's folder by the worker
            if rec.status != "ok" or rec.error:
                self.notify(f"{m.form} ({rec.model}): {rec.error}", title="Run failed", severity="error")
            return
        self.session.live = None
        self.main.refresh_form(m.form)
        if m.cancelled:
            kept = "earlier result kept" if m.form in self.store.forms else "nothing stored"
            self.notify(f"{m.form}: cancelled, {kept}", severity="warning")
        elif rec.status != "ok" or rec.error:
            self.notify(
                f"{m.form}: {rec.error}",
                title="Run failed" if rec.status != "ok" else "Outputs differ",
                severity="error",
                timeout=10,
            )

    def _build_line(self, m: msg.BuildLine) -> None:
        s, e = self.session, m.event
        progress = s.builds.get(m.slug)
        if progress is not None:
            progress.update(e)
            if e.kind == "end":
                for form in registry.FORMS:
                    if form.key not in self.timeline_built and progress.state(form) == BUILT:
                        self.timeline_built.add(form.key)
                        self.timeline(f"built {form.key}")
        if m.slug == s.model.slug and e.kind in ("plan", "start", "end"):
            if m.state is not None:
                s.apply(m.state)  # rewritten after every step: the forms it finished show it
            self.main.refresh_all(inspect=False)
        for screen in self._build_screens():
            screen.add_event(e)

    def _sweep_line(self, m: msg.SweepLine) -> None:
        if m.event.kind in ("record", "skip", "done"):
            self.session.reload_sweep()
        for screen in self._scale_screens():
            screen.sweep_event(m.event)

    def _serve_line(self, m: msg.ServeLine) -> None:
        for screen in self._serve_screens():
            screen.serve_event(m.event)

    def _serve_screens(self) -> list:
        from deploytui.views.tui.serve_screen import ServeScreen

        return [s for s in self.screen_stack if isinstance(s, ServeScreen)]

    def _scale_screens(self) -> list:
        from deploytui.views.tui.scale_screen import ScaleScreen

        return [s for s in self.screen_stack if isinstance(s, ScaleScreen)]

    def _choose_screens(self) -> list:
        from deploytui.views.tui.choose_screen import ChooseScreen

        return [s for s in self.screen_stack if isinstance(s, ChooseScreen)]

    def _build_screens(self) -> list:
        from deploytui.views.tui.build_screen import BuildScreen

        return [s for s in self.screen_stack if isinstance(s, BuildScreen)]

    def _job_ended(self, m: msg.JobEnded) -> None:
        job, s = m.job, self.session
        nxt = s.lane.finish(job)
        cancelled = job.cancel.is_set()
        if job.kind == RUN:
            s.live = None
            if m.error:
                self._job_failed(job, m.error)
            elif len(job.keys) > 1:
                done, total = m.result
                self.notify(f"Ran {done}/{total} forms" + (" (cancelled)" if cancelled else ""))
            self.main.refresh_all()
        elif job.kind == BUILD:
            assert job.model is not None
            if job.model.slug in s.builds:
                s.builds[job.model.slug].done = True
            shown = job.model == s.model
            view, state = m.result or (None, None)
            if shown and state is not None:
                s.load_state(state)
                self.main.refresh_all()
            for screen in self._build_screens():
                screen.finished(view, cancelled, m.error)
            built = sum(not why for why in state.status.values()) if state else 0
            self.notify(
                m.error
                or f"Build of {model_label(job.model)} {'cancelled' if cancelled else 'done'}: "
                f"{built}/{len(registry.FORMS)} forms built"
                + ("" if shown else ": press m to show it"),
                severity="error" if m.error else "information",
            )
        elif job.kind == OPEN:
            assert job.model is not None
            info, error = m.result or (None, m.error)
            if cancelled:
                pass
            elif error:
                self.notify(
                    f"{model_label(job.model)}: {error}",
                    title="Cannot open this model",
                    severity="error",
                    timeout=20,
                )
            elif not (why := s.open_check(job.model)):
                self._switch(job.model, info)
                self.submit(Job(BUILD, ws=job.ws))
            else:
                self.notify(f"{model_label(job.model)} checked, not shown: {why}", severity="warning")
        elif job.kind == SWEEP:
            s.reload_sweep()
            s.load_state()
            self.main.refresh_all()
            for scale in self._scale_screens():
                scale.finished(cancelled, m.error)
            if m.error:
                self._job_failed(job, m.error)
        elif job.kind == SERVE:
            for served in self._serve_screens():
                served.finished(cancelled, m.error)
            if m.error:
                self._job_failed(job, m.error)
        elif job.kind == SHIP:
            self._shipped(job, m.result, m.error)
        elif job.kind == EXPORT:
            if m.error:
                self._job_failed(job, m.error)
            else:
                self.notify(f"Report written to {m.result}", title="Exported")
        elif job.kind == INSPECT and job.model == s.model:  # else: the model shown changed meanwhile
            key = job.keys[0]
            found, error = m.result or ([], m.error)
            if not error and not cancelled:
                s.sections[key] = found
            self.main.show_sections(key, found, error)
        if job.kind in (RUN, BUILD, SHIP, SERVE) and job.model == s.model:
            for screen in self._choose_screens():
                screen.read_facts()  # what it shows was stored by this job
        self._launch(nxt)
        if job.kind == INSPECT and (job.keys[0] != s.current or job.model != s.model):
            self.load_sections(s.current)  # the highlight moved on meanwhile

    def _shipped(self, job: Job, result, error: str) -> None:
        """A ship check ended: its verdict is on the form's record (stored by the worker), the
        Artifact tab's bundle section is read again."""
        key, s = job.keys[0], self.session
        if error or not result:
            self._job_failed(job, error or "no verdict")
            return
        fact, doc = result
        s.stored(job.model, doc)
        s.sections.pop(key, None)
        self.main.refresh_all()
        size = fact.compressed_bytes
        from deploytui.core.units import human

        what = f" — bundle {human(size)} .tar.gz" if size else ""
        if fact.passed:
            self.notify(f"{key} runs isolated{what}", title=f"Ship check {fact.glyph}")
        else:
            title = f"Ship check {fact.glyph}"
            self.notify(f"{key}: {fact.reason}{what}", title=title, severity="error", timeout=15)

    def _job_failed(self, job: Job, error: str) -> None:
        self.notify(f"{job.kind} failed: {error}", title="Error", severity="error", timeout=15)
