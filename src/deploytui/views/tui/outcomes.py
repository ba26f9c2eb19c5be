"""What the app does with its workers' messages, on its own thread: the live run, the build's
rows, the screens that follow a job (build, scale, serve, choose), and each job's end.

All of them come through one handler with one quitting guard; `JobEnded`, the last message of
every job, frees the lane and starts the next job.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from textual import on

from deploytui.families import registry
from deploytui.views.tui import messages as msg
from deploytui.views.tui.models import ModelsApp
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
    Job,
    TargetProgress,
    model_label,
)

# a file the app appends "<CLOCK_MONOTONIC ns> <event>" lines to: `ready` at its first frame,
# `built FORM` when a build it runs finishes a form (bench/fresh_setup.py times `make run` with it)
TIMELINE_ENV = "DEPLOYTUI_TIMELINE"


class OutcomesApp(ModelsApp):
    """The workers' messages taken on the app's thread (`DeployApp` is one)."""

    timeline_built: set[str]  # forms whose `built` event the timeline has (set by DeployApp)

    def timeline(self, event: str) -> None:
        """Note `event` in the timeline file, when `DEPLOYTUI_TIMELINE` names one."""
        path = os.environ.get(TIMELINE_ENV)
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"{time.monotonic_ns()} {event}\n")

    # ---- messages from workers: one handler, one quitting guard ---------------------------
    @on(msg.JobMessage)
    def _from_worker(self, m: msg.JobMessage) -> None:
        if self.session.quitting:  # the screens may be half torn down
            return
        handle: Callable[[Any], None] = {  # type: ignore[assignment]
            msg.RunStarted: self._run_started,
            msg.RunProgress: self._run_progress,
            msg.RunFinished: self._run_finished,
            msg.TargetRun: self._target_run,
            msg.TargetStopped: self._target_stopped,
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
            kept = "earlier result kept" if m.form in self.session.store.forms else "nothing stored"
            self.notify(f"{m.form}: cancelled, {kept}", severity="warning")
        elif rec.status != "ok" or rec.error:
            self.notify(
                f"{m.form}: {rec.error}",
                title="Run failed" if rec.status != "ok" else "Outputs differ",
                severity="error",
                timeout=10,
            )

    def _target_run(self, m: msg.TargetRun) -> None:
        """A run on every target: that target's line, and the form's row when it is shown."""
        s = self.session
        p = s.fleet.setdefault(m.target, TargetProgress(m.label, m.total))
        p.form, p.index = m.form, m.index
        if m.record is not None:
            p.ended += 1
            p.failed += m.record.status != "ok" or bool(m.record.error)
            if m.target == s.target and m.slug == s.model.slug:
                self.main.refresh_form(m.form)
        self.main.show_fleet()

    def _target_stopped(self, m: msg.TargetStopped) -> None:
        p = self.session.fleet.get(m.target)
        if p is None:
            p = self.session.fleet[m.target] = TargetProgress(m.target, 0)
        p.stopped = m.why
        self.main.show_fleet()

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
            elif len(job.keys) > 1 or job.targets:
                done, total = m.result
                where = f" on {len(job.targets)} targets" if job.targets else ""
                self.notify(f"Ran {done}/{total} forms{where}" + (" (cancelled)" if cancelled else ""))
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
            self._opened(job, m.result, m.error)
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
