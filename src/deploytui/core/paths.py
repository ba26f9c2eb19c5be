"""Where the code and its caches live. A model's files are a `Workspace`'s (deploytui.core.workspace)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from deploytui.core.workspace import CHECKOUT

ROOT = CHECKOUT  # the project's sources (rust/, cpp/): the runners' and build steps' working folder


def cache_dir() -> Path:
    """Caches kept outside the clone (cargo target dir, inductor caches): `DEPLOYTUI_CACHE` overrides."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "deploytui"
    return Path(os.environ.get("DEPLOYTUI_CACHE", default)).resolve()


def scratch_dir() -> Path:
    """TMPDIR for torch, onnxruntime and the runners. Inductor keeps its precompiled headers there
    (4 of ~150 MB per AOTI build, keyed by this venv's paths so no other clone can use them): in
    the venv, they go when the clone goes instead of piling up in the shared cache."""
    return Path(sys.prefix) / "tmp"


def python() -> str:
    """The interpreter of this venv: runners and build steps run in it."""
    return sys.executable
