"""Each family's recipes for a generic driver: the driver (cargo_cmd, cpp_cmd) is given a step's
name or a wheel's flag, and finds what to do in the families' own modules of that name
(deploytui.families.<family>.cargo_steps, .cpp_steps) without naming any of them."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

FAMILIES = Path(__file__).resolve().parents[1]


def family_modules(name: str) -> list[ModuleType]:
    """deploytui.families.<family>.<name> of every family folder that has one, in folder order."""
    return [
        importlib.import_module(f"deploytui.families.{p.parent.name}.{name}")
        for p in sorted(FAMILIES.glob(f"*/{name}.py"))
    ]
