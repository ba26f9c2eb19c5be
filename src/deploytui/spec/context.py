"""What every build step module gets: where things are and which environment to run in."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from deploytui.core import paths, runenv
from deploytui.core.dataref import DataRef
from deploytui.core.modelref import ModelRef
from deploytui.core.workspace import Workspace


def package_dir(name: str) -> Path:
    """An installed package's folder (torch, onnxruntime, executorch), found without importing it;
    `<name>-not-installed` when it is not (the step that needs it then fails with a clear message)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return Path(f"{name}-not-installed")
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass(frozen=True)
class BuildContext:
    root: Path  # the project checkout
    art: Path  # artifacts root: <slug>/ per model, shared/ for the model-independent programs
    cache: Path  # caches outside the clone (cargo target, inductor)
    python: str  # this venv's interpreter
    model: ModelRef  # the model this build is for
    data: DataRef | None = None  # the user's samples (`--data`), else sets drawn like the example

    @classmethod
    def of(cls, ws: Workspace) -> BuildContext:
        """The build of the workspace's model, into its artifacts folder."""
        return cls(paths.ROOT, ws.artifacts, paths.cache_dir(), paths.python(), ws.model, ws.data)

    @property
    def ws(self) -> Workspace:
        """The workspace this build writes (its bundles folder is no concern of the build)."""
        return Workspace.at(self.model, self.art).with_data(self.data)

    @property
    def slug(self) -> str:
        return self.model.slug

    # the layout is the Workspace's: these name its folders in the steps' own words
    @property
    def mdir(self) -> Path:
        """This model's folder: its exports, per-model binaries, manifest, results, logs."""
        return self.ws.model_dir

    @property
    def shared(self) -> Path:
        """The model-independent programs (C++ loaders, burn tools), built once for every model."""
        return self.ws.shared_dir

    @property
    def bin(self) -> Path:
        return self.ws.bin_dir

    @property
    def mbin(self) -> Path:
        return self.mdir / "bin"

    @property
    def cargo_target(self) -> Path:
        return Path(os.environ.get("CARGO_TARGET_DIR", self.cache / "cargo-target"))

    def torch_env(self) -> dict[str, str]:
        """Keep torch's and onnxruntime's writes inside the venv and our cache."""
        return runenv.torch_env(self.cache)
