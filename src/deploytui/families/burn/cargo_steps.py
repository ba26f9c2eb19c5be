"""The burn family's cargo steps (plan.py declares them, common.cargo_cmd runs them): burn-tools
builds the shared tools (burn-convert, burn-file, burn-st), burn-convert writes <m>.bpk,
burn-embed compiles it in, burn-capture records the forward's graph."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from deploytui.core import jsonio
from deploytui.families.common.cargo_build import Cargo, Recipe, StepError, copy, run

TOOLS = ("burn-convert", "burn-file", "burn-st")


def burn_tools(cargo: Cargo, out: Path, tools: Path | None) -> dict[str, Any]:
    """burn-convert, burn-file and burn-st: an Mlp of any layout, shared by every model."""
    found = cargo.build(*TOOLS)
    return {"sizes": {f"bin/{b}": copy(found["bins"][b], out / "bin" / b) for b in TOOLS}}


def burn_convert(cargo: Cargo, out: Path, tools: Path | None) -> dict[str, Any]:
    stem = cargo.stem
    if tools is None:
        raise StepError("--tools SHARED_BIN is needed (the burn-convert that burn-tools built)")
    bpk, tmp = out / f"{stem}.bpk", out / f"{stem}.bpk.tmp.bpk"
    run([str(tools / "burn-convert"), str(out / f"{stem}.safetensors"), str(tmp)])
    # written aside, then moved: never half-written. burn-convert numbers the parameters
    # (burnpack stores their ids), so the bytes are reproducible; an identical .bpk is left
    # untouched, as burn-embed's build script watches its mtime.
    if bpk.is_file() and bpk.read_bytes() == tmp.read_bytes():
        tmp.unlink()
    else:
        os.replace(tmp, bpk)
    return {"sizes": {f"{stem}.bpk": bpk.stat().st_size}}


def burn_embed(cargo: Cargo, out: Path, tools: Path | None) -> dict[str, Any]:
    bpk = out / f"{cargo.stem}.bpk"
    if not bpk.is_file():
        raise StepError(f"{bpk} is missing: run burn-convert first")
    found = cargo.build("burn-embed")
    return {"sizes": {"bin/burn-embed": copy(found["bins"]["burn-embed"], out / "bin" / "burn-embed")}}


def burn_capture(cargo: Cargo, art: Path, tools: Path | None) -> dict[str, Any]:
    found = cargo.build("burn-mlp-capture")
    exe = art / "bin" / "burn-mlp-capture"
    size = copy(found["bins"]["burn-mlp-capture"], exe)
    out = run([str(exe), str(art / f"{cargo.stem}.bpk"), str(art / "capture.json")])
    summary = jsonio.last_object(out)
    if summary is None and out.strip():
        last = out.strip().splitlines()[-1][:120]
        raise StepError(f"burn-mlp-capture printed no JSON summary (last line: {last!r})")
    return {"sizes": {"bin/burn-mlp-capture": size}, "capture": summary or {}}


STEPS: dict[str, Recipe] = {
    "burn-tools": burn_tools,
    "burn-convert": burn_convert,
    "burn-embed": burn_embed,
    "burn-capture": burn_capture,
}
SHARED = ("burn-tools",)  # model-independent: into shared/bin/
CRATES = ("burn", "burn-core", "burn-flex", "burn-store", "burn-capture")
