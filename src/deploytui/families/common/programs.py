"""Where a family's declared artifact path (relative to the artifacts root, `{m}` the model's
slug, as its forms say it) lies for one build: the plans name their outputs with it, so each
program's path is declared once, in its family's declarations."""

from __future__ import annotations

from pathlib import Path

from deploytui.spec.context import BuildContext


def at(ctx: BuildContext, rel: str) -> Path:
    return ctx.art / rel.replace("{m}", ctx.slug)
