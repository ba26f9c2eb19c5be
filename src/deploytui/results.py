"""The results store: one JSON file under artifacts/, replaced atomically after every form.

The app, the CLI and the report all read it. A damaged file never stops anything: `load`
returns what it could read and says what it dropped (the unreadable file is kept beside it).
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from deploytui import jsonio, paths

VERSION = 1
REQUIRED = {"form": str, "status": str, "wall_s": list, "peak_rss_bytes": list}


@dataclass
class Store:
    path: Path
    forms: dict[str, dict] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)   # what could not be read, for the user

    def put(self, record: dict) -> None:
        """Add or replace one form's record and write the file at once (atomic replace)."""
        self.forms[record["form"]] = record
        jsonio.write_atomic(self.path, {"version": VERSION, "forms": self.forms})


def load(path: Path | None = None) -> Store:
    path = path or paths.results_path()
    store = Store(path)
    if not path.exists():
        return store
    try:
        data = jsonio.read(path)
    except (OSError, ValueError) as e:
        store.dropped.append(f"{path.name} could not be read ({type(e).__name__}: {e}); "
                             f"kept as {_keep_damaged(path).name}, starting empty")
        return store
    forms = data.get("forms") if isinstance(data, dict) else None
    if not isinstance(forms, dict):
        store.dropped.append(f"{path.name} has no 'forms' table; kept as {_keep_damaged(path).name}")
        return store
    for key, rec in forms.items():
        problem = _problem(key, rec)
        if problem:
            store.dropped.append(f"result for {key!r} dropped: {problem}")
        else:
            store.forms[key] = rec
    return store


def _problem(key: str, rec: object) -> str:
    if not isinstance(rec, dict):
        return "not an object"
    for name, kind in REQUIRED.items():
        if not isinstance(rec.get(name), kind):
            return f"field {name!r} missing or not a {kind.__name__}"
    if rec["form"] != key:
        return f"names form {rec['form']!r}"
    if not all(isinstance(v, (int, float)) for v in rec["wall_s"] + rec["peak_rss_bytes"]):
        return "non-numeric samples"
    return ""


def _keep_damaged(path: Path) -> Path:
    backup = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    shutil.copyfile(path, backup)
    return backup
