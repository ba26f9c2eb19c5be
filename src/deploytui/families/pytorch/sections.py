"""The pytorch family's inspector sections (libtorch's forms show them too): the code TorchScript
stored, torch.export's graph, AOTInductor's generated C++ and the symbols of its shared object."""

from __future__ import annotations

import tempfile
from pathlib import Path

from deploytui.core.units import human
from deploytui.families.pytorch.family import (
    AOTI_SOURCE,
    AOTI_SYMBOLS,
    EXPORT_CODE,
    EXPORT_GRAPH,
    TORCHSCRIPT_CODE,
)
from deploytui.inspectors.section import Builders, Section, code_file, one, zip_code


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


BUILDERS: Builders = {
    TORCHSCRIPT_CODE: (
        "Code",
        "text",
        lambda i: i.file().name,
        lambda i: zip_code(i.file(), (".py",), "python", under="/code/__torch__/"),
    ),
    EXPORT_CODE: (
        "Code",
        "code",
        lambda i: "graph",
        one(lambda i: code_file("Code", i.file(), "python", i.title or "torch.export graph_module.code")),
    ),
    AOTI_SOURCE: (
        "Code",
        "text",
        lambda i: i.file().name,
        lambda i: zip_code(i.file(), (".wrapper.cpp", ".kernel.cpp"), "cpp", 2),
    ),
    EXPORT_GRAPH: (
        "Graph",
        "code",
        lambda i: "torch.export graph",
        one(
            lambda i: code_file(
                "Graph", i.file(), "python", i.title or "the ATen graph torch.export recorded"
            )
        ),
    ),
    AOTI_SYMBOLS: (
        "Symbols",
        "text",
        lambda i: f"{i.file().name} .so",
        lambda i: aoti_so_sections(i.file()),
    ),
}
