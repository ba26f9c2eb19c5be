"""Build steps for the C++ forms: libtorch (cpp-torchscript, cpp-aoti, cpp-aoti-lean),
ExecuTorch (cpp-executorch) and OpenVINO (openvino-native: cpp-openvino on the wheel's C API).

`cpp-build` compiles the two libtorch programs in cpp/ against the installed torch wheel's
include/ and lib/ (see cpp/README.md for the route and why); `cpp-executorch-build` compiles
executorch_run.cpp against the executorch wheel's headers and shared libraries. The models they
load are exported by the torch export steps; these steps need only a C++ compiler and the wheel.
"""

from __future__ import annotations

from pathlib import Path

from deploytui.builder.context import BuildContext, package_dir
from deploytui.builder.steps import Step


def steps(ctx: BuildContext) -> list[Step]:
    t, et, ov = package_dir("torch"), package_dir("executorch"), package_dir("openvino")
    src = ctx.root / "cpp"
    return [
        Step(
            name="cpp-build",
            title="C++: compile cpp-torchscript and cpp-aoti against the wheel's libtorch",
            argv=(
                ctx.python,
                "-m",
                "deploytui.families.common.cpp_cmd",
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
                src / "protocol.h",
                src / "safetensors.h",
                t / "version.py",  # wheel version + git hash
                t / "include" / "torch" / "csrc" / "api" / "include" / "torch" / "version.h",
            ),
            outputs=(ctx.bin / "cpp-torchscript", ctx.bin / "cpp-aoti"),
            scope="shared",
            needs=("g++",),
            cwd=ctx.root,
            timeout_s=1800.0,
        ),
        _wheel_step(
            ctx,
            "cpp-executorch",
            "ExecuTorch's C++ runtime (no libtorch)",
            "--executorch",
            et,
            "executorch_run.cpp",
        ),
        _wheel_step(
            ctx,
            "cpp-openvino",
            "the openvino wheel's C API (no Python)",
            "--openvino",
            ov,
            "openvino_run.cpp",
        ),
    ]


def _wheel_step(ctx: BuildContext, program: str, what: str, flag: str, wheel: Path, source: str) -> Step:
    """One program compiled against a wheel's headers and libraries (`<program>-build`); stale when
    its source or the wheel's files change."""
    src = ctx.root / "cpp"
    return Step(
        name=f"{program}-build",
        title=f"C++: compile {program} against {what}",
        argv=(
            ctx.python,
            "-m",
            "deploytui.families.common.cpp_cmd",
            "--src",
            str(src),
            flag,
            str(wheel),
            "--out",
            str(ctx.bin),
        ),
        inputs=(
            src / source,
            src / "protocol.h",
            src / "safetensors.h",
            *wheel.parent.glob(f"{wheel.name}-*.dist-info/RECORD"),  # the wheel's files and their hashes
        ),
        outputs=(ctx.bin / program,),
        scope="shared",
        needs=("g++",),
        cwd=ctx.root,
        timeout_s=600.0,
    )
