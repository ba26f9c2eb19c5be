"""Everything deploytui can show about one form's artifacts, as view-model sections.

`sections(form, manifest)` never raises: a section that cannot be built carries its error,
which the app and `deploytui inspect` show in place. Tabs: Artifact, Code, Graph, Symbols.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from deploytui import forms as F
from deploytui import paths
from deploytui.forms import Form
from deploytui.inspectors import InspectError, archive, onnx_graph, python_runtime, safetensors_header

TABS = ("Artifact", "Code", "Graph", "Symbols")


@dataclass
class Section:
    tab: str
    title: str
    kind: str  # "text" | "code" | "table" | "tree"
    text: str = ""
    language: str | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    error: str = ""


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _guard(tab: str, title: str, kind: str, build: Callable[[], Section]) -> Section:
    try:
        return build()
    except InspectError as e:
        return Section(tab, title, kind, error=str(e))
    except OSError as e:
        return Section(tab, title, kind, error=f"{type(e).__name__}: {e}")


# ------------------------------------------------------------------ Artifact


def ships(form: Form, manifest: dict) -> Section:
    """Each file as it is now (size, sha256), against what the build recorded for it."""
    from deploytui.builder.steps import sha256_file

    rows = []
    for p in form.ship_paths():
        rel = str(p.relative_to(paths.artifacts_dir()))
        if not p.exists():
            rows.append([rel, "missing", "", ""])
            continue
        now, built = sha256_file(p)[:12], manifest.get("artifacts", {}).get(rel, {}).get("sha256", "")[:12]
        vs = (
            "not recorded"
            if not built
            else "as built"
            if now == built
            else f"CHANGED since the build ({built})"
        )
        rows.append([rel, human(p.stat().st_size), now, vs])
    if not form.program.startswith("bin/"):
        rows.append([form.program, "(source)", "", ""])
    for step in form.steps:  # burn-onnx's File strategy: a .bpk read from the build directory
        baked = manifest.get("steps", {}).get(step, {}).get("facts", {}).get("baked_bpk_path")
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


def runtime(form: Form, cancel: threading.Event | None = None) -> Section:
    """The runtime a form needs on the target machine, and what it weighs on disk."""
    title = f"Runtime: {F.RUNTIME_TITLES[form.runtime]}"
    if form.runtime in python_runtime.ROOTS:
        dists = python_runtime.closure(form.runtime)
        total = sum(d.bytes for d in dists)
        rows = [[d.name, d.version, human(d.bytes)] for d in dists]
        return Section(
            "Artifact",
            f"{title} — {human(total)} in {len(dists)} distributions",
            "table",
            columns=["distribution", "version", "size"],
            rows=rows,
        )
    libs = loaded_runtime(form, cancel)
    from deploytui.inspectors import elf

    total = elf.runtime_size(libs)
    rows = [
        [
            lib.path or lib.name,
            human(lib.size) if lib.exists else "gone after run",
            "system" if lib.system else ("runtime" if lib.exists else "model (unpacked from the package)"),
        ]
        for lib in libs
    ]
    return Section(
        "Artifact",
        f"{title} — {human(total)} of non-system libraries loaded",
        "table",
        columns=["library loaded while running", "size", "kind"],
        rows=rows,
    )


_LOADED: dict[tuple, tuple] = {}


def _loaded(argv: tuple[str, ...], stamp: tuple, cancel: threading.Event | None) -> tuple:
    key = (argv, stamp)
    if key not in _LOADED:
        _LOADED[key] = _run_loaded(argv, cancel)
    return _LOADED[key]


def _run_loaded(argv: tuple[str, ...], cancel: threading.Event | None) -> tuple:
    from deploytui.bench import runner_env
    from deploytui.inspectors import elf

    run = elf.loaded_libraries(list(argv), env=runner_env(), timeout_s=120, cancel=cancel)
    if run.returncode != 0:
        tail = (run.stderr.strip().splitlines() or [""])[-1]
        raise InspectError(
            f"the program failed while listing its libraries (exit {run.returncode}): {tail[:200]}"
        )
    return run.libraries


def loaded_runtime(form: Form, cancel: threading.Event | None = None) -> tuple:
    """Libraries a compiled form loads in a real run (LD_DEBUG), cached per artifact version."""
    missing = [p.name for p in form.ship_paths() if not p.exists()]
    if missing:
        raise InspectError(f"not built: {', '.join(missing)} missing")
    stamp = tuple((str(p), p.stat().st_mtime_ns) for p in form.ship_paths())
    return _loaded(tuple(form.command()), stamp, cancel)


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


def build_notes(form: Form, manifest: dict) -> Section:
    rows = []
    for step in form.steps:
        rec = manifest.get("steps", {}).get(step)
        if not rec:
            rows.append([step, "never ran", "run `deploytui build`"])
            continue
        facts = rec.get("facts") or {}
        rows.append([step, rec.get("status", "?"), rec.get("reason") or f"{rec.get('wall_s', 0):.1f} s"])
        for w in facts.get("warnings", []):
            rows.append(["", "warning", w])
    return Section(
        "Artifact",
        "Build steps and the warnings they printed",
        "table",
        columns=["step", "status", "detail"],
        rows=rows,
    )


# ------------------------------------------------------------------ Code


def code_file(tab: str, path: Path, language: str | None, title: str | None = None) -> Section:
    if not path.exists():
        raise InspectError(f"{path.name} is missing ({path}): run `deploytui build`")
    text = path.read_text(errors="replace")
    return Section(tab, title or path.name, "code", text=text, language=language)


def zip_code(
    path: Path, suffixes: tuple[str, ...], language: str, limit: int = 3, under: str = ""
) -> list[Section]:
    """Source members of an archive: names ending in one of `suffixes` (and containing `under`)."""
    out = []
    for m in archive.members(path):
        if m.name.endswith(suffixes) and under in m.name and len(out) < limit:
            out.append(
                Section(
                    "Code",
                    f"{path.name}: {m.name}",
                    "code",
                    text=archive.read_text(path, m.name),
                    language=language,
                )
            )
    if not out:
        raise InspectError(f"{path.name} holds no {'/'.join(suffixes)} source")
    return out


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
        f"ONNX graph: {' → '.join(n['op'] for n in g['nodes'])}",
        "table",
        columns=["what", "value"],
        rows=rows,
    )


def capture_section(path: Path) -> Section:
    if not path.exists():
        raise InspectError(f"{path.name} is missing: the burn-capture step has not run")
    try:
        data = json.loads(path.read_text())
        ops = data["operations"]
    except (ValueError, KeyError, TypeError) as e:
        raise InspectError(f"{path.name} is not a captured graph: {e}") from None
    rows = []
    for i, op in enumerate(ops):
        ins = " ".join(f"#{t.get('id')}{t.get('shape')}" for t in op.get("inputs", []))
        outs = " ".join(f"#{t.get('id')}{t.get('shape')}" for t in op.get("outputs", []))
        rows.append([str(i), str(op.get("kind", "?")), ins, outs])
    title = (
        f"burn GraphIr captured on Device::capture: {len(ops)} operations, inputs {data.get('inputs')}, "
        f"outputs {data.get('outputs')}, {len(data.get('values', []))} recorded values"
    )
    return Section("Graph", title, "table", columns=["#", "operation", "inputs", "outputs"], rows=rows)


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


def nm_section(path: Path, title: str | None = None) -> Section:
    from deploytui.inspectors import elf

    sym = elf.undefined_symbols(path)
    text = (
        f"{len(sym.aoti)} undefined aoti_torch_* symbols (provided by the libtorch loaded in the process):\n"
        + "\n".join(f"  {s}" for s in sym.aoti)
        + f"\n\n{len(sym.other)} other undefined symbols:\n"
        + "\n".join(f"  {s}" for s in sym.other)
    )
    return Section("Symbols", title or f"nm -u -D {path.name}", "text", text=text)


def aoti_so_sections(pt2: Path) -> list[Section]:
    from deploytui.inspectors import elf

    out = []
    with tempfile.TemporaryDirectory(prefix="deploytui-aoti-") as tmp:
        for so in elf.aoti_shared_object(pt2, tmp):
            out.append(nm_section(so, f"nm -u -D {pt2.name}: {so.name} ({human(so.stat().st_size)})"))
            rep = elf.ldd(so)
            rows = [[lib.name, lib.path or "not found", human(lib.size)] for lib in rep.libraries]
            rows += [[name, "not found (resolved from the loading process)", ""] for name in rep.not_found]
            out.append(
                Section(
                    "Symbols",
                    f"ldd {pt2.name}: {so.name}",
                    "table",
                    columns=["needs", "resolves to", "size"],
                    rows=rows,
                )
            )
    return out


# ------------------------------------------------------------------ assembly


def sections(form: Form, manifest: dict, cancel: threading.Event | None = None) -> list[Section]:
    """All sections for a form; `cancel` stops the one step that runs the program (runtime libs)."""
    art = paths.artifacts_dir()
    out: list[Section] = [
        _guard("Artifact", "What ships", "table", lambda: ships(form, manifest)),
        _guard("Artifact", "Runtime", "table", lambda: runtime(form, cancel)),
    ]
    for rel in form.model_files:
        p = art / rel
        if p.suffix in (".pt", ".pt2"):
            out.append(_guard("Artifact", p.name, "tree", lambda p=p: zip_tree(p)))
        elif p.suffix == ".safetensors":
            out.append(_guard("Artifact", p.name, "table", lambda p=p: safetensors_table(p)))
    out.append(_guard("Artifact", "Build", "table", lambda: build_notes(form, manifest)))
    out += _code(form, art)
    out += _graph(form, art)
    out += _symbols(form, art)
    return out


def _many(tab: str, title: str, build: Callable[[], list[Section]]) -> list[Section]:
    try:
        return build()
    except (InspectError, OSError) as e:
        return [Section(tab, title, "text", error=str(e))]


def _code(form: Form, art: Path) -> list[Section]:
    key = form.key
    if key == "torch-eager":
        return [
            _guard(
                "Code",
                "model source",
                "code",
                lambda: code_file(
                    "Code",
                    paths.ROOT / "src/deploytui/model.py",
                    "python",
                    "deploytui/model.py (ships with the weights)",
                ),
            )
        ]
    if key.startswith("torchscript") or key == "cpp-torchscript":
        pt = art / form.model_files[0]
        return _many("Code", pt.name, lambda: zip_code(pt, (".py",), "python", under="/code/__torch__/"))
    if key == "torch-export":
        return [
            _guard(
                "Code",
                "graph",
                "code",
                lambda: code_file(
                    "Code", art / "a1_export_graph.py", "python", "torch.export graph_module.code"
                ),
            )
        ]
    if key in ("aoti-python", "cpp-aoti", "cpp-aoti-lean"):
        pt2 = art / form.model_files[0]
        return _many("Code", pt2.name, lambda: zip_code(pt2, (".wrapper.cpp", ".kernel.cpp"), "cpp", 2))
    if key == "burn-onnx-file":
        return [
            _guard(
                "Code",
                "a1.rs",
                "code",
                lambda: code_file(
                    "Code", art / "onnx/a1.rs", "rust", "a1.rs generated by burn-onnx (LoadStrategy::File)"
                ),
            )
        ]
    if key == "burn-onnx-embed":
        return [
            _guard(
                "Code",
                "a1.rs",
                "code",
                lambda: code_file(
                    "Code",
                    art / "onnx/a1_embed.rs",
                    "rust",
                    "a1.rs generated by burn-onnx (LoadStrategy::Embedded)",
                ),
            )
        ]
    if form.family == "burn":
        return [
            _guard(
                "Code",
                "Mlp",
                "code",
                lambda: code_file(
                    "Code",
                    paths.ROOT / "rust/store-deploy/src/lib.rs",
                    "rust",
                    "rust/store-deploy/src/lib.rs",
                ),
            )
        ]
    return []


def _graph(form: Form, art: Path) -> list[Section]:
    if form.key in ("onnxruntime", "burn-onnx-file", "burn-onnx-embed"):
        return [_guard("Graph", "ONNX graph", "table", lambda: onnx_section(art / "a1.onnx"))]
    if form.family == "burn":
        return [_guard("Graph", "captured GraphIr", "table", lambda: capture_section(art / "capture.json"))]
    if form.key in ("torch-export", "aoti-python", "cpp-aoti", "cpp-aoti-lean"):
        return [
            _guard(
                "Graph",
                "torch.export graph",
                "code",
                lambda: code_file(
                    "Graph", art / "a1_export_graph.py", "python", "the ATen graph torch.export recorded"
                ),
            )
        ]
    return []


def _symbols(form: Form, art: Path) -> list[Section]:
    out: list[Section] = []
    if form.program.startswith("bin/"):
        exe = art / form.program
        out.append(_guard("Symbols", f"ldd {exe.name}", "table", lambda: ldd_section(exe)))
    if form.key in ("aoti-python", "cpp-aoti", "cpp-aoti-lean"):
        pt2 = art / form.model_files[0]
        out += _many("Symbols", f"{pt2.name} .so", lambda: aoti_so_sections(pt2))
    return out
