"""What goes into a bundle, as plain data (no form registry, no torch)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from deploytui.core import defaults

LIB_DIR = "lib"  # bundled shared libraries (RUNPATH $ORIGIN)
BIN_DIR = "bin"  # programs (RUNPATH $ORIGIN/../lib)
MODEL_DIR = "model"
MANIFEST = "manifest.json"
RUN = "run"  # the entry: runs the program on the bundled model files, "$@" passed through
SETUP = "setup"  # Python bundles: makes ./venv from requirements.txt
VENV = "venv"
CHECK_DIR = "check"  # where a check's run writes its outputs (mounted writable at /out); not shipped
REPEAT = defaults.REPEAT  # the run entry's default K (steady-state forwards after the first)


@dataclass(frozen=True)
class Library:
    """A shared library a real run loads: the name the loader asked for and the file it found."""

    name: str
    path: Path


@dataclass(frozen=True)
class BundleSpec:
    """Everything a bundle holds.

    `files` are copied (source, path inside the bundle); `texts` are written (path, content).
    `entry` is the run entry's command, its words relative to the bundle root (the first one is
    the program: a bundled file, or `venv/bin/python` for a Python bundle); the run entry adds the
    runner protocol's flags: `--inputs` the bundled `inputs` file, `--outputs` its first argument
    (default ./outputs.safetensors), `--repeat` its second (default REPEAT). Compiled bundles list
    the `libraries` to copy into lib/ and the `programs` whose RUNPATH is set to find them;
    Python bundles give `requirements` (exact pins) and the `python` the target must provide.
    """

    name: str
    entry: tuple[str, ...]
    inputs: str  # the model's example inputs (inputs.safetensors), as a path in the bundle
    files: tuple[tuple[Path, str], ...] = ()
    texts: tuple[tuple[str, str], ...] = ()
    programs: tuple[str, ...] = ()
    libraries: tuple[Library, ...] = ()
    requirements: tuple[str, ...] = ()
    python: str | None = None  # "3.11": the Python the target must provide
    system_libraries: tuple[str, ...] = ()  # what the OS must provide (libc.so.6, ld-linux-x86-64.so.2, …)
    note: str = ""
    arch: str = ""  # `uname -m` of the machine it is built for ("": this one)
    extra: dict[str, object] = field(default_factory=dict)  # facts copied into the manifest as they are

    @property
    def is_python(self) -> bool:
        return bool(self.requirements)
