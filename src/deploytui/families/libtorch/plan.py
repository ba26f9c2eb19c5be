"""`cpp-build`: the two libtorch programs in cpp/ compiled against the installed torch wheel's
include/ and lib/ (see cpp/README.md for the route and why), by families/common/cpp_cmd.py with
the g++ lines of cpp_steps.py."""

from __future__ import annotations

from deploytui.families.common.cpp import argv
from deploytui.families.common.programs import at
from deploytui.families.libtorch.family import CPP_AOTI, CPP_TORCHSCRIPT
from deploytui.spec.context import BuildContext, package_dir
from deploytui.spec.steps import Step


def steps(ctx: BuildContext) -> list[Step]:
    t = package_dir("torch")
    src = ctx.root / "cpp"
    return [
        Step(
            name="cpp-build",
            title="C++: compile cpp-torchscript and cpp-aoti against the wheel's libtorch",
            argv=argv(ctx, "--torch", t),
            inputs=(
                src / "torchscript_run.cpp",
                src / "aoti_run.cpp",
                src / "common.h",
                src / "protocol.h",
                src / "safetensors.h",
                t / "version.py",  # wheel version + git hash
                t / "include" / "torch" / "csrc" / "api" / "include" / "torch" / "version.h",
            ),
            outputs=(at(ctx, CPP_TORCHSCRIPT), at(ctx, CPP_AOTI)),
            scope="shared",
            needs=("g++",),
            cwd=ctx.root,
            timeout_s=1800.0,
        ),
    ]
