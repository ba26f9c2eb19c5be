"""What a family's C++ programs (its cpp_steps module, compiled by cpp_cmd) declare: the wheel they
compile against (`Wheel`: cpp_cmd's option naming its package folder, and the g++ line of each
program) and the flags every program is compiled with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CXXFLAGS = ("-std=c++20", "-O2", "-D_GLIBCXX_USE_CXX11_ABI=1")

Line = Callable[[Path], list[str]]  # the g++ line that writes the program to the given path
# (compiler, the cpp/ folder, the wheel's package folder) -> (program, source, its line) each
Programs = Callable[[str, Path, Path], list[tuple[str, str, Line]]]


def no_facts(wheel_dir: Path) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Wheel:
    """The programs a family compiles against one wheel: `cpp_cmd --<flag> PACKAGE_DIR`."""

    flag: str  # the option naming the wheel's package folder (`torch`: --torch)
    help: str  # the option's help
    what: str  # what its headers and libraries are, for the error line when they are missing
    libs: str  # its libraries' folder in the package folder
    route: str  # how the programs are compiled (the facts' `route`)
    programs: Programs
    facts: Callable[[Path], dict[str, Any]] = no_facts  # more facts of the wheel (its version)
