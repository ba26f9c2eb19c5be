"""What building a compiled form for another architecture asks of the families (for
scenarios/isolated/cross.py, which names no family): the wheel a form's C/C++ program compiles
against (its family's cpp_steps `WHEEL`, whose g++ lines take the compiler as an argument), and the
shared libraries a program needs from an unpacked wheel (NEEDED, read with readelf)."""

from __future__ import annotations

from pathlib import Path

from deploytui.core import paths
from deploytui.families.common.cpp_build import Wheel
from deploytui.families.common.cpp_cmd import readelf_dynamic, wheels
from deploytui.ship.spec import Library
from deploytui.spec import forms

__all__ = ["Wheel", "cpp_wheel", "libraries"]


def cpp_wheel(form: forms.Form) -> Wheel | None:
    """The wheel a compiled form's program is compiled against, or None (a Rust program)."""
    program = Path(form.executable or "").name
    for w in wheels():
        if any(name == program for name, _src, _line in w.programs("c++", paths.ROOT / "cpp", Path("."))):
            return w
    return None


def libraries(program: Path, *sites: Path) -> tuple[list[Library], list[str]]:
    """The shared libraries `program` needs, transitively: those in the unpacked wheels (bundled;
    the first site that has one wins) and the rest (the system's: libc, libstdc++, the loader)."""
    found: dict[str, Path] = {}
    for site in sites:
        for p in site.rglob("*.so*"):
            if p.is_file():
                found.setdefault(p.name, p)
    bundled: dict[str, Path] = {}
    system: list[str] = []
    todo = list(readelf_dynamic(program)["needed"])
    while todo:
        name = todo.pop()
        if name in bundled or name in system:
            continue
        if name in found:
            bundled[name] = found[name]
            todo += readelf_dynamic(found[name])["needed"]
        else:
            system.append(name)
    return [Library(n, p) for n, p in sorted(bundled.items())], sorted(system)
