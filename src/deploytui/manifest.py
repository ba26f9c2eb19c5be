"""artifacts/manifest.json as the rest of the tool reads it: what the build recorded, and whether
each form can run. Kept light (no build machinery imported): the app reads it before its first frame.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deploytui import jsonio, paths
from deploytui.forms import Form

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
