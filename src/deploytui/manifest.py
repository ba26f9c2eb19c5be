"""The manifests as the rest of the tool reads them: what the build recorded, whether each form
can run, and the runtime facts its probe steps stored. Kept light (no build machinery
imported): the app reads it before its first frame.

A model's view is artifacts/shared/manifest.json (the model-independent steps) merged with
artifacts/<slug>/manifest.json (its own); artifact keys are relative to the artifacts root.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from deploytui import jsonio, paths
from deploytui.forms import Form
from deploytui.hashing import unchanged
from deploytui.models import ModelRef

VERSION = 1
NAME = "manifest.json"


def empty() -> dict[str, Any]:
    return {"version": VERSION, "tools": {}, "steps": {}, "artifacts": {}}


def _read(folder: Path) -> dict[str, Any]:
    try:
        data = jsonio.read(folder / NAME)
        if isinstance(data, dict) and data.get("version") == VERSION:
            return data
    except (OSError, ValueError):
        pass
    return empty()


def load(art: Path | None = None, slug: str | None = None) -> dict[str, Any]:
    """The model's view (default: the current model) under the artifacts root `art`: the shared
    manifest merged with the model's; empty parts when missing or unreadable."""
    art = art or paths.artifacts_dir()
    shared, own = _read(art / paths.SHARED), _read(art / (slug or paths.model().slug))
    merged = empty()
    for part in (shared, own):
        merged["tools"].update(part.get("tools", {}))
        merged["steps"].update(part.get("steps", {}))
        merged["artifacts"].update(part.get("artifacts", {}))
    if "model" in own:
        merged["model"] = own["model"]
    return merged


def write(art: Path, slug: str, manifest: dict[str, Any]) -> None:
    """Split a merged view back into the shared manifest and the model's (atomic replace each)."""
    shared, own = empty(), empty()
    for part in (shared, own):
        part["tools"] = dict(manifest.get("tools", {}))
    for name, rec in manifest.get("steps", {}).items():
        (shared if rec.get("scope") == "shared" else own)["steps"][name] = rec
    for key, rec in manifest.get("artifacts", {}).items():
        (shared if key.startswith(paths.SHARED + "/") else own)["artifacts"][key] = rec
    if "model" in manifest:
        own["model"] = manifest["model"]
    (art / paths.SHARED).mkdir(parents=True, exist_ok=True)
    (art / slug).mkdir(parents=True, exist_ok=True)
    jsonio.write_atomic(art / paths.SHARED / NAME, shared)
    jsonio.write_atomic(art / slug / NAME, own)


def built_models(art: Path | None = None) -> dict[str, str]:
    """Every model with a folder under the artifacts root: its `--model` text -> its slug (the
    model its manifest says it was built for)."""
    art = art or paths.artifacts_dir()
    found: dict[str, str] = {}
    for mf in sorted(art.glob(f"*/{NAME}")) if art.is_dir() else []:
        text = _read(mf.parent).get("model")
        if isinstance(text, str) and mf.parent.name != paths.SHARED:
            found[text] = mf.parent.name
    return found


MODEL_INFO = "model.json"  # written by the export-model step: class, params, inputs, outputs


def model_info(slug: str | None = None, art: Path | None = None) -> dict[str, Any] | None:
    """What the build recorded about the model itself (`model.json`), or None before it ran."""
    try:
        data = jsonio.read((art or paths.artifacts_dir()) / (slug or paths.model().slug) / MODEL_INFO)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


NOT_APPLICABLE = "not-applicable"


def availability(form: Form, manifest: dict[str, Any] | None = None, ref: ModelRef | None = None) -> str:
    """ "" when the form can run, else why not (not applicable, not built, tool missing, build
    failed)."""
    why = form.applies(ref)
    if why:
        return why
    manifest = manifest if manifest is not None else load(slug=ref.slug if ref else None)
    for step in form.steps:
        rec = manifest.get("steps", {}).get(step)
        if not rec:
            return f"not built (step {step} never ran): run `deploytui build`"
        if rec.get("status") != "ok":
            return f"{rec.get('status')}: step {step}: {rec.get('reason') or 'no reason recorded'}"
    missing = [p.name for p in form.ship_paths(ref) if not p.exists()]
    if missing:
        return f"missing artifact(s): {', '.join(missing)} (run `deploytui build`)"
    return ""


STAGES = ("export", "build", "run", "numerics")


def _root(steps: dict[str, Any], name: str) -> tuple[str, dict[str, Any]]:
    """A step skipped because a step it needs did not pass: follow to that step."""
    seen = {name}
    rec = steps.get(name) or {}
    while rec.get("status") == "skipped":
        m = re.match(r"needs step (\S+)", rec.get("reason") or "")
        if not m or m.group(1) in seen or m.group(1) not in steps:
            break
        name = m.group(1)
        seen.add(name)
        rec = steps[name]
    return name, rec


def way(
    form: Form, manifest: dict[str, Any], ref: ModelRef | None = None
) -> tuple[dict[str, str], str, str, str]:
    """The form's way through its build stages: ({export: .., build: ..}, the first failing
    stage or "", the full log of the step that failed (relative to the artifacts root) or "",
    and that step's decisive line, `failed: step NAME: REASON`, or "")."""
    if form.applies(ref):
        return {s: NOT_APPLICABLE for s in STAGES[:2]}, "", "", ""
    steps = manifest.get("steps", {})
    result: dict[str, str] = {}
    first = log = why = ""
    for step in form.steps:
        name, rec = _root(steps, step)
        stage = rec.get("stage") or ("export" if name.startswith("export-") else "build")
        status = rec.get("status") or "skipped"
        status = {"up-to-date": "ok", "unavailable": "skipped"}.get(status, status)
        if result.get(stage) in (None, "ok"):
            result[stage] = status
        if status == "failed" and not first:
            first, log = stage, rec.get("log") or ""
            why = f"failed: step {name}: {rec.get('reason') or 'no reason recorded'}"
    for s in STAGES[:2]:
        result.setdefault(s, "ok" if not first else "skipped")
    if first == "export" and result.get("build") == "ok":
        result["build"] = "skipped"
    return {s: result[s] for s in STAGES[:2]}, first, log, why


NOT_PROBED = "not probed yet: run `deploytui build`"


def runtime_facts(
    form: Form, manifest: dict[str, Any] | None = None, ref: ModelRef | None = None
) -> tuple[dict[str, Any] | None, str]:
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
    for rel in form.ship_files(ref):
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
