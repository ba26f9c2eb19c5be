"""Build steps for the C++ libtorch forms (cpp-torchscript, cpp-aoti, cpp-aoti-lean).

One step, `cpp-build`, compiles both programs in cpp/ against the installed torch wheel's
include/ and lib/ (see cpp/README.md for the route and why). The models they load are exported
by the torch export steps; this step needs only a C++ compiler and the wheel.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from deploytui.builder.context import BuildContext
from deploytui.builder.steps import Step


def torch_dir() -> Path:
    """The installed torch package folder, found without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        # Not installed: point at where it would be; the step then fails with a clear message.
        return Path("torch-not-installed")
    return Path(next(iter(spec.submodule_search_locations)))


def steps(ctx: BuildContext) -> list[Step]:
    t = torch_dir()
    src = ctx.root / "cpp"
    return [
        Step(
            name="cpp-build",
            title="C++: compile cpp-torchscript and cpp-aoti against the wheel's libtorch",
            argv=(
                ctx.python,
                "-m",
                "deploytui.builder.cpp_cmd",
                "--src",
                str(src),
                "--torch",
                str(t),
                "--out",
                str(ctx.bin),
            ),
            inputs=(
                src / "torchscript_run.cpp",
                src / "aoti_run.cpp",
                src / "common.h",
                src / "safetensors.h",
                t / "version.py",  # wheel version + git hash
                t / "include" / "torch" / "csrc" / "api" / "include" / "torch" / "version.h",
            ),
            outputs=(ctx.bin / "cpp-torchscript", ctx.bin / "cpp-aoti"),
            scope="shared",
            needs=("g++",),
            cwd=ctx.root,
            timeout_s=1800.0,
        )
    ]
