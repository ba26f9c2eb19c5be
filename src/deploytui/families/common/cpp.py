"""The C++ programs' build step several families share: one program in cpp/ compiled by cpp_cmd
(with the g++ line of the family's cpp_steps) against a wheel's headers and libraries
(`<program>-build`: ExecuTorch's, OpenVINO's; libtorch's two programs have their own step,
families/libtorch/plan.py). The models they load are exported by the export steps; these steps
need only a C++ compiler and the wheel.
"""

from __future__ import annotations

from pathlib import Path

from deploytui.families.common.programs import at
from deploytui.spec.context import BuildContext
from deploytui.spec.steps import Step


def argv(ctx: BuildContext, flag: str, wheel: Path) -> tuple[str, ...]:
    """cpp_cmd compiling the programs of cpp/ that `flag` names against `wheel` into shared/bin/."""
    return (
        ctx.python,
        "-m",
        "deploytui.families.common.cpp_cmd",
        "--src",
        str(ctx.root / "cpp"),
        flag,
        str(wheel),
        "--out",
        str(ctx.bin),
    )


def wheel_step(ctx: BuildContext, executable: str, what: str, flag: str, wheel: Path, source: str) -> Step:
    """One program compiled against a wheel's headers and libraries (`<program>-build`); stale when
    its source or the wheel's files change. `executable` is the program's path as its forms
    declare it (shared/bin/<program>)."""
    program = Path(executable).name
    src = ctx.root / "cpp"
    return Step(
        name=f"{program}-build",
        title=f"C++: compile {program} against {what}",
        argv=argv(ctx, flag, wheel),
        inputs=(
            src / source,
            src / "protocol.h",
            src / "safetensors.h",
            *wheel.parent.glob(f"{wheel.name}-*.dist-info/RECORD"),  # the wheel's files and their hashes
        ),
        outputs=(at(ctx, executable),),
        scope="shared",
        needs=("g++",),
        cwd=ctx.root,
        timeout_s=600.0,
    )
