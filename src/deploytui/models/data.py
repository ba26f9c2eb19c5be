"""The user's samples (`--data`, core/dataref.py), read one at a time: a factory's iterable or a
folder's tensor files, each checked against the model's example inputs (name, shape, dtype) and
given as the model's flat named inputs plus its label, if any.

Runs in the build's export-samples step (torch imported); every refusal is a DataError whose
message is one line naming the sample and the input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from deploytui.core.dataref import LABELS_FILE, TENSOR_SUFFIXES, DataRef
from deploytui.models.load import INPUT_DTYPES, user_module
from deploytui.runners.protocol import POSITIONAL

LABEL_KEYS = ("label", "labels")  # a sample's label, in a factory's dict or a tensor file


class DataError(ValueError):
    """The data cannot be used: one line for the user, naming the sample."""


@dataclass
class Sample:
    name: str  # "sample 3" (a factory's) or the file's name (a folder's)
    inputs: dict[str, torch.Tensor]  # the model's flat inputs by name, in its order
    label: torch.Tensor | None = None


@dataclass
class Skipped:
    """A folder's files that could not be read: how many, and the first one with why."""

    count: int = 0
    first: str = ""
    names: list[str] = field(default_factory=list)


def _shown(t: torch.Tensor) -> str:
    return f"{INPUT_DTYPES.get(t.dtype, str(t.dtype).removeprefix('torch.'))}{list(t.shape)}"


def flat_inputs(
    example: dict[str, torch.Tensor], name: str, args: Any, kwargs: Any
) -> dict[str, torch.Tensor]:
    """One sample's call (`args`, `kwargs`) as the model's flat named inputs (input_0, ..., then
    the keywords), each checked against the example's."""
    if isinstance(args, torch.Tensor):
        args = (args,)
    if not isinstance(args, (tuple, list)) or not isinstance(kwargs, dict):
        raise DataError(
            f"{name}: args must be a tuple of tensors and kwargs a dict, got {type(args).__name__}"
        )
    given = {f"{POSITIONAL}{i}": t for i, t in enumerate(args)} | dict(kwargs)
    missing = [n for n in example if n not in given]
    extra = [n for n in given if n not in example]
    if missing or extra:
        raise DataError(
            f"{name}: {'has no ' + ', '.join(missing) if missing else 'has ' + ', '.join(map(str, extra))}"
            f" (the model takes {', '.join(example)})"
        )
    out = {}
    for n, want in example.items():
        t = given[n]
        if not isinstance(t, torch.Tensor):
            raise DataError(f"{name}: {n} is a {type(t).__name__}, not a tensor")
        if t.dtype != want.dtype or t.shape != want.shape:
            raise DataError(f"{name}: {n} is {_shown(t)}, the model takes {_shown(want)}")
        out[n] = t.contiguous()
    return out


def _label(name: str, value: Any) -> torch.Tensor | None:
    if value is None:
        return None
    try:
        t = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError) as e:
        raise DataError(f"{name}: its label is not a tensor of class indices: {e}") from None
    if t.dtype.is_floating_point or t.dtype == torch.bool or t.is_complex():
        raise DataError(f"{name}: its label is {_shown(t)}; labels are class indices (integers)")
    return t.to(torch.int64)


def from_item(example: dict[str, torch.Tensor], name: str, item: Any) -> Sample:
    """A factory's item: `args` (a tensor or a tuple of them), `(args, kwargs)`, or a dict with
    `args`, `kwargs` and `label`."""
    label = None
    if isinstance(item, dict):
        unknown = [k for k in item if k not in ("args", "kwargs", *LABEL_KEYS)]
        if unknown:
            raise DataError(
                f"{name}: a sample dict holds args, kwargs and label, not {', '.join(map(str, unknown))}"
            )
        args, kwargs = item.get("args", ()), item.get("kwargs", {})
        label = next((item[k] for k in LABEL_KEYS if k in item), None)
    elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], dict):
        args, kwargs = item
    else:
        args, kwargs = item, {}
    return Sample(name, flat_inputs(example, name, args, kwargs), _label(name, label))


