"""Runs one Rust build step: cargo build, copy the results into artifacts, run a tool.

Usage: python -m deploytui.families.common.cargo_cmd STEP --out DIR --rust RUST_DIR --target CARGO_TARGET
       [--stem SLUG --tools SHARED_BIN]
STEP is one of the steps a family's cargo_steps module declares (its `STEPS`; deploytui.families.
common.cargo_build holds what they are made of). A model-independent step (the module's `SHARED`)
builds its programs into DIR/bin (artifacts/shared); the other steps work on one model: DIR is its
folder, SLUG the stem of its files (DIR/SLUG.safetensors, DIR/SLUG.onnx, ...), and SHARED_BIN
holds the shared programs they run.
cargo's progress and diagnostics go to stderr as they come; the last stdout line is one JSON
object of facts (binary sizes, tool versions, the families' crates as Cargo.lock pins them,
warnings).
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

from deploytui.core.procs import tool_version
from deploytui.families.common.cargo_build import Cargo, Recipe, StepError
from deploytui.families.common.recipes import family_modules

RECIPES = "cargo_steps"  # deploytui.families.<family>.cargo_steps: STEPS, SHARED, CRATES


def recipes() -> tuple[dict[str, Recipe], set[str], set[str]]:
    """Every family's cargo steps, the model-independent ones among them, and the crates whose
    versions the facts report."""
    steps: dict[str, Recipe] = {}
    shared: set[str] = set()
    crates: set[str] = set()
    for module in family_modules(RECIPES):
        steps.update(module.STEPS)
        shared |= set(module.SHARED)
        crates |= set(module.CRATES)
    return steps, shared, crates


def _locked_versions(rust: Path, wanted: set[str]) -> dict[str, str]:
    """Versions of the crates that Cargo.lock pins (a family's inner crates may use caret requirements)."""
    try:
        lock = tomllib.loads((rust / "Cargo.lock").read_text())
    except (OSError, ValueError):
        return {}
    return {p["name"]: p["version"] for p in lock.get("package", []) if p["name"] in wanted}


def main(argv: list[str] | None = None) -> int:
    steps, shared, crates = recipes()
    p = argparse.ArgumentParser(prog="deploytui.families.common.cargo_cmd")
    p.add_argument("step", choices=sorted(steps))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--rust", type=Path, required=True)
    p.add_argument("--target", type=Path, required=True)
    p.add_argument("--stem", default=None, help="the model's slug (every model's step)")
    p.add_argument("--tools", type=Path, default=None, help="shared/bin (the shared programs a step runs)")
    args = p.parse_args(argv)
    out = args.out.resolve()
    if args.step not in shared and not args.stem:
        print(f"error: {args.step} needs --stem SLUG", file=sys.stderr)
        return 2
    cargo = Cargo(rust=args.rust, target=args.target, out=out, stem=args.stem)
    try:
        facts = steps[args.step](cargo, out, args.tools)
    except StepError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    facts.update(
        {
            "cargo": tool_version("cargo"),
            "rustc": tool_version("rustc"),
            "cargo_seconds": round(cargo.seconds, 1),
            "crates": _locked_versions(args.rust, crates),
            "warnings": cargo.warnings,
        }
    )
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
