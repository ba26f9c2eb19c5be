"""cpp-executorch-build's program (plan.py declares the step, common.cpp_cmd compiles it with
`--executorch`): cpp-executorch against the executorch wheel's headers and libraries."""

from __future__ import annotations

import functools
from pathlib import Path

from deploytui.families.common.cpp_build import CXXFLAGS, Line, Wheel

# What the wheel's share/cmake/executorch-config.cmake gives a consumer (EXECUTORCH_COMPILE_DEFINITIONS,
# plus ET_USE_THREADPOOL for its threadpool library; the vendored c10 under portable_type/c10), and
# the libraries: the delegate and the kernels only register themselves when loaded, so they are
# linked --no-as-needed.
EXECUTORCH_DEFINES = (
    "-DC10_USING_CUSTOM_GENERATED_MACROS",
    "-DET_EVENT_TRACER_ENABLED",
    "-DET_USE_THREADPOOL",
)
EXECUTORCH_LIBS = (
    "executorch",
    "executorch_backend_xnnpack",
    "executorch_kernels_optimized",
    "executorch_threadpool",
)


def executorch_line(cxx: str, src: Path, out: Path, et_dir: Path) -> list[str]:
    inc, lib = et_dir / "include", et_dir / "lib"
    return [
        cxx,
        *CXXFLAGS,
        *EXECUTORCH_DEFINES,
        f"-I{inc}",
        f"-I{inc / 'executorch/runtime/core/portable_type/c10'}",
        f"-I{src.parent}",
        str(src),
        "-o",
        str(out),
        "-s",
        f"-L{lib}",
        "-Wl,--no-as-needed",
        *(f"-l{name}" for name in EXECUTORCH_LIBS),
        "-Wl,--as-needed",
        f"-Wl,--enable-new-dtags,-rpath,{lib}",
    ]


def programs(cxx: str, src_dir: Path, et_dir: Path) -> list[tuple[str, str, Line]]:
    src = src_dir / "executorch_run.cpp"
    return [("cpp-executorch", src.name, functools.partial(executorch_line, cxx, src, et_dir=et_dir))]


WHEEL = Wheel(
    flag="executorch",
    help="the executorch package folder of the wheel",
    what="ExecuTorch",
    libs="lib",
    route="direct g++ with the flags of the wheel's executorch-config.cmake",
    programs=programs,
)
