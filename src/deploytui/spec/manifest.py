"""The manifests as the rest of the tool reads them: what the build recorded, whether each form
can run, and the runtime facts its probe steps stored. Kept light (no build machinery
imported): the app reads it before its first frame.

A model's view is artifacts/shared/manifest.json (the model-independent steps) merged with
artifacts/<slug>/manifest.json (its own); artifact keys are relative to the artifacts root. Each
file is a `store.Store` of a `Manifest`: a damaged step or artifact record is dropped and said
(the build then runs that step again), the others kept; the build records each step under the
lock, so two builds at once (of one model, or of two sharing shared/) lose nothing.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from deploytui.core import jsonio
from deploytui.core.hashing import unchanged
from deploytui.core.modelref import ModelRef
from deploytui.core.record import STAGES, StageStatus
from deploytui.core.record_check import from_checked
from deploytui.core.store import Store, read_table
from deploytui.core.workspace import SHARED, Workspace
from deploytui.spec.forms import Form

VERSION = 1
NAME = "manifest.json"


class StepStatus(StrEnum):
    """How a step's last run ended (UP_TO_DATE only in build events: the record keeps OK)."""

    OK = "ok"
    FAILED = "failed"
    UNAVAILABLE = "unavailable"  # a tool it needs is missing
    SKIPPED = "skipped"  # a step it needs did not pass
    UP_TO_DATE = "up-to-date"


_STATUSES = set(StepStatus._value2member_map_)


def _is(kind: type | tuple[type, ...]) -> dict[str, Any]:
    return {"check": lambda v: isinstance(v, kind) and not isinstance(v, bool)}


def _strs() -> dict[str, Any]:
    return {"check": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)}


@dataclass
class StepRecord:
    """One build step's last run, as the manifest keeps it."""

    status: StepStatus = field(metadata={"check": lambda v: isinstance(v, str) and v in _STATUSES})
    reason: str = field(default="", metadata=_is(str))  # the decisive line of a step that did not pass
    fingerprint: str = field(default="", metadata=_is(str))  # argv + env + input contents
    log: str = field(default="", metadata=_is(str))  # its full log, relative to the artifacts root
    log_tail: list[str] = field(default_factory=list, metadata=_strs())
    facts: dict[str, Any] = field(default_factory=dict, metadata=_is(dict))  # its last JSON line
    wall_s: float = field(default=0.0, metadata=_is((int, float)))
    finished_at: str = field(default="", metadata=_is(str))
    scope: str = field(default="model", metadata=_is(str))  # "model" or "shared"
    stage: str = field(default="build", metadata=_is(str))  # "export" or "build"

    @property
    def ok(self) -> bool:
        return self.status == StepStatus.OK

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: object) -> StepRecord:
        return from_checked(cls, data, "status", status=StepStatus)


@dataclass
class ArtifactRecord:
    """One output of a step as the step wrote it (checked against the file to tell a changed one)."""

    size: int = field(metadata=_is(int))
    mtime_ns: int = field(default=0, metadata=_is(int))
    sha256: str = field(default="", metadata=_is(str))
    step: str = field(default="", metadata=_is(str))

    def matches(self, path: Path) -> bool:
        """The file is still the one recorded: same size and mtime, or else the same sha256."""
        return unchanged(path, self.to_json())

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: object) -> ArtifactRecord:
        return from_checked(cls, data, "size")


