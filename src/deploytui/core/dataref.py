"""The data seam: the samples the user names with `--data`, parsed here without reading them.

    path/to/file.py:samples         a factory in a Python file returning an iterable of samples
    package.module:samples          the same, importable from the user's environment
    path/to/folder                  a folder of tensor files (.safetensors, .npz, .pt), one sample
                                    each, with an optional labels.json

Options follow a comma: `calibration=N` (samples set aside for the int8 quantisers' calibration,
default CALIBRATION) and `seed=S` (the split's seed, default SEED). Reading the samples needs
torch: `deploytui.models.data`, in the build's export-samples step only. This module is light
(standard library): the CLI and the app parse and check `--data` with it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

CALIBRATION = 8  # samples of the calibration part, by default
SEED = 0  # the split's seed, by default
TENSOR_SUFFIXES = (".safetensors", ".npz", ".pt")
LABELS_FILE = "labels.json"  # a folder's labels: {file name: label}, a label an int or nested list


class DataRefError(ValueError):
    """What the user typed does not name data."""


@dataclass(frozen=True)
class DataRef:
    """Data as named by the user: a factory (`file` or `module` with its callable's name) or a
    `folder` of tensor files, and how it is split."""

    kind: str  # "file" | "module" | "folder"
    target: str  # the .py file or the folder (absolute), or the dotted module
    factory: str = ""  # the callable's name ("" for a folder)
    calibration: int = CALIBRATION
    seed: int = SEED

    @property
    def text(self) -> str:
        """The canonical spelling, accepted by `parse`."""
        head = self.target if self.kind == "folder" else f"{self.target}:{self.factory}"
        opts = [f"calibration={self.calibration}"] if self.calibration != CALIBRATION else []
        opts += [f"seed={self.seed}"] if self.seed != SEED else []
        return ",".join([head, *opts])

    def sources(self) -> tuple[Path, ...]:
        """The files whose content is the data: the factory's file (a module's, found without
        importing it), or the folder; a build step's inputs, so a change rebuilds what reads it."""
        if self.kind == "module":
            spec = importlib.util.find_spec(self.target.partition(".")[0])
            found = importlib.util.find_spec(self.target) if spec is not None else None
            return (Path(found.origin),) if found is not None and found.origin else ()
        return (Path(self.target),)

    def problem(self) -> str:
        """ "" when what it names is there, else why not (one line)."""
        path = Path(self.target)
        if self.kind == "file" and not path.is_file():
            return f"data file {path} does not exist"
        if self.kind == "folder" and not path.is_dir():
            return f"data folder {path} does not exist"
        if self.kind == "module" and not self.sources():
            return f"data module {self.target} is not importable here"
        return ""


def _whole(text: str, key: str, value: str, least: int) -> int:
    if not value.isdigit() or int(value) < least:
        raise DataRefError(f"{text!r}: {key} is a whole number >= {least} (got {value!r})")
    return int(value)


def parse(text: str) -> DataRef:
    """`--data` as typed -> a DataRef; raises DataRefError with what is wrong."""
    head, *options = (p.strip() for p in text.strip().split(","))
    if not head:
        raise DataRefError("--data names a folder of tensor files, or file.py:samples, or module:samples")
    split = {"calibration": CALIBRATION, "seed": SEED}
    for item in filter(None, options):
        key, eq, value = (p.strip() for p in item.partition("="))
        if not eq or key not in split:
            raise DataRefError(f"{text!r}: data options are calibration=N and seed=S (got {item!r})")
        split[key] = _whole(text, key, value, 1 if key == "calibration" else 0)
    cal, seed = split["calibration"], split["seed"]
    module, sep, factory = head.rpartition(":")
    if sep and factory.isidentifier() and module:
        if module.endswith(".py"):
            return DataRef("file", str(Path(module).expanduser().resolve()), factory, cal, seed)
        if all(p.isidentifier() for p in module.split(".")):
            return DataRef("module", module, factory, cal, seed)
    path = Path(head).expanduser()
    if path.suffix == ".py":
        raise DataRefError(f"{text!r}: name the factory after the file, like {head}:samples")
    return DataRef("folder", str(path.resolve()), "", cal, seed)
