"""The results store: one JSON file per model (artifacts/<slug>/results.json), one RunRecord per
form, written after every form.

The app, the CLI and the report all read it. Each record is a RunRecord (deploytui.core.record), whose
`from_json` checks every field. It is a `store.Store`: a damaged file never stops anything (what
could be read is kept, what was dropped is said, the file as it was is kept beside it), and
`put` reads the file again under the lock, so two benches of one model at once keep both.
"""

from __future__ import annotations

from pathlib import Path

from deploytui.core.record import RunRecord
from deploytui.core.record_check import RecordError
from deploytui.core.store import FormStore, FormTable


class Results(FormTable[RunRecord]):
    """What results.json holds: form key -> its last record."""

    NAME = "result"

    @classmethod
    def entry(cls, key: str, value: object) -> RunRecord:
        return _read(key, value)


class ResultsStore(FormStore[RunRecord]):
    def __init__(self, path: Path) -> None:
        super().__init__(path, Results)

    def put(self, record: RunRecord) -> None:
        """Add or replace one form's record and write the file at once."""
        if record.form is None:
            raise ValueError("only a form's record is stored (this one measured a plain command)")
        self.put_entry(record.form, record)


def load(path: Path) -> ResultsStore:
    """What the file holds (`dropped` says what could not be read)."""
    return ResultsStore(path).load()


def _read(key: str, value: object) -> RunRecord:
    """The stored record; RecordError (a ValueError) says why it cannot be used."""
    if isinstance(value, dict) and not isinstance(value.get("form"), str):
        raise RecordError("form", "field 'form' missing or not a str")  # a plain command's is never stored
    rec = RunRecord.from_json(value)
    if rec.form != key:
        raise RecordError("form", f"names form {rec.form!r}")
    if rec.outputs:
        fresh = (max(d.max_abs for d in rec.outputs), all(d.within_tol for d in rec.outputs))
        if fresh != (rec.max_abs_diff, rec.within_tol):
            raise RecordError("outputs", "its max_abs_diff / within_tol do not match its outputs")
    return rec
