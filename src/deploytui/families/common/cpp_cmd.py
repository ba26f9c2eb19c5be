"""The C++ build steps' command: compiles the programs of cpp/ that a family declares for one wheel
(its cpp_steps module's `WHEEL`, named by its option: `--torch DIR`, ...) against that wheel's
headers and libraries.

    python -m deploytui.families.common.cpp_cmd --src cpp --<wheel> .../site-packages/<pkg> --out DIR

Direct g++ lines, not CMake (see cpp/README.md). Each executable is compiled to a temporary name
and renamed into place, so a failed build never leaves a half-written output. The last stdout
line is one JSON object of facts (compiler, times, sizes, NEEDED, RPATH). Does not import torch.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from deploytui.core.procs import tool_version
from deploytui.families.common.cpp_build import CXXFLAGS, Wheel
from deploytui.families.common.recipes import family_modules

RECIPES = "cpp_steps"  # deploytui.families.<family>.cpp_steps: WHEEL


def wheels() -> list[Wheel]:
    """Every family's wheel its C++ programs compile against."""
    return [module.WHEEL for module in family_modules(RECIPES)]


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
    known = wheels()
    ap = argparse.ArgumentParser(prog="deploytui.families.common.cpp_cmd")
    ap.add_argument("--src", type=Path, required=True, help="the cpp/ folder")
    group = ap.add_mutually_exclusive_group(required=True)
    for w in known:
        group.add_argument(f"--{w.flag}", type=Path, help=w.help)
    ap.add_argument("--out", type=Path, required=True, help="where the executables go")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    args = ap.parse_args(argv)
    wheel = next(w for w in known if getattr(args, w.flag) is not None)
    # Absolute paths: the rpath baked into the executables must not depend on the cwd.
    args.src, args.out = args.src.resolve(), args.out.resolve()
    wheel_dir: Path = getattr(args, wheel.flag).resolve()
    if not (wheel_dir / "include").is_dir() or not (wheel_dir / wheel.libs).is_dir():
        print(f"error: no {wheel.what} headers/libraries under {wheel_dir}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    facts: dict[str, Any] = {"compiler": tool_version(args.cxx), "cxxflags": list(CXXFLAGS), "programs": {}}
    facts["route"] = wheel.route
    facts.update(wheel.facts(wheel_dir))
    for name, source, line in wheel.programs(args.cxx, args.src, wheel_dir):
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