@dataclass
class Manifest:
    """One manifest file, or a model's merged view of two: tool versions, step records, the
    artifacts they wrote, and (a model's own) the model it was built for."""

    VERSION: ClassVar[int] = VERSION
    NAME: ClassVar[str] = "manifest"
    tools: dict[str, str] = field(default_factory=dict)
    steps: dict[str, StepRecord] = field(default_factory=dict)
    artifacts: dict[str, ArtifactRecord] = field(default_factory=dict)
    model: str | None = None

    @classmethod
    def empty(cls) -> Manifest:
        return cls()

    @classmethod
    def read(cls, data: dict[str, Any]) -> tuple[Manifest, list[str]]:
        steps, bad_steps = read_table(data, "steps", lambda _k, v: StepRecord.from_json(v), "step record")
        arts, bad_arts = read_table(data, "artifacts", lambda _k, v: ArtifactRecord.from_json(v), "artifact")
        tools = data.get("tools", {})
        problems = [*bad_steps, *bad_arts]
        if not (isinstance(tools, dict) and all(isinstance(v, str) for v in tools.values())):
            tools, problems = {}, [*problems, "the 'tools' table is malformed, dropped"]
        model = data.get("model")
        if model is not None and not isinstance(model, str):
            model, problems = None, [*problems, "the 'model' field is not a str, dropped"]
        return cls(dict(tools), steps, arts, model), problems

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "version": VERSION,
            "tools": dict(self.tools),
            "steps": {k: r.to_json() for k, r in self.steps.items()},
            "artifacts": {k: r.to_json() for k, r in self.artifacts.items()},
        }
        if self.model is not None:
            data["model"] = self.model
        return data

    def step(self, name: str) -> StepRecord | None:
        return self.steps.get(name)

    def facts(self, name: str) -> dict[str, Any]:
        """What step `name` printed last (its JSON line), {} when it never ran."""
        rec = self.steps.get(name)
        return rec.facts if rec else {}

    def failed_steps(self) -> list[str]:
        return [n for n, r in self.steps.items() if r.status == StepStatus.FAILED]


def store(folder: Path) -> Store[Manifest]:
    """The manifest file of one folder (a model's, or shared/)."""
    return Store(folder / NAME, Manifest)


def load(ws: Workspace) -> Manifest:
    """The workspace model's view: the shared manifest merged with the model's; empty parts when
    missing, damaged records dropped."""
    shared = store(ws.shared_dir).load().doc
    own = store(ws.model_dir).load().doc
    return merged(shared, own)


def merged(shared: Manifest, own: Manifest) -> Manifest:
    view = Manifest()
    for part in (shared, own):
        view.tools.update(part.tools)
        view.steps.update(part.steps)
        view.artifacts.update(part.artifacts)
    view.model = own.model
    return view


def write(ws: Workspace, view: Manifest) -> None:
    """Split a merged view back into the shared manifest and the model's, each replaced whole."""
    shared, own = Manifest(dict(view.tools)), Manifest(dict(view.tools), model=view.model)
    for name, rec in view.steps.items():
        (shared if rec.scope == "shared" else own).steps[name] = rec
    for key, art_rec in view.artifacts.items():
        (shared if key.startswith(SHARED + "/") else own).artifacts[key] = art_rec
    store(ws.shared_dir).write(shared)
    store(ws.model_dir).write(own)


def built_models(art: Path) -> dict[str, str]:
    """Every model with a folder under the artifacts root: its `--model` text -> its slug (the
    model its manifest says it was built for)."""
    found: dict[str, str] = {}
    for mf in sorted(art.glob(f"*/{NAME}")) if art.is_dir() else []:
        if mf.parent.name == SHARED:
            continue
        try:
            text = jsonio.read(mf).get("model")  # only this field: a damaged record elsewhere is the build's
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(text, str):
            found[text] = mf.parent.name
    return found


MODEL_INFO = "model.json"  # written by the export-model step: class, params, inputs, outputs


def model_info(folder: Path) -> dict[str, Any] | None:
    """What the build recorded about the model itself (`model.json` in its folder,
    `Workspace.model_dir`), or None before it ran."""
    try:
        data = jsonio.read(folder / MODEL_INFO)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def nonfinite_outputs(info: dict[str, Any] | None) -> str:
    """`log 3 of 6`: the outputs whose values on the example input eager gives as NaN or infinity
    (counted by the build, `model.json`), "" when none. Every form is judged against them."""
    odd = [o for o in (info or {}).get("outputs") or [] if isinstance(o, dict) and o.get("nonfinite")]
    return ", ".join(f"{o.get('name')} {o['nonfinite']} of {math.prod(o.get('shape') or [])}" for o in odd)


NOT_APPLICABLE = StageStatus.NOT_APPLICABLE


