"""The job lane's side of the app: queueing jobs and the thread workers that run them.

Every job (run, build, export, inspect, opening a model) goes through the session's one
`JobLane`: one job at a time, in the order asked, each in a thread worker that gets its `Job`
(keys, cancel Event, model), posts `JobMessage`s and never touches widgets or the session.
Its last message, `JobEnded`, frees the lane and starts the next job (`outcomes.py` takes the
messages on the app's thread). Quitting closes the lane and cancels the job in flight, so the
measuring core (or the build) kills the running child's process group: nothing is left running.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App

from deploytui.core import defaults
from deploytui.families import registry
from deploytui.views.tui import messages as msg
from deploytui.views.tui.session import (
    BUILD,
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
)

if TYPE_CHECKING:
    from deploytui.views.tui.main_screen import MainScreen


class JobLaneApp(App):
    """The app's lane of jobs (`DeployApp` is one): `submit` queues, the workers run."""

    session: Session  # set by DeployApp
    main: MainScreen  # the default screen, made by DeployApp.get_default_screen

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

        if job.targets:
            return self._measure_everywhere(job)
        ws = job.ws
        assert ws is not None
        settings, done = self.session.settings, 0
        disk = results.ResultsStore(ws.results_on(job.target))  # written here, off the UI
        for key in job.keys:
            if job.cancel.is_set():
                break
            self.post_message(msg.RunStarted(key, settings.total, ws.slug))
            gate = ProgressGate(settings.total)

            def progress(p, key=key, gate=gate) -> None:
                if gate.admit(p):
                    self.post_message(msg.RunProgress(key, p, gate.finished, list(gate.walls), ws.slug))

            if job.target is not None:
                record = self._measure_there(job, key)  # stored there by the scenario
                disk.load()
            else:
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
                if job.target is None:
                    disk.put(record)  # under the store's lock; what other processes stored is kept
                try:  # the app's copy, on the app's thread, before the next form starts
                    self.call_from_thread(self.session.stored, ws.model, disk.doc, job.target)
                except RuntimeError:  # the app is gone
                    break
                done += 1
            self.post_message(msg.RunFinished(key, record, cancelled, ws.slug))
        return done, len(job.keys)

    def _measure_there(self, job: Job, key: str):
        """One form on the job's target (scenarios/remote: its bundle sent once, the runs there)."""
        from deploytui.launchers import targets
        from deploytui.scenarios.remote import bench as remote

        ws = job.ws
        assert ws is not None and job.target is not None
        target = targets.store(ws.targets_path).doc.targets.get(job.target)
        if target is None:
            from deploytui.scenarios.startup import bench
            from deploytui.spec.manifest import load

            return bench.not_run(registry.get(key), f"no target named {job.target}", load(ws), ws)
        settings = self.session.settings
        return remote.bench_form(
            registry.get(key), target, ws, n=settings.runs, warmup=settings.warmup, cancel=job.cancel
        )

    def _measure_everywhere(self, job: Job) -> tuple[int, int]:
        """The job's forms on each of its targets, the targets at once (scenarios.remote.fleet),
        each target's forms in turn; each record stored there by the scenario. Returns (forms
        that ran, forms asked) over every target."""
        from deploytui.launchers import targets
        from deploytui.scenarios.remote import bench as remote
        from deploytui.scenarios.remote import fleet
        from deploytui.scenarios.startup import results

        ws = job.ws
        assert ws is not None
        known = targets.store(ws.targets_path).doc.targets
        found = [known[name] for name in job.targets if name in known]
        settings, ran = self.session.settings, {t.name: 0 for t in found}

        def on(target: targets.Target) -> None:
            for i, key in enumerate(job.keys, 1):
                if job.cancel.is_set():
                    return
                place = (i, len(job.keys))
                self.post_message(msg.TargetRun(target.name, target.label, key, place, ws.slug))
                rec = remote.bench_form(
                    registry.get(key), target, ws, n=settings.runs, warmup=settings.warmup, cancel=job.cancel
                )
                doc = results.load(ws.results_on(target.name)).doc  # what the scenario stored there
                ran[target.name] += not job.cancel.is_set()
                self.post_message(msg.TargetRun(target.name, target.label, key, place, ws.slug, rec))
                try:
                    self.call_from_thread(self.session.stored, ws.model, doc, target.name)
                except RuntimeError:  # the app is gone
                    return

        for name, why in fleet.each_target(found, on).items():
            self.post_message(msg.TargetStopped(name, why))
        return sum(ran.values()), len(job.keys) * len(found)

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
        store = serve_store.load(ws, job.target)
        run = functools.partial(serve.run_cells, ws=ws)
        if job.target is not None:
            from deploytui.launchers import targets
            from deploytui.scenarios.remote import serve as remote

            target = targets.store(ws.targets_path).doc.targets.get(job.target)
            if target is None:
                self._say(f"no target named {job.target}")
                return 0
            run = functools.partial(remote.run_cells_on, target=target, ws=ws)
        done = run(
            todo,
            repeat=defaults.SERVE_REPEAT,
            warmup=defaults.SERVE_WARMUP,
            timeout_s=defaults.RUN_TIMEOUT_S,
            manifest=manifest.load(ws),
            store=store,
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
