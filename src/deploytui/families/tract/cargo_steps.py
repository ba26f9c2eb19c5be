"""The tract cargo steps (plan.py declares them, common.cargo_cmd runs them): tract-build builds
the shared tract-run, tract-optimise has it load and optimise <m>.onnx."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from deploytui.families.common.cargo_build import Cargo, Recipe, StepError, run, shared_program


def tract_optimise(cargo: Cargo, art: Path, tools: Path | None) -> dict[str, Any]:
    """tract loads, types (from the example inputs) and optimises the model's .onnx: its node
    list goes to tract_nodes.txt, and an operator tract lacks fails here with tract's own line."""
    if tools is None:
        raise StepError("--tools SHARED_BIN is needed (the tract-run that tract-build built)")
    argv = [str(tools / "tract-run"), "--nodes", str(cargo.onnx), "--inputs", str(art / "inputs.safetensors")]
    nodes = run(argv)
    out = art / "tract_nodes.txt"
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(nodes)
    os.replace(tmp, out)
    ops = [line.split("\t")[1] for line in nodes.splitlines() if line.count("\t") >= 2]
    return {"nodes": len(ops), "ops": sorted(set(ops))}


STEPS: dict[str, Recipe] = {
    "tract-build": lambda c, a, t: shared_program(c, "tract-run", a),
    "tract-optimise": tract_optimise,
}
SHARED = ("tract-build",)  # model-independent: into shared/bin/
CRATES = ("tract-onnx", "tract-core")
