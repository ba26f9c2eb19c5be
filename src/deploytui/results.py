"""The results store: one JSON file under artifacts/, replaced atomically after every form.

The app, the CLI and the report all read it. A damaged file never stops anything: `load`
returns what it could read and says what it dropped (the unreadable file is kept beside it).
"""

from __future__ import annotations

import math
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
    dropped: list[str] = field(default_factory=list)  # what could not be read, for the user

    def put(self, record: dict) -> None:
        """Add or replace one form's record and write the file at once (atomic replace)."""
        self.forms[record["form"]] = record
        jsonio.write_atomic(self.path, {"version": VERSION, "forms": self.forms})


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
        reference = _reference(path.with_name("reference.json"))
        for key, rec in data["forms"].items():
            problem = _problem(key, rec, reference)
            if problem:
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
        jsonio.write_atomic(store.path, {"version": VERSION, "forms": store.forms})
    except OSError as e:
        return f"could not set the damaged file aside ({e})"
    return f"the file as it was is kept as {backup.name}"


def _num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _counts(v: object) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(n, int) for k, n in v.items())


def _matrix(v: object) -> bool:
    return (
        isinstance(v, list)
        and bool(v)
        and all(isinstance(r, list) and len(r) == len(v[0]) for r in v)
        and all(_num(x) for r in v for x in r)
    )


def _diff(v: object) -> bool:
    return (
        isinstance(v, dict)
        and all(_num(v.get(k)) for k in ("max_abs", "mean_abs", "tol"))
        and isinstance(v.get("max_rel"), (int, float))
        and isinstance(v.get("within_tol"), bool)
        and isinstance(v.get("worst_index"), list)
        and _matrix(v.get("abs_diffs"))
    )


# what each optional field of a record must be when it is not null (the app, CLI and report rely on it)
OPTIONAL = {
    "error": lambda v: isinstance(v, str),
    "exit_codes": lambda v: isinstance(v, list) and all(c is None or isinstance(c, int) for c in v),
    "stages_ms": lambda v: isinstance(v, dict) and all(isinstance(k, str) and _num(x) for k, x in v.items()),
    "modules_added": _counts,
    "modules_added_torch": _counts,
    "modules_added_total": lambda v: isinstance(v, int),
    "logits": _matrix,
    "diff": _diff,
    "max_abs_diff": _num,
    "within_tol": lambda v: isinstance(v, bool),
    "stderr_tail": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "n": lambda v: isinstance(v, int),
    "warmup": lambda v: isinstance(v, int),
    "measured_at": lambda v: isinstance(v, str),
}


def _reference(path: Path) -> list | None:
    """Eager's logits beside the results, to check stored diffs against; None when unreadable."""
    try:
        logits = jsonio.read(path)["logits"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return logits if _matrix(logits) else None


def _problem(key: str, rec: object, reference: list | None = None) -> str:
    if not isinstance(rec, dict):
        return "not an object"
    for name, kind in REQUIRED.items():
        if not isinstance(rec.get(name), kind):
            return f"field {name!r} missing or not a {kind.__name__}"
    if rec["form"] != key:
        return f"names form {rec['form']!r}"
    if not all(_num(v) and v >= 0 for v in rec["wall_s"] + rec["peak_rss_bytes"]):
        return "non-numeric or negative samples"
    for name, ok in OPTIONAL.items():
        if rec.get(name) is not None and not ok(rec[name]):
            return f"field {name!r} is malformed"
    if rec["status"] == "ok" and (
        not rec["wall_s"] or len(rec["wall_s"]) != rec.get("n", len(rec["wall_s"]))
    ):
        return f"holds {len(rec['wall_s'])} run times for n={rec.get('n')}"
    logits, diff = rec.get("logits"), rec.get("diff")
    if logits and diff:
        return _diff_problem(logits, diff, rec.get("max_abs_diff"), rec.get("within_tol"), reference)
    return ""


def _diff_problem(
    logits: list, diff: dict, max_abs: float | None, within: bool | None, reference: list | None
) -> str:
    """The stored diff must be what the stored logits give against eager's (exactly: same code)."""
    if reference is None:
        shape_ok = len(diff["abs_diffs"]) * len(diff["abs_diffs"][0]) == len(logits) * len(logits[0])
        return "" if shape_ok else "its diff does not match its logits"
    from deploytui import numerics

    try:
        d = numerics.compare(logits, reference, diff["tol"])
    except numerics.ShapeError as e:
        return f"its logits do not fit eager's: {e}"
    fresh = (d.max_abs, d.within_tol)
    if fresh != (diff["max_abs"], diff["within_tol"]) or fresh != (max_abs, within):
        return "its stored diff does not match its logits against eager's (reference.json)"
    return ""
