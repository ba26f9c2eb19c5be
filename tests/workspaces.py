"""The suite's workspaces: a1 in the real artifacts folder (the one `built_artifacts` builds:
DEPLOYTUI_ARTIFACTS when the suite is run with it, as the CLI would take it, else the
checkout's), and any other model there."""

from __future__ import annotations

from deploytui.core.modelref import parse
from deploytui.core.workspace import Workspace

A1 = Workspace.from_env(parse("a1"))


def built(model: str) -> Workspace:
    """`model` (a --model text) in the real artifacts folder."""
    return A1.for_model(parse(model))