def _factory(ref: DataRef) -> Any:
    name = f"deploytui_user_data_{Path(ref.target).stem}"
    module = user_module(ref.kind, ref.target, name, DataError)
    fn = getattr(module, ref.factory, None)
    if not callable(fn):
        raise DataError(f"{ref.target} has no callable {ref.factory!r}")
    return fn


def _from_factory(ref: DataRef, example: dict[str, torch.Tensor]) -> Iterator[Sample]:
    where = f"{Path(ref.target).name if ref.kind == 'file' else ref.target}:{ref.factory}"
    try:
        items = iter(_factory(ref)())
    except DataError:
        raise
    except Exception as e:  # the factory raised, or returned something that is not iterable
        raise DataError(f"data factory {where} raised {type(e).__name__}: {e}") from None
    k = 0
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except Exception as e:  # the user's generator raised part way
            raise DataError(f"data factory {where} raised {type(e).__name__} at sample {k}: {e}") from None
        yield from_item(example, f"sample {k}", item)
        k += 1


def read_file(path: Path) -> dict[str, Any]:
    """A tensor file's contents by name (.safetensors, .npz) or as saved (.pt: a tensor, a tuple or
    a dict); OSError / ValueError / RuntimeError when it cannot be read."""
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return dict(load_file(str(path)))
    if path.suffix == ".npz":
        import numpy as np

        with np.load(path, allow_pickle=False) as z:
            return {k: torch.from_numpy(z[k].copy()) for k in z.files}
    obj = torch.load(path, weights_only=True, map_location="cpu")
    if isinstance(obj, torch.Tensor):
        return {f"{POSITIONAL}0": obj}
    if isinstance(obj, (tuple, list)):
        return {f"{POSITIONAL}{i}": t for i, t in enumerate(obj)}
    if isinstance(obj, dict):
        return dict(obj)
    raise ValueError(f"holds a {type(obj).__name__}, not tensors")


def _file_sample(
    example: dict[str, torch.Tensor], path: Path, tensors: dict[str, Any], labels: dict[str, Any]
) -> Sample:
    label = next((tensors.pop(k) for k in LABEL_KEYS if k in tensors), None)
    label = labels.get(path.name, label)
    if len(example) == 1 and len(tensors) == 1:  # one input: whatever the tensor is called
        tensors = {next(iter(example)): next(iter(tensors.values()))}
    kwargs = {k: v for k, v in tensors.items()}
    return Sample(path.name, flat_inputs(example, path.name, (), kwargs), _label(path.name, label))


def _labels(folder: Path) -> dict[str, Any]:
    path = folder / LABELS_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise DataError(f"{path} is not readable JSON: {e}") from None
    if not isinstance(data, dict):
        raise DataError(f"{path} must map file names to labels, got a {type(data).__name__}")
    return data


def _from_folder(ref: DataRef, example: dict[str, torch.Tensor], skipped: Skipped) -> Iterator[Sample]:
    folder = Path(ref.target)
    labels = _labels(folder)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in TENSOR_SUFFIXES)
    unknown = sorted(set(labels) - {p.name for p in files})
    if unknown:
        raise DataError(f"{LABELS_FILE} labels {unknown[0]}, which is not a tensor file in {folder}")
    for path in files:
        try:
            tensors = read_file(path)
        except Exception as e:  # unreadable (damaged, not tensors, a pickle): skipped, counted
            skipped.count += 1
            skipped.names.append(path.name)
            first = (str(e).splitlines() or [""])[0][:200]
            skipped.first = skipped.first or f"{path.name}: {type(e).__name__}: {first}"
            continue
        yield _file_sample(example, path, tensors, labels)


def samples(ref: DataRef, example: dict[str, torch.Tensor], skipped: Skipped) -> Iterator[Sample]:
    """The data's samples one at a time, in its order, each checked against `example` (the
    model's flat example inputs); unreadable files of a folder are counted in `skipped`."""
    if ref.kind == "folder":
        return _from_folder(ref, example, skipped)
    return _from_factory(ref, example)
