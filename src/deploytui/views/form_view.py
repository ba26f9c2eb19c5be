"""Everything deploytui can show about one form's artifacts, as view-model sections.

`sections(form, manifest, ws)` never raises: a section that cannot be built carries its error,
which the app and `deploytui inspect` show in place. Tabs: Artifact, Code, Graph, Symbols.
What a form shows is its registry data (`Form.inspect`, one section builder per kind below);
its runtime is what the build's probe step stored (`manifest.runtime_facts`): nothing here
runs the form's program.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable
from pathlib import Path

from deploytui.core.hashing import sha256_file
from deploytui.core.units import duration, human
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.inspectors import InspectError, archive, onnx_graph, safetensors_header
from deploytui.inspectors.section import Builder, Placed, Section, code_file, one, operators
from deploytui.ship import store as ship_store
from deploytui.spec import forms as F
from deploytui.spec.forms import Form
from deploytui.spec.manifest import Manifest, runtime_facts

TABS = ("Artifact", "Code", "Graph", "Symbols")


def _guard(tab: str, title: str, kind: str, build: Callable[[], Section]) -> Section:
    try:
        return build()
    except InspectError as e:
        return Section(tab, title, kind, error=str(e))
    except OSError as e:
        return Section(tab, title, kind, error=f"{type(e).__name__}: {e}")


# ------------------------------------------------------------------ Artifact


def ships(form: Form, manifest: Manifest, ws: Workspace) -> Section:
    """Each file as it is now (size, sha256), against what the build recorded for it."""
    rows = []
    for p in form.ship_paths(ws):
        rel = str(p.relative_to(ws.artifacts))
        if not p.exists():
            rows.append([rel, "missing", "", ""])
            continue
        art = manifest.artifacts.get(rel)
        now, built = sha256_file(p)[:12], (art.sha256 if art else "")[:12]
        vs = (
            "not recorded"
            if not built
            else "as built"
            if now == built
            else f"CHANGED since the build ({built})"
        )
        rows.append([rel, human(p.stat().st_size), now, vs])
    if form.runner:
        rows.append([f"load script ({form.runner})", "(source)", "", ""])
    for step in form.steps:  # burn-onnx's File strategy: a .bpk read from the build directory
        baked = manifest.facts(step).get("baked_bpk_path")
        if baked:
            there = Path(baked).exists()
            rows.append(
                [
                    baked,
                    human(Path(baked).stat().st_size) if there else "missing",
                    "",
                    "read at run time from the build directory, not shipped",
                ]
            )
    return Section(
        "Artifact", "What ships", "table", columns=["file", "size", "sha256", "against the build"], rows=rows
    )


def runtime(form: Form, manifest: Manifest, ws: Workspace) -> Section:
    """The runtime a form needs on the target machine and what it weighs on disk, as the build's
    probe step recorded it (the installed distributions, or the libraries one real run loaded)."""
    title = f"Runtime: {registry.RUNTIME_TITLES[form.runtime]}"
    facts, why = runtime_facts(form, ws, manifest)
    if facts is None:
        raise InspectError(why)
    total, at = human(facts["runtime_bytes"]), _when(facts.get("probed_at"))
    if facts.get("probe") == "distributions":
        dists = facts.get("distributions") or []
        return Section(
            "Artifact",
            f"{title} — {total} in {len(dists)} distributions (probed {at})",
            "table",
            columns=["distribution", "size", "version"],  # the figure before the words (80x24's pane)
            rows=[[str(d.get("name")), human(d.get("bytes") or 0), str(d.get("version"))] for d in dists],
        )
    rows = []
    for lib in facts.get("libraries") or []:
        exists = bool(lib.get("exists"))
        rows.append(
            [
                str(lib.get("path") or lib.get("name")),
                human(lib.get("size") or 0) if exists else "gone after run",
                "system"
                if lib.get("system")
                else ("runtime" if exists else "model (unpacked from the package)"),
            ]
        )
    return Section(
        "Artifact",
        f"{title} — {total} of non-system libraries loaded (probed {at})",
        "table",
        columns=["library loaded while running", "size", "kind"],
        rows=rows,
    )


def bundle(form: Form, ws: Workspace) -> Section:
    """The form's bundle (`deploytui ship FORM`): its manifest's files with their sizes, and the
    last isolated check's verdict (ship.json). Reads files; runs nothing."""
    check = ship_store.load(ws.ship_path).forms.get(form.key)
    root = Path(check.bundle if check and check.bundle else ws.bundles_dir / form.key)
    try:
        made = json.loads((root / "manifest.json").read_text())
    except FileNotFoundError:  # not an error: nothing was shipped yet
        return Section(
            "Artifact",
            "Bundle",
            "text",
            text=f"no bundle yet: `{ws.command('ship', form.key, '--check')}` (or i in the app) makes and "
            "checks one",
        )
    except ValueError as e:
        raise InspectError(f"{root / 'manifest.json'} is damaged: {e}") from None
    files = made.get("files") or {}
    rows = [[rel, human(r.get("bytes") or 0), human(r.get("gz_bytes") or 0)] for rel, r in files.items()]
    checked = (
        "not checked"
        if check is None
        else f"runs isolated {check.glyph}"
        + (f": {check.reason}" if check.reason else "")
        + f" ({_when(check.checked_at)})"
    )
    title = (
        f"Bundle {root.name}/: {len(files)} files, {human(made.get('unpacked_bytes') or 0)}, "
        f"{human(made.get('compressed_bytes') or 0)} as .tar.gz — {checked}"
    )
    return Section("Artifact", title, "table", columns=["file", "size", "gzip -6"], rows=rows)


