"""The user's samples (`--data`, core/dataref.py), read one at a time: a factory's iterable or a
folder's tensor files, each checked against the model's example inputs (name, shape, dtype) and
given as the model's flat named inputs plus its label, if any.

Runs in the build's export-samples step (torch imported); every refusal is a DataError whose
message is one line naming the sample and the input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from deploytui.core.dataref import LABELS_FILE, TENSOR_SUFFIXES, DataRef
from deploytui.models.data_types import DataError, Sample, Skipped, shown
from deploytui.models.load import LoadedModel, named_leaves, user_module
from deploytui.runners.protocol import POSITIONAL

LABEL_KEYS = ("label", "labels")  # a sample's label, in a factory's dict or a tensor file


def checked(example: dict[str, torch.Tensor], name: str, given: dict[str, Any]) -> dict[str, torch.Tensor]:
    """A sample's tensors by name (the model's flat input names) checked against the example's:
    the same names, each a tensor of the same dtype and shape; in the example's order."""
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
            raise DataError(f"{name}: {n} is {shown(t)}, the model takes {shown(want)}")
        out[n] = t.contiguous()
    return out


def _named(m: LoadedModel, args: Any, kwargs: Any) -> dict[str, Any]:
    """A call's leaves by the names the example's get (models/load.py's flattening: `input_0`,
    a keyword, `batch.user_ids`)."""
    return dict(named_leaves(m.module, args, kwargs))


def flat_inputs(m: LoadedModel, name: str, args: Any, kwargs: Any) -> dict[str, torch.Tensor]:
    """One sample's call (`args`, `kwargs`, in the model's own call shape: tensors, or dicts,
    lists and tuples of them) as the model's flat named inputs, each checked against the
    example's."""
    if isinstance(args, torch.Tensor):
        args = (args,)
    if not isinstance(args, (tuple, list)) or not isinstance(kwargs, dict):
        raise DataError(
            f"{name}: args must be a tuple of arguments and kwargs a dict, got {type(args).__name__}"
        )
    return checked(m.inputs, name, _named(m, args, kwargs))


def _call_of(m: LoadedModel, item: Any) -> tuple[Any, Any]:
    """A bare item as (args, kwargs): a pair whose second is a dict is `(args, kwargs)` unless
    only its reading as two positional arguments names the model's inputs (forward(x, batch))."""
    if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], dict)):
        return item, {}
    if not isinstance(item[0], (tuple, list, torch.Tensor)):
        return item, {}
    as_pair = set(_named(m, item[0] if not isinstance(item[0], torch.Tensor) else (item[0],), item[1]))
    if as_pair != set(m.inputs) and set(_named(m, item, {})) == set(m.inputs):
        return item, {}
    return item


def _label(name: str, value: Any) -> torch.Tensor | None:
    if value is None:
        return None
    try:
        t = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError) as e:
        raise DataError(f"{name}: its label is not a tensor of class indices: {e}") from None
    if t.dtype.is_floating_point or t.dtype == torch.bool or t.is_complex():
        raise DataError(f"{name}: its label is {shown(t)}; labels are class indices (integers)")
    return t.to(torch.int64)


def from_item(m: LoadedModel, name: str, item: Any) -> Sample:
    """A factory's item: `args` (a tensor or a tuple of arguments), `(args, kwargs)`, or a dict
    with `args`, `kwargs` and `label`."""
    label = None
    if isinstance(item, dict):
        unknown = [k for k in item if k not in ("args", "kwargs", *LABEL_KEYS)]
        if unknown:
            raise DataError(
                f"{name}: a sample dict holds args, kwargs and label, not {', '.join(map(str, unknown))}"
            )
        args, kwargs = item.get("args", ()), item.get("kwargs", {})
        label = next((item[k] for k in LABEL_KEYS if k in item), None)
    else:
        args, kwargs = _call_of(m, item)
    return Sample(name, flat_inputs(m, name, args, kwargs), _label(name, label))


def _factory(ref: DataRef) -> Any:
    name = f"deploytui_user_data_{Path(ref.target).stem}"
    module = user_module(ref.kind, ref.target, name, DataError)
    fn = getattr(module, ref.factory, None)
    if not callable(fn):
        raise DataError(f"{ref.target} has no callable {ref.factory!r}")
    return fn


def _from_factory(ref: DataRef, m: LoadedModel) -> Iterator[Sample]:
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
        yield from_item(m, f"sample {k}", item)
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
    return Sample(path.name, checked(example, path.name, tensors), _label(path.name, label))


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
            skipped.add(path.name, e)
            continue
        yield _file_sample(example, path, tensors, labels)


def samples(ref: DataRef, m: LoadedModel, skipped: Skipped) -> Iterator[Sample]:
    """The data's samples one at a time, in its order, each checked against the model's flat
    example inputs; unreadable files of a folder are counted in `skipped`."""
    if ref.kind == "folder":
        from deploytui.models import images

        if images.is_image_folder(Path(ref.target)):
            return images.samples(ref, m, skipped)
        if ref.transform:
            raise DataError(f"--data {ref.text}: transform= is for a folder of images in class sub-folders")
        return _from_folder(ref, m.inputs, skipped)
    return _from_factory(ref, m)
