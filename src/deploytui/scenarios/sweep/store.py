"""The sweep's store: artifacts/sweep.json, one `Point` per size of the mlp family, written after
every form; a `store.Store` like results.json (a damaged point is dropped and said, the file as it
was kept beside it; `put` under the lock). Light: the app, the fit and the report read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from deploytui.core.modelref import parse
from deploytui.core.record import RunRecord
from deploytui.core.record_check import RecordError
from deploytui.core.store import Store
from deploytui.core.workspace import SWEEP as NAME

VERSION = 1
F32 = 4


def _nums(v: object, kind: type | tuple[type, ...] = (int, float)) -> bool:
    return isinstance(v, dict) and all(
        isinstance(k, str) and isinstance(x, kind) and not isinstance(x, bool) for k, x in v.items()
    )


@dataclass
class Point:
    """One size of the sweep: the model, its parameter count, and per form the build's cost (from
    the manifest: seconds of its model steps, bytes of what ships; the build's peak memory as the
    sweep saw it) and the RunRecord. `notes` says per form why it ran fewer times."""

    model: str
    params: int
    records: dict[str, RunRecord] = field(default_factory=dict)
    build_s: dict[str, float] = field(default_factory=dict)
    ship_bytes: dict[str, int] = field(default_factory=dict)
    build_peak_rss: dict[str, int] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def weight_bytes(self) -> int:
        return self.params * F32

    @property
    def slug(self) -> str:
        return parse(self.model).slug

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "params": self.params,
            "records": {k: r.to_json() for k, r in self.records.items()},
            "build_s": self.build_s,
            "ship_bytes": self.ship_bytes,
            "build_peak_rss": self.build_peak_rss,
            "notes": self.notes,
        }

    @classmethod
    def from_json(cls, data: object) -> Point:
        """The point a JSON object holds; RecordError names the first wrong field."""
        if not isinstance(data, dict):
            raise RecordError("", "not an object")
        if not isinstance(data.get("model"), str):
            raise RecordError("model", "field 'model' missing or not a str")
        if not isinstance(data.get("params"), int) or data["params"] < 1:
            raise RecordError("params", "field 'params' missing or not a positive int")
        checks: dict[str, Callable[[object], bool]] = {
            "build_s": _nums,
            "ship_bytes": lambda v: _nums(v, int),
            "build_peak_rss": lambda v: _nums(v, int),
            "notes": lambda v: _nums(v, str),
            "records": lambda v: isinstance(v, dict),
        }
        for name, check in checks.items():
            if not check(data.get(name, {})):
                raise RecordError(name, f"field {name!r} is malformed")
        recs = {}
        for key, value in data.get("records", {}).items():
            rec = RunRecord.from_json(value)
            if rec.form != key:
                raise RecordError("records", f"record {key!r} names form {rec.form!r}")
            recs[key] = rec
        return cls(
            data["model"],
            data["params"],
            recs,
            dict(data.get("build_s", {})),
            dict(data.get("ship_bytes", {})),
            dict(data.get("build_peak_rss", {})),
            dict(data.get("notes", {})),
        )


@dataclass
class Sweep:
    """What sweep.json holds: the points, by model text."""

    VERSION: ClassVar[int] = VERSION
    NAME: ClassVar[str] = "sweep points"
    points: dict[str, Point] = field(default_factory=dict)

    @classmethod
    def empty(cls) -> Sweep:
        return cls()

    @classmethod
    def read(cls, data: dict[str, Any]) -> tuple[Sweep, list[str]]:
        if not isinstance(data.get("points"), list):
            return cls(), [f"{NAME} has no 'points' list, starting empty"]
        found, problems = cls(), []
        for i, value in enumerate(data["points"]):
            try:
                point = Point.from_json(value)
            except RecordError as e:
                name = f" ({value['model']!r})" if isinstance(value, dict) and "model" in value else ""
                problems.append(f"sweep point {i}{name} dropped: {e}")
            else:
                found.points[point.model] = point
        return found, problems

    def ordered(self) -> list[Point]:
        return sorted(self.points.values(), key=lambda p: p.params)

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "points": [p.to_json() for p in self.ordered()]}


class SweepStore(Store[Sweep]):
    def __init__(self, path: Path) -> None:
        super().__init__(path, Sweep)

    @property
    def points(self) -> dict[str, Point]:
        return self.doc.points

    def ordered(self) -> list[Point]:
        return self.doc.ordered()

    def put(self, point: Point) -> None:
        """Add or replace one size's point and write the file at once."""
        self.update(lambda doc: doc.points.__setitem__(point.model, point))


def load(path: Path) -> SweepStore:
    """What sweep.json holds (`Workspace.sweep_path`); a damaged point is dropped and said in
    `dropped` (the file as it was is kept beside it, as results.json's is)."""
    return SweepStore(path).load()