def architectures(form: Form, manifest: Manifest, ws: Workspace) -> Section:
    """The form on this machine beside each other architecture (scenarios/isolated/arch_state):
    built or why not, its bundle's size, whether it ran there. Reads files; runs nothing."""
    from deploytui.scenarios.isolated import arch_state

    rows = [
        [
            s.arch + (" (this machine)" if s.native else ""),
            "built" if s.built else "not built",
            human(s.compressed_bytes) if s.compressed_bytes else "–",
            f"{s.glyph} {s.words()}",
        ]
        for s in arch_state.every(form, ws, manifest)
    ]
    build = ws.command("build", "--arch", "aarch64")
    return Section(
        "Artifact",
        f"Architectures: this machine's build beside aarch64's (`{build}`)",
        "table",
        columns=["architecture", "build", "bundle .tar.gz", "state"],
        rows=rows,
    )


def _when(stamp: object) -> str:
    """'2026-01-02 03:04' from the probe's ISO time stamp."""
    return str(stamp)[:16].replace("T", " ") if stamp else "at an unknown time"


def zip_tree(path: Path) -> Section:
    ms = archive.members(path)
    return Section(
        "Artifact",
        f"{path.name} ({len(ms)} members, ZIP)",
        "tree",
        columns=["member", "size"],
        rows=[[m.name, human(m.size)] for m in ms],
    )


def safetensors_table(path: Path) -> Section:
    tensors, meta = safetensors_header.read(path)
    rows = [[t.name, t.dtype, "[" + ", ".join(map(str, t.shape)) + "]", human(t.nbytes)] for t in tensors]
    title = f"{path.name} header ({len(tensors)} tensors" + (f", metadata {meta}" if meta else "") + ")"
    return Section("Artifact", title, "table", columns=["tensor", "dtype", "shape", "bytes"], rows=rows)


def build_notes(form: Form, manifest: Manifest, ws: Workspace) -> Section:
    rows = []
    for step in form.steps:
        rec = manifest.steps.get(step)
        if not rec:
            rows.append([step, "never ran", f"run `{ws.command('build')}`"])
            continue
        rows.append([step, str(rec.status), rec.reason or duration(rec.wall_s)])
        for w in rec.facts.get("warnings", []):
            rows.append(["", "warning", w])
    return Section(
        "Artifact",
        "Build steps and the warnings they printed",
        "table",
        columns=["step", "status", "detail"],
        rows=rows,
    )


# ------------------------------------------------------------------ Code


# ------------------------------------------------------------------ Graph


