"""The results store: one JSON file per model (artifacts/<slug>/results.json), replaced atomically
after every form.

The app, the CLI and the report all read it. Each record is a RunRecord (deploytui.record), whose
`from_json` checks every field. A damaged file never stops anything: `load` returns what it could
read and says what it dropped (the unreadable file is kept beside it).
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from deploytui import jsonio, paths
from deploytui.record import RecordError, RunRecord

VERSION = 1


@dataclass
class Store:
    path: Path
    forms: dict[str, RunRecord] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)  # what could not be read, for the user

    def put(self, record: RunRecord) -> None:
        """Add or replace one form's record and write the file at once (atomic replace)."""
        if record.form is None:
            raise ValueError("only a form's record is stored (this one measured a plain command)")
        self.forms[record.form] = record
        self.write()

    def write(self) -> None:
        forms = {key: rec.to_json() for key, rec in self.forms.items()}
        jsonio.write_atomic(self.path, {"version": VERSION, "forms": forms})


def load(path: Path | None = None) -> Store:
    """What the file holds. Anything unreadable is reported in `dropped`; the file is then kept
    beside itself (results.json.damaged-<time>) and rewritten with what could be read, so nothing
    is lost and the next start is clean."""
    path = path or paths.results_path()
    store = Store(path)
    if not path.exists():
        return store
    try:
        data = jsonio.read(path)
    except (OSError, ValueError) as e:
        data, why = None, f"{path.name} could not be read ({type(e).__name__}: {e})"
    else:
        why = (
            ""
            if isinstance(data, dict) and isinstance(data.get("forms"), dict)
            else f"{path.name} has no 'forms' table"
        )
    if why:
        store.dropped.append(why + ", starting empty")
    else:
        for key, value in data["forms"].items():
            rec, problem = _read(key, value)
            if rec is None:
                store.dropped.append(f"result for {key!r} dropped: {problem}")
            else:
                store.forms[key] = rec
    if store.dropped:
        store.dropped.append(_set_aside(store))
    return store


def _set_aside(store: Store) -> str:
    backup = store.path.with_name(f"{store.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        shutil.copyfile(store.path, backup)
        store.write()
    except OSError as e:
        return f"could not set the damaged file aside ({e})"
    return f"the file as it was is kept as {backup.name}"


def _read(key: str, value: object) -> tuple[RunRecord | None, str]:
    """The stored record, or None and why it cannot be used."""
    if isinstance(value, dict) and not isinstance(value.get("form"), str):
        return None, "field 'form' missing or not a str"  # a plain command's record is never stored
    try:
        rec = RunRecord.from_json(value)
    except RecordError as e:
        return None, str(e)
    if rec.form != key:
        return None, f"names form {rec.form!r}"
    if rec.outputs:
        fresh = (max(d.max_abs for d in rec.outputs), all(d.within_tol for d in rec.outputs))
        if fresh != (rec.max_abs_diff, rec.within_tol):
            return None, "its max_abs_diff / within_tol do not match its outputs"
    return rec, ""
