"""The run record's field docs rendered for docs/: the Markdown tables of docs/json.md
(`field_table`) and the JSON Schema of docs/record.schema.json (`json_schema`, derived from the
fields' types); tests compare both with the files.

    python -m deploytui.core.record_docs            # the tables
    python -m deploytui.core.record_docs --schema   # the schema
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import StrEnum
from typing import Any

from deploytui.core.record import RunRecord
from deploytui.core.record_parts import (
    Accuracy,
    Element,
    Forwards,
    Isolated,
    OutputAccuracy,
    OutputDiff,
    TaskScore,
    Threads,
    Where,
)


def field_table(cls: type = RunRecord) -> str:
    """The Markdown table of a record type's JSON fields and their meaning (docs/json.md holds it)."""
    lines = ["| field | meaning |", "|---|---|"]
    lines += [f"| `{f.name}` | {f.metadata['doc']} |" for f in dataclasses.fields(cls)]
    return "\n".join(lines)


SCHEMA_TYPES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


def _type_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one annotation: a scalar, a string enum, `X | None`, `list[X]`,
    `dict[str, X]` or one of the record's dataclasses (a reference to its definition)."""
    if hint in SCHEMA_TYPES:
        return dict(SCHEMA_TYPES[hint])
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return {"type": "string", "enum": [m.value for m in hint]}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return {"$ref": f"#/$defs/{hint.__name__}"}
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin is list:
        return {"type": "array", "items": _type_schema(args[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(args[1])}
    if origin in (types.UnionType, typing.Union):
        return {"anyOf": [_type_schema(a) for a in args]}
    raise TypeError(f"no JSON Schema for {hint!r}")


def _object_schema(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    return {
        "type": "object",
        "description": " ".join((cls.__doc__ or "").split()),
        "properties": {
            f.name: {**_type_schema(hints[f.name]), "description": f.metadata["doc"]} for f in fields
        },
        "required": [f.name for f in fields],
    }


def json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the record's JSON object, from the fields' types and docs
    (docs/record.schema.json holds it; a test compares). Non-finite floats are written as
    `Infinity`/`NaN`, which JSON proper has no number for."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "deploytui RunRecord",
        **_object_schema(RunRecord),
        "$defs": {
            cls.__name__: _object_schema(cls)
            for cls in (
                OutputDiff,
                Element,
                Isolated,
                Forwards,
                Threads,
                Accuracy,
                OutputAccuracy,
                TaskScore,
                Where,
            )
        },
    }


if __name__ == "__main__":  # [--schema]: the tables / the schema for docs/ (the docstring)
    import json
    import sys

    if sys.argv[1:] == ["--schema"]:
        print(json.dumps(json_schema(), indent=2, ensure_ascii=False))
    else:
        tables = (
            RunRecord,
            OutputDiff,
            Isolated,
            Forwards,
            Threads,
            Accuracy,
            OutputAccuracy,
            TaskScore,
            Where,
        )
        print(*(field_table(t) for t in tables), sep="\n\n")
