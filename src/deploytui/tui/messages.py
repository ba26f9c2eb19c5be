"""Messages that thread workers post to the app (workers never touch widgets)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from deploytui.record import RunRecord


class RunStarted(Message):
    def __init__(self, form: str, total: int) -> None:
        super().__init__()
        self.form = form
        self.total = total  # warm-up + counted runs


class RunProgress(Message):
    def __init__(self, form: str, progress, done: int, walls: list[float]) -> None:
        super().__init__()
        self.form = form
        self.progress = progress  # measure.Progress
        self.done = done  # runs finished so far (warm-up included)
        self.walls = walls  # wall times of the counted runs that were ok so far


class RunFinished(Message):
    def __init__(self, form: str, record: RunRecord, cancelled: bool) -> None:
        super().__init__()
        self.form = form
        self.record = record
        self.cancelled = cancelled


class RunAllDone(Message):
    def __init__(self, done: int, total: int, cancelled: bool) -> None:
        super().__init__()
        self.done = done
        self.total = total
        self.cancelled = cancelled


class BuildLine(Message):
    def __init__(self, event) -> None:
        super().__init__()
        self.event = event  # build.BuildEvent


class BuildDone(Message):
    def __init__(self, manifest: dict, cancelled: bool, error: str = "") -> None:
        super().__init__()
        self.manifest = manifest
        self.cancelled = cancelled
        self.error = error


class SectionsReady(Message):
    def __init__(self, form: str, sections: list, error: str = "") -> None:
        super().__init__()
        self.form = form
        self.sections = sections
        self.error = error
