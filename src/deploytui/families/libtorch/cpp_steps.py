"""cpp-build's programs (plan.py declares the step, common.cpp_cmd compiles them with `--torch`):
cpp-torchscript and cpp-aoti against the torch wheel's libtorch.

Direct g++ lines, not CMake: `find_package(Torch)` on the CUDA build of the wheel stops in
Caffe2Config.cmake ("Your installed Caffe2 version uses CUDA but I cannot find the CUDA
libraries") when there is no CUDA toolkit; see cpp/README.md.
"""

from __future__ import annotations

import functools
from pathlib import Path

from deploytui.families.common.cpp_build import CXXFLAGS, Line, Wheel

# (output name, source, rpath tag). cpp-aoti gets DT_RPATH (--disable-new-dtags): the default AOTI
# package's .so NEEDs libtorch.so and has no RPATH of its own, and only a DT_RPATH of the
# executable is searched for the dependencies of a dlopen'ed library (a DT_RUNPATH is not).
PROGRAMS = (
    ("cpp-torchscript", "torchscript_run.cpp", "runpath"),
    ("cpp-aoti", "aoti_run.cpp", "rpath"),
)


def torch_version(torch_dir: Path) -> str:
    """The wheel's version string, read from torch/version.py as text (torch is not imported)."""
    try:
        for line in (torch_dir / "version.py").read_text().splitlines():
            if line.startswith("__version__"):
                return line.split("=", 1)[1].strip().strip("'\"")
    except OSError:
        pass
    return "unknown"


def compile_line(cxx: str, src: Path, out: Path, torch_dir: Path, rpath: str) -> list[str]:
    inc = torch_dir / "include"
    lib = torch_dir / "lib"
    dtags = "--disable-new-dtags" if rpath == "rpath" else "--enable-new-dtags"
    return [
        cxx,
        *CXXFLAGS,
        f"-I{inc}",
        f"-I{inc / 'torch/csrc/api/include'}",
        f"-I{src.parent}",
        str(src),
        "-o",
        str(out),
        "-s",  # stripped: the size that ships
        f"-L{lib}",
        "-Wl,--as-needed",
        "-ltorch_cpu",
        "-lc10",  # no -ltorch: that is the CUDA pull-in
        f"-Wl,{dtags},-rpath,{lib}",
    ]


def programs(cxx: str, src: Path, torch_dir: Path) -> list[tuple[str, str, Line]]:
    return [
        (name, source, functools.partial(compile_line, cxx, src / source, torch_dir=torch_dir, rpath=r))
        for name, source, r in PROGRAMS
    ]


WHEEL = Wheel(
    flag="torch",
    help="the torch package folder of the wheel",
    what="libtorch",
    libs="lib",
    route="direct g++ (CMake find_package(Torch) needs the CUDA toolkit with this wheel)",
    programs=programs,
    facts=lambda torch_dir: {"torch": torch_version(torch_dir)},
)
