"""One store type for every JSON file deploytui keeps: a model's manifest (and the shared one),
its results.json and ship.json, the sweep's sweep.json. Each file holds one document (a
dataclass with a checked `read`, like `RunRecord.from_json`), and every file behaves the same:

- written by atomic replace (a temp file in the same folder, then renamed): a reader never sees
  half a file, a crash keeps the previous one;
- read with every readable entry kept: what could not be read is said in `dropped` (one line
  each), and the damaged file is set aside once (`NAME.damaged-<time>`) and rewritten with what
  was readable, so nothing is lost and the next read is clean;
- changed under a lock across processes (`locks.store_lock`): `update` reads the file again,
  applies the change and writes it, so two processes adding entries at once (two benches, a
  build and the app) keep both.

Standard library and filelock only: the app reads its stores before its first frame.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

from deploytui.core import jsonio
from deploytui.core.locks import store_lock


class Document(Protocol):
    """What one store file holds."""

    VERSION: ClassVar[int]
    NAME: ClassVar[str]  # what the file is, for messages ("results", "ship verdicts", ...)

    @classmethod
    def empty(cls) -> Self: ...

    @classmethod
    def read(cls, data: dict[str, Any]) -> tuple[Self, list[str]]:
        """What a parsed file holds: the readable entries, and one line per entry dropped."""
        ...

    def to_json(self) -> dict[str, Any]:
        """The file's content (with "version")."""
        ...


D = TypeVar("D", bound=Document)
E = TypeVar("E")


class Store(Generic[D]):
    """One JSON file holding a document of type `kind`. `doc` is what was read or last written;
    `dropped` says what of the file could not be read (empty when it was whole)."""

    def __init__(self, path: Path, kind: type[D]) -> None:
        self.path = path
        self.kind = kind
        self.doc: D = kind.empty()
        self.dropped: list[str] = []

    def load(self) -> Self:
        """Read the file now (a missing file is an empty document). A damaged one is set aside
        once and rewritten with what was readable, under the lock."""
        doc, problems = self._parse()
        if problems:
            with store_lock(self.path):
                doc, problems = self._parse()  # another process may have set it aside meanwhile
                if problems:
                    problems.append(self._set_aside(doc))
        self.doc, self.dropped = doc, problems
        return self

    def update(self, change: Callable[[D], None]) -> None:
        """Read the file again, `change` its document and write it, all under the lock: what
        other processes wrote meanwhile is kept. `doc` is then what the file holds."""
        with store_lock(self.path):
            doc, problems = self._parse()
            if problems:
                problems.append(self._set_aside(doc))
                self.dropped = problems
            change(doc)
            jsonio.write_atomic(self.path, doc.to_json())
        self.doc = doc

    def write(self, doc: D) -> None:
        """Replace the whole document (under the lock)."""
        with store_lock(self.path):
            jsonio.write_atomic(self.path, doc.to_json())
        self.doc = doc

    def _parse(self) -> tuple[D, list[str]]:
        name = self.path.name
        try:
            data = jsonio.read(self.path)
        except FileNotFoundError:
            return self.kind.empty(), []
        except (OSError, ValueError) as e:
            return self.kind.empty(), [f"{name} could not be read ({type(e).__name__}: {e}), starting empty"]
        if not isinstance(data, dict):
            return self.kind.empty(), [f"{name} is not a JSON object, starting empty"]
        if data.get("version") != self.kind.VERSION:
            why = f"{name} has version {data.get('version')!r}, not {self.kind.VERSION}, starting empty"
            return self.kind.empty(), [why]
        return self.kind.read(data)

    def _set_aside(self, doc: D) -> str:
        """Keep the damaged file as it was (`NAME.damaged-<time>`) and write what was readable in
        its place; returns the line that says so. Called under the lock."""
        backup = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            shutil.copyfile(self.path, backup)
            jsonio.write_atomic(self.path, doc.to_json())
        except OSError as e:
            return f"could not set the damaged file aside ({e})"
        return f"the file as it was is kept as {backup.name}"


class Entry(Protocol):
    def to_json(self) -> dict[str, Any]: ...


EntryT = TypeVar("EntryT", bound=Entry)


class FormTable(Generic[EntryT]):
    """A document {"version": 1, "forms": {form key: entry}} (results.json, ship.json): a
    subclass names it and says how one entry is read (`entry`, raising ValueError)."""

    VERSION: ClassVar[int] = 1
    NAME: ClassVar[str]

    def __init__(self, forms: dict[str, EntryT] | None = None) -> None:
        self.forms: dict[str, EntryT] = forms or {}

    @classmethod
    def entry(cls, key: str, value: object) -> EntryT:
        raise NotImplementedError

    @classmethod
    def empty(cls) -> Self:
        return cls()

    @classmethod
    def read(cls, data: dict[str, Any]) -> tuple[Self, list[str]]:
        if not isinstance(data.get("forms"), dict):
            return cls(), ["the file has no 'forms' table, starting empty"]
        forms, problems = read_table(data, "forms", cls.entry, cls.NAME)
        return cls(forms), problems

    def to_json(self) -> dict[str, Any]:
        return {"version": self.VERSION, "forms": {key: e.to_json() for key, e in self.forms.items()}}


class FormStore(Store[Any], Generic[EntryT]):
    """A store of a FormTable: its entries by form key, `put` one (the others read again)."""

    @property
    def forms(self) -> dict[str, EntryT]:
        forms: dict[str, EntryT] = self.doc.forms
        return forms

    def put_entry(self, key: str, entry: EntryT) -> None:
        self.update(lambda doc: doc.forms.__setitem__(key, entry))


def read_table(
    data: dict[str, Any], table: str, entry: Callable[[str, object], E], what: str
) -> tuple[dict[str, E], list[str]]:
    """The entries of `data[table]` (an object keyed by name) that `entry(key, value)` can read;
    one line for each it cannot (it raises ValueError saying why), e.g. "result for 'onnx'
    dropped: field 'wall_s' is malformed"."""
    values = data.get(table, {})
    if not isinstance(values, dict):
        return {}, [f"no {table!r} table, starting empty"]
    found: dict[str, E] = {}
    problems: list[str] = []
    for key, value in values.items():
        try:
            found[key] = entry(key, value)
        except ValueError as e:
            problems.append(f"{what} for {key!r} dropped: {e}")
    return found, problems
