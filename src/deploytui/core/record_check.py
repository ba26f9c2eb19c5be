"""Checking a record's JSON: each field's doc and check (`field_doc`), the checks themselves, and
reading a record type's fields from a JSON object (`read_fields`, `from_checked`), raising
RecordError, a ValueError naming the first field that is wrong.

Standard library only: the app imports the record before its first frame.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class RecordError(ValueError):
    """A record (or one of its output diffs) that cannot be used; `field` names the first wrong field."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


def is_num(v: object) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def is_int(v: object) -> bool:
    return isinstance(v, int)


def is_ints(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(x, int) for x in v)


def is_str(v: object) -> bool:
    return isinstance(v, str)


def is_strs(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def is_bool(v: object) -> bool:
    return isinstance(v, bool)


def is_counts(v: object) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(n, int) for k, n in v.items())


def is_matrix(v: object) -> bool:
    """A non-empty rectangular list of rows of finite numbers (logits, per-element diffs)."""
    return (
        isinstance(v, list)
        and bool(v)
        and all(isinstance(r, list) and len(r) == len(v[0]) for r in v)
        and all(is_num(x) for r in v for x in r)
    )


def field_doc(doc: str, check: Callable[[object], bool]) -> dict[str, Any]:
    """A field's metadata: its meaning (for the README table) and what its JSON value must be when
    it is not null."""
    return {"doc": doc, "check": check}


def is_float(v: object) -> bool:
    """Any number, infinities and NaN included (a form's output may hold them)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_samples(v: object) -> bool:
    return isinstance(v, list) and all(is_num(x) and x >= 0 for x in v)


def is_opt_float(v: object) -> bool:
    return v is None or is_float(v)


def read_fields(cls: type, data: object, where: str) -> dict[str, Any]:
    """The values of a record type's fields in a JSON object (absent ones left out, other keys
    ignored), each checked by its field's `check`; RecordError when one is wrong, naming `where`
    (the record's field in its parent) or else the wrong field itself."""
    if not isinstance(data, dict):
        raise RecordError(where, f"{where or 'entry'!r} is not an object")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        v = data.get(f.name)
        if v is None:
            continue
        if not f.metadata["check"](v):
            name = where or f.name
            raise RecordError(name, f"field {name!r} is malformed")
        values[f.name] = v
    return values


def from_checked(cls: type[T], data: object, required: str, **convert: Callable[[Any], Any]) -> T:
    """A flat record (manifest step or artifact, ship check) from a JSON object: its fields checked
    (`read_fields`), `required` present, `convert` applied to the named values."""
    values = read_fields(cls, data, "")
    if required not in values:
        raise RecordError(required, f"field {required!r} missing")
    for name, conv in convert.items():
        if name in values:
            values[name] = conv(values[name])
    return cls(**values)


def legacy_verdict(data: dict[str, Any]) -> dict[str, Any]:
    """ship.json and results.json written before verdicts were booleans held `"verdict": "✓"`."""
    if "passed" not in data and data.get("verdict") in ("✓", "✗"):
        return {**data, "passed": data["verdict"] == "✓"}
    return data