def availability(form: Form, ws: Workspace, manifest: Manifest | None = None) -> str:
    """ "" when the form can run, else why not (not applicable, not built, tool missing, build
    failed)."""
    why = form.applies(ws.model)
    if why:
        return why
    manifest = manifest if manifest is not None else load(ws)
    for step in form.steps:
        rec = manifest.steps.get(step)
        if not rec:
            return f"not built (step {step} never ran): run `{ws.command('build')}`"
        if not rec.ok:
            return f"{rec.status}: step {step}: {rec.reason or 'no reason recorded'}"
    missing = [p.name for p in form.ship_paths(ws) if not p.exists()]
    if missing:
        return f"missing artifact(s): {', '.join(missing)} (run `{ws.command('build')}`)"
    return ""


def _root(steps: dict[str, StepRecord], name: str) -> tuple[str, StepRecord | None]:
    """A step skipped because a step it needs did not pass: follow to that step."""
    seen = {name}
    rec = steps.get(name)
    while rec is not None and rec.status == StepStatus.SKIPPED:
        m = re.match(r"needs step (\S+)", rec.reason)
        if not m or m.group(1) in seen or m.group(1) not in steps:
            break
        name = m.group(1)
        seen.add(name)
        rec = steps[name]
    return name, rec


def way(form: Form, manifest: Manifest, ref: ModelRef) -> tuple[dict[str, StageStatus], str, str, str]:
    """The form's way through its build stages: ({export: .., build: ..}, the first failing
    stage or "", the full log of the step that failed (relative to the artifacts root) or "",
    and that step's decisive line, `failed: step NAME: REASON`, or "")."""
    if form.applies(ref):
        return {s: NOT_APPLICABLE for s in STAGES[:2]}, "", "", ""
    result: dict[str, StageStatus] = {}
    first = log = why = ""
    for step in form.steps:
        name, rec = _root(manifest.steps, step)
        stage = rec.stage if rec else ("export" if name.startswith("export-") else "build")
        status = _STAGE_OF.get(rec.status, StageStatus.SKIPPED) if rec else StageStatus.SKIPPED
        if result.get(stage) in (None, StageStatus.OK):
            result[stage] = status
        if rec is not None and status == StageStatus.FAILED and not first:
            first, log = stage, rec.log
            why = f"failed: step {name}: {rec.reason or 'no reason recorded'}"
    for s in STAGES[:2]:
        result.setdefault(s, StageStatus.OK if not first else StageStatus.SKIPPED)
    if first == "export" and result.get("build") == StageStatus.OK:
        result["build"] = StageStatus.SKIPPED
    return {s: result[s] for s in STAGES[:2]}, first, log, why


_STAGE_OF = {
    StepStatus.OK: StageStatus.OK,
    StepStatus.UP_TO_DATE: StageStatus.OK,
    StepStatus.FAILED: StageStatus.FAILED,
}


def not_probed(ws: Workspace) -> str:
    """Why a form has no runtime facts when its probe step never ran, with the command that runs it."""
    return f"not probed yet: run `{ws.command('build')}`"


def runtime_facts(
    form: Form, ws: Workspace, manifest: Manifest | None = None
) -> tuple[dict[str, Any] | None, str]:
    """The runtime facts the build's probe step stored for `form` (`probe_cmd`: runtime_bytes,
    the libraries or distributions, probed_at), and "" — or None and why there are none: never
    probed, the probe failed, or a file it probed changed since. Reads files; runs nothing."""
    manifest = manifest if manifest is not None else load(ws)
    rec = manifest.steps.get(form.probe_step)
    if not rec:
        return None, not_probed(ws)
    build = ws.command("build")
    if not rec.ok:
        why = rec.reason or "no reason recorded"
        return None, f"not probed: step {form.probe_step} {rec.status}: {why} (run `{build}`)"
    facts = rec.facts
    if not _well_formed(facts):
        return None, f"{not_probed(ws)} (step {form.probe_step} stored no readable runtime facts)"
    files = facts.get("files") or {}
    for rel in form.ship_files(ws):
        path = ws.artifacts / rel
        if rel in files and not path.exists():
            return None, f"stale: {rel} is gone since it was probed (run `{build}`)"
        if rel in files and not unchanged(path, files[rel]):
            return None, f"stale: {rel} changed since it was probed (run `{build}`)"
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
