"""cpp-openvino-build's program (plan.py declares the step, common.cpp_cmd compiles it with
`--openvino`): cpp-openvino against the openvino wheel's C API."""

from __future__ import annotations

import functools
from pathlib import Path

from deploytui.families.common.cpp_build import CXXFLAGS, Line, Wheel


def openvino_line(cxx: str, src: Path, out: Path, ov_dir: Path) -> list[str]:
    """Against the wheel's C API: its headers, and its libopenvino_c.so.VERSION by path (the wheel
    ships no unversioned .so to link by name); RUNPATH its libs/ folder, where libopenvino_c finds
    the runtime and the plugins."""
    lib = ov_dir / "libs"
    c_lib = sorted(lib.glob("libopenvino_c.so.*"))
    if not c_lib:
        raise FileNotFoundError(f"no libopenvino_c.so.* under {lib}")
    return [
        cxx,
        *CXXFLAGS,
        f"-I{ov_dir / 'include'}",
        f"-I{src.parent}",
        str(src),
        "-o",
        str(out),
        "-s",
        str(c_lib[-1]),
        f"-Wl,--enable-new-dtags,-rpath,{lib}",
    ]


def programs(cxx: str, src_dir: Path, ov_dir: Path) -> list[tuple[str, str, Line]]:
    src = src_dir / "openvino_run.cpp"
    return [("cpp-openvino", src.name, functools.partial(openvino_line, cxx, src, ov_dir=ov_dir))]


WHEEL = Wheel(
    flag="openvino",
    help="the openvino package folder of the wheel",
    what="OpenVINO",
    libs="libs",
    route="direct g++ against the wheel's C API (openvino/c/openvino.h, libopenvino_c.so)",
    programs=programs,
)
