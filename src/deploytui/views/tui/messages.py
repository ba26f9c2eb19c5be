"""Messages that thread workers post to the app (workers never touch widgets).

Every one is a `JobMessage`: the app takes them all in one handler, which drops them once the
app is quitting (its screens may be half torn down by then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from deploytui.core.record import RunRecord


class JobMessage(Message):
    """From a job's worker thread to the app."""


class RunStarted(JobMessage):
    def __init__(self, form: str, total: int, slug: str) -> None:
        super().__init__()
        self.form = form
        self.total = total  # warm-up + counted runs
        self.slug = slug  # the model the run is for (maybe no longer the one shown)


class RunProgress(JobMessage):
    def __init__(self, form: str, progress, done: int, walls: list[float], slug: str) -> None:
        super().__init__()
        self.form = form
        self.slug = slug
        self.progress = progress  # measure.Progress
        self.done = done  # runs finished so far (warm-up included)
        self.walls = walls  # wall times of the counted runs that were ok so far


class RunFinished(JobMessage):
    def __init__(self, form: str, record: RunRecord, cancelled: bool, slug: str) -> None:
        super().__init__()
        self.form = form
        self.slug = slug
        self.record = record
        self.cancelled = cancelled


class TargetRun(JobMessage):
    """A run on every target (A): one target started a form (`record` None) or ended it."""

    def __init__(
        self,
        target: str,
        label: str,
        form: str,
        place: tuple[int, int],
        slug: str,
        record: RunRecord | None = None,
    ) -> None:
        super().__init__()
        self.target = target  # the target's name
        self.label = label  # how a line names it (launchers.targets.Target.label)
        self.form = form
        self.index, self.total = place  # the form's place in the target's turn (from 1), and its forms
        self.slug = slug  # the model the run is for
        self.record = record  # stored there by the scenario


class TargetStopped(JobMessage):
    """A run on every target (A): one target stopped before its last form (its work raised)."""

    def __init__(self, target: str, why: str) -> None:
        super().__init__()
        self.target = target
        self.why = why


class BuildLine(JobMessage):
    def __init__(self, event, slug: str, state=None) -> None:
        super().__init__()
        self.event = event  # builder.BuildEvent
        self.slug = slug  # the model being built
        self.state = state  # session.ModelState read after a step ended (by the worker)


class SweepLine(JobMessage):
    def __init__(self, event) -> None:
        super().__init__()
        self.event = event  # sweep.SweepEvent


class ServeLine(JobMessage):
    def __init__(self, event) -> None:
        super().__init__()
        self.event = event  # serve.ServeEvent


class JobEnded(JobMessage):
    """The last message of every job: what its body returned, or the error it raised."""

    def __init__(self, job, result=None, error: str = "") -> None:
        super().__init__()
        self.job = job  # session.Job
        self.result = result
        self.error = error
