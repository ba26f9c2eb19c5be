"""The data seam: the samples the user names with `--data`, parsed here without reading them.

    path/to/file.py:samples         a factory in a Python file returning an iterable of samples
    package.module:samples          the same, importable from the user's environment
    path/to/folder                  a folder of tensor files (.safetensors, .npz, .pt), one sample
                                    each, with an optional labels.json; or a folder of images in
                                    class sub-folders (models/images.py)

Options follow a comma: `calibration=N` (samples set aside for the int8 quantisers' calibration,
default CALIBRATION), `seed=S` (the split's seed, default SEED) and, for images,
`transform=file.py:fn` (or `module:fn`: a PIL image -> the model's input tensor for one image, in
place of the model's own preprocessing). Reading the samples needs
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
    transform: str = ""  # an image folder's preprocessing, "file.py:fn" or "module:fn" ("": the model's)

    @property
    def text(self) -> str:
        """The canonical spelling, accepted by `parse`."""
        head = self.target if self.kind == "folder" else f"{self.target}:{self.factory}"
        opts = [f"calibration={self.calibration}"] if self.calibration != CALIBRATION else []
        opts += [f"seed={self.seed}"] if self.seed != SEED else []
        opts += [f"transform={self.transform}"] if self.transform else []
        return ",".join([head, *opts])

    def transform_ref(self) -> tuple[str, str, str] | None:
        """The named transform as (kind "file" | "module", target, function), or None."""
        if not self.transform:
            return None
        target, _, fn = self.transform.rpartition(":")
        return ("file" if target.endswith(".py") else "module", target, fn)

    def sources(self) -> tuple[Path, ...]:
        """The files whose content is the data: the factory's file (a module's, found without
        importing it), or the folder, and a named transform's file; a build step's inputs, so a
        change rebuilds what reads it."""
        own = _module_file(self.target) if self.kind == "module" else (Path(self.target),)
        named = self.transform_ref()
        if named is None:
            return own
        return (*own, *((Path(named[1]),) if named[0] == "file" else _module_file(named[1])))

    def problem(self) -> str:
        """ "" when what it names is there, else why not (one line)."""
        path = Path(self.target)
        if self.kind == "file" and not path.is_file():
            return f"data file {path} does not exist"
        if self.kind == "folder" and not path.is_dir():
            return f"data folder {path} does not exist"
        if self.kind == "module" and not _module_file(self.target):
            return f"data module {self.target} is not importable here"
        named = self.transform_ref()
        if named and named[0] == "file" and not Path(named[1]).is_file():
            return f"transform file {named[1]} does not exist"
        if named and named[0] == "module" and not _module_file(named[1]):
            return f"transform module {named[1]} is not importable here"
        return ""


def _module_file(name: str) -> tuple[Path, ...]:
    """A module's source file, found without importing it (() when it is not there)."""
    spec = importlib.util.find_spec(name.partition(".")[0])
    found = importlib.util.find_spec(name) if spec is not None else None
    return (Path(found.origin),) if found is not None and found.origin else ()


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
    transform = ""
    for item in filter(None, options):
        key, eq, value = (p.strip() for p in item.partition("="))
        if eq and key == "transform":
            transform = _callable(text, value)
            continue
        if not eq or key not in split:
            raise DataRefError(
                f"{text!r}: data options are calibration=N, seed=S and transform=file.py:fn (got {item!r})"
            )
        split[key] = _whole(text, key, value, 1 if key == "calibration" else 0)
    cal, seed = split["calibration"], split["seed"]
    named = _callable(text, head, quiet=True)
    if named:
        if transform:
            raise DataRefError(f"{text!r}: transform= is for a folder of images, not a factory")
        module, _, factory = named.rpartition(":")
        kind = "file" if module.endswith(".py") else "module"
        return DataRef(kind, module, factory, cal, seed)
    path = Path(head).expanduser()
    if path.suffix == ".py":
        raise DataRefError(f"{text!r}: name the factory after the file, like {head}:samples")
    return DataRef("folder", str(path.resolve()), "", cal, seed, transform)


def _callable(text: str, value: str, quiet: bool = False) -> str:
    """`file.py:fn` (the file made absolute) or `package.module:fn` as typed, else "" (`quiet`)
    or the DataRefError."""
    module, sep, fn = value.rpartition(":")
    if sep and fn.isidentifier() and module:
        if module.endswith(".py"):
            return f"{Path(module).expanduser().resolve()}:{fn}"
        if all(p.isidentifier() for p in module.split(".")):
            return value
    if quiet:
        return ""
    raise DataRefError(f"{text!r}: transform= names a function, like transform=prep.py:to_tensor")
