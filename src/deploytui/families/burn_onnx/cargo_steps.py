"""The burn-onnx cargo steps (plan.py declares them, common.cargo_cmd runs them): burn-onnx-gen's
programs generated from <m>.onnx and built, with LoadStrategy::File (burn-onnx-file),
::Embedded (burn-onnx-embed) or Model::from_file (burn-onnx-bpk, its .bpk shipped beside it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deploytui.families.common.cargo_build import Cargo, Recipe, StepError, copy


def _onnx_build(cargo: Cargo, bin_name: str, embed: bool) -> tuple[Path, Path]:
    """cargo build of one burn-onnx-gen binary; returns (binary, OUT_DIR/model)."""
    if not cargo.onnx.is_file():
        raise StepError(f"{cargo.onnx} is missing: run export-onnx first")
    found = cargo.build(bin_name, features=("burn-onnx-gen/embed",) if embed else ())
    out_dir = found["out_dirs"].get("burn-onnx-gen")
    if out_dir is None:
        raise StepError("cargo did not report burn-onnx-gen's build-script OUT_DIR")
    return found["bins"][bin_name], out_dir / "model"


def burn_onnx(cargo: Cargo, art: Path, embed: bool) -> dict[str, Any]:
    """burn-onnx-default (Model::default()) copied as burn-onnx-file (LoadStrategy::File) or,
    built with feature `embed`, as burn-onnx-embed (LoadStrategy::Embedded)."""
    stem = cargo.onnx.stem
    exe, model = _onnx_build(cargo, "burn-onnx-default", embed)
    name = "burn-onnx-embed" if embed else "burn-onnx-file"
    sizes = {f"bin/{name}": copy(exe, art / "bin" / name)}
    rs_name = f"{stem}_embed.rs" if embed else f"{stem}.rs"
    sizes[f"onnx/{rs_name}"] = copy(model / f"{stem}.rs", art / "onnx" / rs_name)
    facts: dict[str, Any] = {"sizes": sizes, "out_dir": str(model.parent), "onnx": str(cargo.onnx)}
    if not embed:
        sizes[f"onnx/{stem}.bpk"] = copy(model / f"{stem}.bpk", art / "onnx" / f"{stem}.bpk")
        facts["baked_bpk_path"] = str(model / f"{stem}.bpk")
    return facts


def burn_onnx_bpk(cargo: Cargo, art: Path) -> dict[str, Any]:
    """burn-onnx-bpk (LoadStrategy::File code, loaded with Model::from_file(MODEL_FILE)) and the
    generated .bpk copied next to it: the pair runs from anywhere."""
    stem = cargo.onnx.stem
    exe, model = _onnx_build(cargo, "burn-onnx-bpk", embed=False)
    bpk = f"bin/{stem}_onnx.bpk"
    sizes = {
        "bin/burn-onnx-bpk": copy(exe, art / "bin" / "burn-onnx-bpk"),
        bpk: copy(model / f"{stem}.bpk", art / bpk),
    }
    return {"sizes": sizes, "out_dir": str(model.parent), "onnx": str(cargo.onnx), "bpk": bpk}


STEPS: dict[str, Recipe] = {
    "burn-onnx-file": lambda c, a, t: burn_onnx(c, a, embed=False),
    "burn-onnx-embed": lambda c, a, t: burn_onnx(c, a, embed=True),
    "burn-onnx-bpk": lambda c, a, t: burn_onnx_bpk(c, a),
}
SHARED: tuple[str, ...] = ()
CRATES = ("burn-onnx", "onnx-ir")
