"""The C++ build steps' command: `cpp-build` compiles the two libtorch runners against the torch
wheel's libtorch, `cpp-executorch-build` the ExecuTorch runner against the executorch wheel's
headers and libraries (`--executorch` instead of `--torch`).

    python -m deploytui.families.common.cpp_cmd --src cpp --torch .../site-packages/torch --out artifacts/bin
    python -m deploytui.families.common.cpp_cmd --src cpp --executorch .../site-packages/executorch --out ...

Direct g++ lines, not CMake: `find_package(Torch)` on the CUDA build of the wheel stops in
Caffe2Config.cmake ("Your installed Caffe2 version uses CUDA but I cannot find the CUDA
libraries") when there is no CUDA toolkit; see cpp/README.md. Each executable is compiled to a
temporary name and renamed into place, so a failed build never leaves a half-written output.
The last stdout line is one JSON object of facts (compiler, times, sizes, NEEDED, RPATH).
Does not import torch.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deploytui.core.procs import tool_version

# (output name, source, rpath tag). cpp-aoti gets DT_RPATH (--disable-new-dtags): the default AOTI
# package's .so NEEDs libtorch.so and has no RPATH of its own, and only a DT_RPATH of the
# executable is searched for the dependencies of a dlopen'ed library (a DT_RUNPATH is not).
PROGRAMS = (
    ("cpp-torchscript", "torchscript_run.cpp", "runpath"),
    ("cpp-aoti", "aoti_run.cpp", "rpath"),
)

CXXFLAGS = ("-std=c++20", "-O2", "-D_GLIBCXX_USE_CXX11_ABI=1")

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


def readelf_dynamic(path: Path) -> dict[str, list[str]]:
    """NEEDED and RPATH/RUNPATH entries (best effort: empty if readelf is missing)."""
    found: dict[str, list[str]] = {"needed": [], "rpath": [], "runpath": []}
    try:
        out = subprocess.run(
            ["readelf", "-d", str(path)], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return found
    for line in out.splitlines():
        if "[" not in line:
            continue
        value = line[line.index("[") + 1 : line.rindex("]")]
        if "(NEEDED)" in line:
            found["needed"].append(value)
        elif "(RPATH)" in line:
            found["rpath"].append(value)
        elif "(RUNPATH)" in line:
            found["runpath"].append(value)
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="deploytui.families.common.cpp_cmd")
    ap.add_argument("--src", type=Path, required=True, help="the cpp/ folder")
    wheel = ap.add_mutually_exclusive_group(required=True)
    wheel.add_argument("--torch", type=Path, help="the torch package folder of the wheel")
    wheel.add_argument("--executorch", type=Path, help="the executorch package folder of the wheel")
    wheel.add_argument("--openvino", type=Path, help="the openvino package folder of the wheel")
    ap.add_argument("--out", type=Path, required=True, help="where the executables go")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    args = ap.parse_args(argv)
    # Absolute paths: the rpath baked into the executables must not depend on the cwd.
    args.src, args.out = args.src.resolve(), args.out.resolve()
    wheel_dir: Path = (args.torch or args.executorch or args.openvino).resolve()
    libs = "libs" if args.openvino else "lib"
    if not (wheel_dir / "include").is_dir() or not (wheel_dir / libs).is_dir():
        what = "libtorch" if args.torch else "ExecuTorch" if args.executorch else "OpenVINO"
        print(f"error: no {what} headers/libraries under {wheel_dir}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    facts: dict[str, Any] = {"compiler": tool_version(args.cxx), "cxxflags": list(CXXFLAGS), "programs": {}}
    Line = Callable[[Path], list[str]]  # the g++ line that writes the program to the given path
    programs: list[tuple[str, str, Line]]
    if args.torch:
        facts["route"] = "direct g++ (CMake find_package(Torch) needs the CUDA toolkit with this wheel)"
        facts["torch"] = torch_version(wheel_dir)
        programs = [
            (
                name,
                source,
                functools.partial(compile_line, args.cxx, args.src / source, torch_dir=wheel_dir, rpath=r),
            )
            for name, source, r in PROGRAMS
        ]
    elif args.openvino:
        facts["route"] = "direct g++ against the wheel's C API (openvino/c/openvino.h, libopenvino_c.so)"
        src = args.src / "openvino_run.cpp"
        programs = [
            ("cpp-openvino", src.name, functools.partial(openvino_line, args.cxx, src, ov_dir=wheel_dir))
        ]
    else:
        facts["route"] = "direct g++ with the flags of the wheel's executorch-config.cmake"
        src = args.src / "executorch_run.cpp"
        programs = [
            ("cpp-executorch", src.name, functools.partial(executorch_line, args.cxx, src, et_dir=wheel_dir))
        ]
    for name, source, line in programs:
        final = args.out / name
        tmp = args.out / f".{name}.tmp{os.getpid()}"
        try:
            cmd = line(tmp)
        except FileNotFoundError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print("+ " + shlex.join(cmd), flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, check=False)
        dt = time.perf_counter() - t0
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            print(f"error: compiling {source} failed (exit {proc.returncode})", file=sys.stderr)
            return 1
        os.replace(tmp, final)
        facts["programs"][name] = {
            "source": source,
            "compile_s": round(dt, 2),
            "size_bytes": final.stat().st_size,
            **readelf_dynamic(final),
        }
        print(f"{name}: {dt:.1f} s, {final.stat().st_size} bytes", flush=True)
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