def onnx_section(path: Path) -> Section:
    g = onnx_graph.summary(path)
    rows = [
        ["opset", ", ".join(f"{d} {v}" for d, v in g["opset"])],
        ["producer", g["producer"]],
        ["ir_version", str(g["ir_version"])],
    ]
    rows += [["input", f"{n} {d}"] for n, d in g["inputs"]]
    rows += [["output", f"{n} {d}"] for n, d in g["outputs"]]
    rows += [["initializer", f"{n} {d}"] for n, d in g["initializers"]]
    rows += [
        ["node", f"{n['op']} {n['inputs']} -> {n['outputs']} {n['attributes'] or ''}"] for n in g["nodes"]
    ]
    return Section(
        "Graph",
        f"ONNX graph: {operators([n['op'] for n in g['nodes']])}",
        "table",
        columns=["what", "value"],
        rows=rows,
    )


# ------------------------------------------------------------------ Symbols


def ldd_section(path: Path) -> Section:
    from deploytui.inspectors import elf

    rep = elf.ldd(path)
    rows = [
        [lib.name, lib.path or "not found", human(lib.size), "system" if lib.system else "runtime"]
        for lib in rep.libraries
    ]
    rows += [[name, "not found", "", ""] for name in rep.not_found]
    return Section(
        "Symbols", f"ldd {path.name}", "table", columns=["needs", "resolves to", "size", "kind"], rows=rows
    )


# ------------------------------------------------------------------ assembly


def _source(i: Placed) -> Section:
    language = {".py": "python", ".rs": "rust"}.get(Path(i.path).suffix)
    return code_file("Code", i.file(), language, i.title or i.path)


# Inspect.kind -> (its tab, section kind, title when it cannot be built, builder of its sections)
BUILDERS: dict[str, tuple[str, str, Callable[[Placed], str], Builder]] = {
    F.ZIP_MEMBERS: ("Artifact", "tree", lambda i: i.file().name, one(lambda i: zip_tree(i.file()))),
    F.SAFETENSORS_HEADER: (
        "Artifact",
        "table",
        lambda i: i.file().name,
        one(lambda i: safetensors_table(i.file())),
    ),
    F.MODEL_SOURCE: ("Code", "code", lambda i: "model source", one(_source)),
    F.ONNX_GRAPH: ("Graph", "table", lambda i: "ONNX graph", one(lambda i: onnx_section(i.file()))),
    F.ELF_LINKAGE: (
        "Symbols",
        "table",
        lambda i: f"ldd {i.file().name}",
        one(lambda i: ldd_section(i.file())),
    ),
}
# the registered families' own kinds (`Family.sections`: a module with its BUILDERS)
for _family in registry.FAMILIES:
    if _family.sections:
        BUILDERS.update(importlib.import_module(_family.sections).BUILDERS)


def sections(form: Form, manifest: Manifest, ws: Workspace) -> list[Section]:
    """All sections for a form of the workspace's model, tab by tab, each tab's in the order of
    `form.inspect`."""
    found: dict[str, list[Section]] = {tab: [] for tab in TABS}
    found["Artifact"] += [
        _guard("Artifact", "What ships", "table", lambda: ships(form, manifest, ws)),
        _guard("Artifact", "Runtime", "table", lambda: runtime(form, manifest, ws)),
        _guard("Artifact", "Bundle", "table", lambda: bundle(form, ws)),
        _guard("Artifact", "Architectures", "table", lambda: architectures(form, manifest, ws)),
    ]
    for entry in form.inspect:
        i = Placed(entry, ws)
        tab, kind, title, build = BUILDERS[entry.kind]
        found[tab] += _many(tab, title(i), kind, functools.partial(build, i))
    found["Artifact"].append(_guard("Artifact", "Build", "table", lambda: build_notes(form, manifest, ws)))
    return [s for tab in TABS for s in found[tab]]


def _many(tab: str, title: str, kind: str, build: Callable[[], list[Section]]) -> list[Section]:
    try:
        return build()
    except InspectError as e:
        return [Section(tab, title, kind, error=str(e))]
    except OSError as e:
        return [Section(tab, title, kind, error=f"{type(e).__name__}: {e}")]
