"""The ONNX Runtime cargo step (plan.py declares it, common.cargo_cmd runs it): ort-build builds
the shared ort-run with the wheel's library path compiled in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from deploytui.families.common.cargo_build import Cargo, Recipe, StepError, shared_program


def ort_build(cargo: Cargo, out: Path) -> dict[str, Any]:
    """ort-run, with the onnxruntime wheel's library path (DEPLOYTUI_ORT_DYLIB) compiled in."""
    lib = Path(os.environ.get("DEPLOYTUI_ORT_DYLIB", ""))
    if not lib.is_file():
        raise StepError(f"no ONNX Runtime library at {lib} (is the onnxruntime wheel installed?)")
    facts = shared_program(cargo, "ort-run", out)
    return {**facts, "dylib": str(lib), "dylib_bytes": lib.stat().st_size}


STEPS: dict[str, Recipe] = {"ort-build": lambda c, a, t: ort_build(c, a)}
SHARED = ("ort-build",)  # model-independent: into shared/bin/
CRATES = ("ort", "ort-sys")
