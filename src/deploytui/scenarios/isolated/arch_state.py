"""A form's state for each architecture, beside this machine's, from what is stored (nothing runs
or builds): for this machine its build (the manifest) and its bundle's last isolated check
(ship.json); for another architecture the stage that stops it (cross.why_not), its last
`deploytui build --arch` line (build-<arch>.json), its bundle (bundles/<model>/<arch>/<form>/)
and its last proof there (ship-<arch>.json: `ship --arch --check`, or `bench --target` on a
host of that architecture). The app's form detail and Compare show it."""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass

from deploytui.core import jsonio
from deploytui.core.record import stamp
from deploytui.core.workspace import Workspace
from deploytui.scenarios.isolated import cross
from deploytui.ship import store as ship_store
from deploytui.ship.store import ShipCheck
from deploytui.spec.forms import Form
from deploytui.spec.manifest import Manifest, availability

OTHER_ARCHES = ("aarch64",)  # the architectures deploytui builds for besides this machine's


@dataclass(frozen=True)
class ArchState:
    """One form on one architecture: `built` (its program or wheels are made), `why` (what stops
    it, or the last failure), the bundle's sizes, `proved` (True/False: its last run there, None:
    never run) and whether that proof was emulated."""

    arch: str
    built: bool
    why: str = ""
    unpacked_bytes: int | None = None
    compressed_bytes: int | None = None
    proved: bool | None = None
    proof_why: str = ""
    emulated: bool = False
    native: bool = False

    @property
    def glyph(self) -> str:
        if self.proved is not None:
            return "✓" if self.proved else "✗"
        return "·" if self.built else "✗"

    def words(self) -> str:
        """One line: built / proved, or why not."""
        if not self.built:
            return self.why or "not built"
        if self.proved is None:
            return "built, never run there" if not self.native else "built, bundle never checked"
        where = " (emulated)" if self.emulated else ""
        return f"runs there{where}" if self.proved else f"fails there{where}: {self.proof_why}"


def write_build(ws: Workspace, arch: str, results: dict[str, str]) -> None:
    """`deploytui build --arch`'s lines (form key -> "" when built, else why not), kept for the app."""
    jsonio.write_atomic(ws.build_path_for(arch), {"built_at": stamp(), "forms": results})


def _read_build(ws: Workspace, arch: str) -> dict[str, str]:
    try:
        doc = jsonio.read(ws.build_path_for(arch))
        forms = doc.get("forms", {}) if isinstance(doc, dict) else {}
        return {k: v for k, v in forms.items() if isinstance(v, str)}
    except (OSError, ValueError):
        return {}


@dataclass(frozen=True)
class Stored:
    """What is stored for one other architecture, read once for every form shown: `deploytui
    build --arch`'s lines (build-<arch>.json) and the bundles' last proofs (ship-<arch>.json)."""

    built: dict[str, str]
    checks: dict[str, ShipCheck]

    @classmethod
    def read(cls, ws: Workspace, arch: str) -> Stored:
        return cls(_read_build(ws, arch), ship_store.load(ws.ship_path_for(arch)).forms)


def native(form: Form, ws: Workspace, manifest: Manifest) -> ArchState:
    why = availability(form, ws, manifest)
    check = ship_store.load(ws.ship_path).forms.get(form.key)
    return ArchState(
        platform.machine(),
        built=not why,
        why=why,
        unpacked_bytes=check.unpacked_bytes if check else None,
        compressed_bytes=check.compressed_bytes if check else None,
        proved=check.passed if check else None,
        proof_why=check.reason if check else "",
        native=True,
    )


def other(form: Form, arch: str, ws: Workspace, stored: Stored | None = None) -> ArchState:
    """The form for `arch`; `stored`: that architecture's files, read once for many forms."""
    if why := form.applies(ws.model) or cross.why_not(form, arch):
        return ArchState(arch, built=False, why=why)
    kept = stored or Stored.read(ws, arch)
    sizes: dict[str, int | None] = {"unpacked_bytes": None, "compressed_bytes": None}
    try:
        made = json.loads((cross.default_dir(form, arch, ws) / "manifest.json").read_text())
        sizes = {k: made.get(k) for k in sizes}
    except (OSError, ValueError):
        made = None
    check = kept.checks.get(form.key)
    failed = kept.built.get(form.key, "")
    return ArchState(
        arch,
        built=made is not None or (form.key in kept.built and not failed),
        why=failed or ("" if made is not None else f"not built: `{ws.command('build', '--arch', arch)}`"),
        unpacked_bytes=sizes["unpacked_bytes"],
        compressed_bytes=sizes["compressed_bytes"],
        proved=check.passed if check else None,
        proof_why=check.reason if check else "",
        emulated=check is not None and check.emulated,
    )


def every(form: Form, ws: Workspace, manifest: Manifest) -> list[ArchState]:
    """This machine's state, then each other architecture's."""
    return [native(form, ws, manifest), *(other(form, a, ws) for a in OTHER_ARCHES)]
