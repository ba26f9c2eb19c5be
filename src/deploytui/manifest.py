"""artifacts/manifest.json as the rest of the tool reads it: what the build recorded, whether
each form can run, and the runtime facts its probe steps stored. Kept light (no build machinery
imported): the app reads it before its first frame.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deploytui import jsonio, paths
from deploytui.forms import Form
from deploytui.hashing import unchanged

VERSION = 1
NAME = "manifest.json"


def empty() -> dict[str, Any]:
    return {"version": VERSION, "tools": {}, "steps": {}, "artifacts": {}}


def load(art: Path | None = None) -> dict[str, Any]:
    """The manifest in `art` (default: the artifacts folder); an empty one when missing or unreadable."""
    try:
        data = jsonio.read((art or paths.artifacts_dir()) / NAME)
        if isinstance(data, dict) and data.get("version") == VERSION:
            return data
    except (OSError, ValueError):
        pass
    return empty()


def availability(form: Form, manifest: dict[str, Any] | None = None) -> str:
    """ "" when the form can run, else why not (not built, tool missing, build failed)."""
    manifest = manifest if manifest is not None else load()
    for step in form.steps:
        rec = manifest.get("steps", {}).get(step)
        if not rec:
            return f"not built (step {step} never ran): run `deploytui build`"
        if rec.get("status") != "ok":
            return f"{rec.get('status')}: step {step}: {rec.get('reason') or 'no reason recorded'}"
    missing = [p.name for p in form.ship_paths() if not p.exists()]
    if missing:
        return f"missing artifact(s): {', '.join(missing)} (run `deploytui build`)"
    return ""


NOT_PROBED = "not probed yet: run `deploytui build`"


def runtime_facts(form: Form, manifest: dict[str, Any] | None = None) -> tuple[dict[str, Any] | None, str]:
    """The runtime facts the build's probe step stored for `form` (`probe_cmd`: runtime_bytes,
    the libraries or distributions, probed_at), and "" — or None and why there are none: never
    probed, the probe failed, or a file it probed changed since. Reads files; runs nothing."""
    manifest = manifest if manifest is not None else load()
    rec = manifest.get("steps", {}).get(form.probe_step)
    if not rec:
        return None, NOT_PROBED
    if rec.get("status") != "ok":
        why = rec.get("reason") or "no reason recorded"
        return None, f"not probed: step {form.probe_step} {rec.get('status')}: {why} (run `deploytui build`)"
    facts = rec.get("facts")
    if not _well_formed(facts):
        return None, f"{NOT_PROBED} (step {form.probe_step} stored no readable runtime facts)"
    files = facts.get("files") or {}
    for rel in form.ship_files():
        path = paths.artifacts_dir() / rel
        if rel in files and not path.exists():
            return None, f"stale: {rel} is gone since it was probed (run `deploytui build`)"
        if rel in files and not unchanged(path, files[rel]):
            return None, f"stale: {rel} changed since it was probed (run `deploytui build`)"
    return facts, ""


def _well_formed(facts: object) -> bool:
    def records(value: object) -> bool:
        return isinstance(value, list) and all(isinstance(v, dict) for v in value)

    return (
        isinstance(facts, dict)
        and isinstance(facts.get("runtime_bytes"), int)
        and records(facts.get("libraries", []))
        and records(facts.get("distributions", []))
        and isinstance(facts.get("files", {}), dict)
        and all(isinstance(v, dict) for v in facts.get("files", {}).values())
    )
