"""A build step: a command with declared inputs and outputs, skipped when up to date."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from deploytui.core.hashing import sha256_file

SKIP_DIRS = {"target", "__pycache__", ".git"}
# the step that writes the weights, the example inputs and eager's reference (model.json too):
# every other export starts from it, every run reads it
MODEL_STEP = "export-model"
# the step that writes the evaluation and calibration sets (the user's `--data`, split, or drawn)
SAMPLES_STEP = "export-samples"


@dataclass(frozen=True)
class Step:
    """One command of the build.

    name     -- stable id, e.g. "export-torchscript"; `deploytui build --only NAME`
    title    -- what the progress line says
    argv     -- the command, run without a shell
    inputs   -- files or folders whose content decides whether the step is stale
    outputs  -- files the step must leave behind (all must exist after a successful run); one
                that is missing or changed since makes the step run again
    needs    -- executables that must be on PATH when the step has to run; missing ones make it
                (and the forms that depend on it) unavailable with that reason instead of
                failing the build
    after    -- names of steps that must have succeeded first
    env      -- extra environment for the command
    scope    -- "model" (recorded in artifacts/<slug>/manifest.json) or "shared" (built once for
                every model, artifacts/shared/manifest.json)
    stage    -- "export" or "build": the stage of a form's way through that this step is
    preload  -- modules a `python -m` step may find imported: the build forks such steps from
                one process that imported every step's preload once (deploytui.builder.forkserver);
                () runs the step as a fresh process
    A command may print one JSON object as its last stdout line: it is kept in the manifest as
    the step's `facts` (warnings seen, timings, tool versions).
    """

    name: str
    title: str
    argv: tuple[str, ...]
    inputs: tuple[Path, ...]
    outputs: tuple[Path, ...]
    needs: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    timeout_s: float = 3600.0
    scope: str = "model"
    stage: str = "build"
    on_demand: bool = False  # built only when named (`only`), not by a whole build
    preload: tuple[str, ...] = ()

    def fingerprint(self, art: Path) -> str:
        """Hash of the command, its environment and the content of every input, with the
        artifacts folder `art` written as `$ART` wherever it appears: a copied or moved artifacts
        folder finds its steps up to date."""
        h = hashlib.sha256()
        h.update(_relative(repr((self.argv, sorted(self.env.items()))), art).encode())
        for path in self.inputs:
            for f in _files(path):
                h.update(_relative(str(f), art).encode())
                h.update(_file_digest(f).encode())
        return h.hexdigest()


ART = "$ART"  # the artifacts folder in a fingerprint


def _relative(text: str, art: Path) -> str:
    return text.replace(str(art), ART)


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        return [path]  # missing: hashed by name only, and the digest marks it missing
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        found.extend(Path(dirpath) / n for n in sorted(filenames))
    return found


def _file_digest(path: Path) -> str:
    try:
        return sha256_file(path)
    except OSError:
        return "missing"
