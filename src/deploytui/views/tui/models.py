"""Which model the app shows, and opening another (key m, the palette's "Open model …").

The app shows one model at a time (`session.model`). A model built here is shown at once; one
never built here is checked first (a job of the lane: `deploytui.models.check` in a subprocess,
one clear message if it cannot be used), then shown and built in the background while the app
stays usable; each form's row follows its build steps (waiting, building…, ✓ built, or the stage
that failed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deploytui.core.modelref import ModelRef, ModelRefError, parse
from deploytui.views.tui.jobs import JobLaneApp
from deploytui.views.tui.session import BUILD, OPEN, RUN, Job, model_label

if TYPE_CHECKING:
    from deploytui.core.dataref import DataRef

DATA_FLAG = " --data "  # typed after the model in the picker: `REF --data SPEC`


class ModelsApp(JobLaneApp):
    """Opening and switching models (`DeployApp` is one)."""

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
        from deploytui.core.dataref import DataRefError
        from deploytui.core.dataref import parse as parse_data

        text, _, data_text = text.partition(DATA_FLAG)
        try:
            ref = parse(text)
            data = parse_data(data_text.strip()) if data_text.strip() else None
        except (ModelRefError, DataRefError) as e:
            self.notify(
                str(e), title="Not a model" if data_text == "" else "Not usable", severity="error", timeout=15
            )
            return
        if data is not None and (why := data.problem()):
            self.notify(why, title="Not data", severity="error", timeout=15)
            return
        why = self.session.open_check(ref)
        if why:
            self.notify(why, severity="warning")
            return
        from deploytui.spec import manifest

        if ref.text in manifest.built_models(self.session.ws.artifacts):
            self._switch(ref, data=data)
            if data is not None:  # its evaluation and calibration sets from the data: rebuilt
                self.submit(Job(BUILD, ws=self.session.ws))
            return
        if self.session.lane.find(OPEN, model=ref):
            return  # asked already
        busy = self.session.lane.find(RUN, BUILD)
        self.notify(f"Checking {model_label(ref)}…" + (" once the job in flight ends" if busy else ""))
        self.submit(Job(OPEN, ws=self.session.ws.for_model(ref).with_data(data)))

    def action_pick_target(self) -> None:
        from deploytui.views.tui.target_screen import HERE, TargetScreen

        if isinstance(self.screen, TargetScreen):
            return
        shown = self.session.target or HERE
        self.push_screen(TargetScreen(self.session.known_targets(), shown), self.show_target)

    def show_target(self, name: str | None) -> None:
        """Show (and run on) `name`, or this machine."""
        from deploytui.views.tui.target_screen import HERE

        if name is None:
            return
        if self.session.lane.find(RUN):
            self.notify("A run is in flight: pick the target once it ends", severity="warning")
            return
        self.session.show_target(None if name == HERE else name)
        self.main.refresh_all()
        self.notify(f"Figures {'on ' + name if name != HERE else 'of this machine'}", title="Target")

    def _switch(self, ref: ModelRef, info: dict | None = None, data: DataRef | None = None) -> None:
        self.session.switch(ref, info, data)
        self.main.refresh_all()
        self.notify(f"Showing {model_label(ref)}", title="Model")

    def _opened(self, job: Job, result, error: str) -> None:
        """A model's check ended: show it and build it in the background, or say why not."""
        assert job.model is not None
        info, error = result or (None, error)
        if job.cancel.is_set():
            return
        if error:
            self.notify(
                f"{model_label(job.model)}: {error}",
                title="Cannot open this model",
                severity="error",
                timeout=20,
            )
        elif not (why := self.session.open_check(job.model)):
            self._switch(job.model, info, job.ws.data if job.ws is not None else None)
            self.submit(Job(BUILD, ws=job.ws))
        else:
            self.notify(f"{model_label(job.model)} checked, not shown: {why}", severity="warning")
