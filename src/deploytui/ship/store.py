"""A model's ship.json (artifacts/<slug>/ship.json, `Workspace.ship_path`): each form's last isolated
check (`ShipCheck`: passed or not and why, the bundle's sizes, the sandboxed runs' start-up and
peak RSS), kept next to its results.json. A `store.Store` like the others: a damaged entry is
dropped and said, every other form's verdict kept. Nothing run: the report and the app read it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deploytui.core.record_check import from_checked, legacy_verdict
from deploytui.core.record_parts import Isolated
from deploytui.core.store import FormStore, FormTable


def _is(kind: type | tuple[type, ...]) -> dict[str, Any]:
    return {"check": lambda v: isinstance(v, kind) and not (isinstance(v, bool) and kind is not bool)}


def _list_of(kind: type) -> dict[str, Any]:
    return {"check": lambda v: isinstance(v, list) and all(isinstance(x, kind) for x in v)}


NUM = (int, float)


@dataclass
class ShipCheck:
    """One form's isolated check (`shipping.check`, `deploytui ship FORM --check`)."""

    passed: bool = field(metadata=_is(bool))  # ran isolated, outputs within tolerance
    model: str = field(default="", metadata=_is(str))
    bundle: str = field(default="", metadata=_is(str))  # the bundle folder checked
    checked_at: str = field(default="", metadata=_is(str))  # shipping.check stamps it
    reason: str = field(default="", metadata=_is(str))  # why not: the loader's or program's line
    unpacked_bytes: int | None = field(default=None, metadata=_is(int))
    compressed_bytes: int | None = field(default=None, metadata=_is(int))  # .tar.gz: what ships
    files: int | None = field(default=None, metadata=_is(int))
    libraries: list[str] = field(default_factory=list, metadata=_list_of(str))  # the bundle's lib/
    cuda_bytes: int | None = field(default=None, metadata=_is(int))
    cuda_compressed_bytes: int | None = field(default=None, metadata=_is(int))
    venv_bytes: int | None = field(default=None, metadata=_is(int))  # Python: the venv made on the target
    setup_s: float | None = field(default=None, metadata=_is(NUM))
    startup_median_s: float | None = field(default=None, metadata=_is(NUM))
    peak_rss_median_bytes: float | None = field(default=None, metadata=_is(NUM))
    max_abs_diff: float | None = field(default=None, metadata=_is(NUM))
    stages_ms: dict[str, float] | None = field(default=None, metadata=_is(dict))
    sandbox_floor_s: float | None = field(default=None, metadata=_is(NUM))  # bwrap + /usr/bin/true
    n: int = field(default=0, metadata=_is(int))
    stderr_tail: list[str] = field(default_factory=list, metadata=_list_of(str))
    emulated: bool = field(default=False, metadata=_is(bool))  # run under qemu-user: timings not the device's

    @property
    def glyph(self) -> str:
        return "✓" if self.passed else "✗"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: object) -> ShipCheck:
        """A ship.json entry (before verdicts were booleans too); RecordError names the wrong field."""
        return from_checked(cls, legacy_verdict(data) if isinstance(data, dict) else data, "passed")

    def isolated(self) -> Isolated:
        """What a RunRecord carries of it."""
        return Isolated(
            passed=self.passed,
            reason=self.reason or None,
            unpacked_bytes=self.unpacked_bytes,
            compressed_bytes=self.compressed_bytes,
            venv_bytes=self.venv_bytes,
            startup_median_s=self.startup_median_s,
            peak_rss_median_bytes=int(self.peak_rss_median_bytes)
            if self.peak_rss_median_bytes is not None
            else None,
            max_abs_diff=self.max_abs_diff,
            checked_at=self.checked_at or None,
        )


class ShipChecks(FormTable[ShipCheck]):
    """What ship.json holds: form key -> its last check."""

    NAME = "ship verdict"

    @classmethod
    def entry(cls, key: str, value: object) -> ShipCheck:
        return ShipCheck.from_json(value)


class ShipStore(FormStore[ShipCheck]):
    def __init__(self, path: Path) -> None:
        super().__init__(path, ShipChecks)

    def put(self, key: str, check: ShipCheck) -> None:
        """Add or replace one form's verdict (the others' are read again and kept)."""
        self.put_entry(key, check)


def load(path: Path) -> ShipStore:
    """form key → its last check; a damaged entry is dropped (said in `dropped`), the rest kept."""
    return ShipStore(path).load()


def put(path: Path, key: str, check: ShipCheck) -> None:
    ShipStore(path).put(key, check)
