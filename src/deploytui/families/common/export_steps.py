"""The exports of the model as build steps: each family declares its own (its plan's `Export`s,
their functions in its `exports.py`), one step (and one process, export_cmd) each."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deploytui.core.modelref import LIBRARY_KINDS, LIBRARY_PACKAGE
from deploytui.spec.context import BuildContext
from deploytui.spec.steps import MODEL_STEP, Step

PKG = Path(__file__).resolve().parents[2]
# what every export imports (export_cmd and the model's loading), for the build's fork server
PRELOAD = ("torch", "torch.export", "deploytui.models.load", "deploytui.families.common.torch_export")


@dataclass(frozen=True)
class Export:
    """One export of the model, run as `python -m deploytui.families.common.export_cmd FUNCTION`:
    its step name, its function (one of its family's `exports.py`: model, folder, slug -> facts;
    the process imports it by its module and name), what it writes (relative to the model's folder;
    {m} = slug), its title, the steps it needs besides export-model (the files it starts
    from), whether it compiles C++ (g++), and whether it is built only on demand (`bench --batch`'s
    dynamic-batch exports, registry.for_batch)."""

    step: str
    function: Callable[[Any, Path, str], dict[str, Any]]
    outputs: tuple[str, ...]
    title: str
    after: tuple[str, ...] = ()
    compiles: bool = False
    on_demand: bool = False
    reads: tuple[str, ...] = ()  # files of other steps it reads (relative): a change rebuilds it
    takes_data: bool = False  # given the user's `--data` (export-samples)


def _model_inputs(ctx: BuildContext) -> tuple[Path, ...]:
    """The model's source: the zoo, the user's file (a module's is found by import), or the
    library model's files (a saved folder's config and weights, a config, a weights file); and
    the seam that loads it and names its inputs and outputs."""
    ref = ctx.model
    seam = (
        PKG / "models" / "load.py",
        PKG / "runners" / "torch_bundle.py",
        PKG / "runners" / "protocol.py",
    )
    if ref.kind == "file":
        return (Path(ref.target), *seam)
    if ref.kind in LIBRARY_KINDS:
        target = Path(ref.target)
        files = sorted(p for p in target.iterdir() if p.is_file()) if target.is_dir() else [target]
        weights = [Path(str(ref.kwargs["weights"]))] if "weights" in ref.kwargs else []
        local = [p for p in (*files, *weights) if p.is_file()]
        return (PKG / "models" / "library.py", *local, *seam)
    return (PKG / "models" / "zoo.py", *seam)


def _data_inputs(ctx: BuildContext) -> tuple[Path, ...]:
    """The user's data and the module that reads it: what a `takes_data` export starts from."""
    assert ctx.data is not None
    return (*ctx.data.sources(), *(PKG / "models" / f for f in ("data.py", "data_types.py", "images.py")))


def preload(ctx: BuildContext, function: Callable[..., Any]) -> tuple[str, ...]:
    """The modules an export may find imported when it starts (the build forks it from one
    process that imported them once, deploytui.builder.forkserver): what every export imports, the
    model's library, the export's module and what that module lists in its `PRELOAD`."""
    ref = ctx.model
    library = ("deploytui.models.library", LIBRARY_PACKAGE[ref.kind]) if ref.kind in LIBRARY_KINDS else ()
    own = getattr(sys.modules[function.__module__], "PRELOAD", ())
    return (*PRELOAD, *library, function.__module__, *own)


def _module_file(function: Callable[..., Any]) -> Path:
    """The source file of an export function's module."""
    return Path(sys.modules[function.__module__].__file__ or "")


def steps_of(ctx: BuildContext, exports: tuple[Export, ...]) -> list[Step]:
    """One step per export, each run in its own process by export_cmd; an export's inputs are the
    model's, export_cmd and what the exports share, and its own exports module."""
    shared = (
        *_model_inputs(ctx),
        *(PKG / "families" / "common" / f for f in ("export_cmd.py", "torch_export.py", "samples.py")),
    )
    return [
        Step(
            name=e.step,
            title=e.title,
            argv=(
                ctx.python,
                "-m",
                "deploytui.families.common.export_cmd",
                f"{e.function.__module__}:{e.function.__name__}",
                str(ctx.mdir),
                "--model",
                ctx.model.text,
                *(("--data", ctx.data.text) if e.takes_data and ctx.data else ()),
            ),
            inputs=(
                *shared,
                _module_file(e.function),
                *(ctx.mdir / r for r in e.reads),
                *(_data_inputs(ctx) if e.takes_data and ctx.data else ()),
            ),
            outputs=tuple(ctx.mdir / o.replace("{m}", ctx.slug) for o in e.outputs),
            needs=("g++",) if e.compiles else (),
            env=ctx.torch_env(),
            stage="export",
            after=() if e.step == MODEL_STEP else (MODEL_STEP, *e.after),
            on_demand=e.on_demand,
            preload=preload(ctx, e.function),
        )
        for e in exports
    ]
