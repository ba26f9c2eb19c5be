"""What every build step module gets: where things are and which environment to run in."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from deploytui import paths, runenv


@dataclass(frozen=True)
class BuildContext:
    root: Path  # the project checkout
    art: Path  # artifacts folder (outputs)
    cache: Path  # caches outside the clone (cargo target, inductor)
    python: str  # this venv's interpreter

    @classmethod
    def default(cls) -> BuildContext:
        return cls(root=paths.ROOT, art=paths.artifacts_dir(), cache=paths.cache_dir(), python=paths.python())

    @property
    def bin(self) -> Path:
        return self.art / "bin"

    @property
    def cargo_target(self) -> Path:
        return Path(os.environ.get("CARGO_TARGET_DIR", self.cache / "cargo-target"))

    def torch_env(self) -> dict[str, str]:
        """Keep torch's and onnxruntime's writes inside the venv and our cache."""
        return runenv.torch_env(self.cache)
