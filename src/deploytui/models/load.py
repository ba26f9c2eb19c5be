"""Run a model's factory and check what it returns. Imports torch: subprocesses only.

Every way a user's model can be wrong before any build starts ends here as one `ModelError`
with a message that says what to fix: a file that does not import, a missing factory, a
factory that raises or returns the wrong thing, an input of an unsupported dtype.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from deploytui.models import ModelRef, zoo

INPUT_DTYPES = {torch.float32: "F32", torch.int64: "I64"}


class ModelError(Exception):
    """The model cannot be used; the message is for the user, one line."""


@dataclass
class LoadedModel:
    ref: ModelRef
    module: nn.Module
    inputs: tuple[torch.Tensor, ...]

    @property
    def param_count(self) -> int:
        return sum(p.numel() for p in self.module.parameters())

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.ref.text,
            "slug": self.ref.slug,
            "class": type(self.module).__name__,
            "params": self.param_count,
            "inputs": [{"dtype": INPUT_DTYPES[t.dtype], "shape": list(t.shape)} for t in self.inputs],
        }


def _where(e: BaseException) -> str:
    """The innermost frame of the user's own code in a traceback, as ` (file.py:12)`."""
    ours = (str(Path(__file__).parent.parent), str(Path(torch.__file__).parent))
    frames = [
        f
        for f in traceback.extract_tb(e.__traceback__)
        if not f.filename.startswith("<") and not f.filename.startswith(ours)
    ]
    return f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""


def _factory(ref: ModelRef) -> Any:
    if ref.kind == "zoo":
        return zoo.FACTORIES[ref.target]
    if ref.kind == "file":
        path = Path(ref.target)
        if not path.is_file():
            raise ModelError(f"model file {path} does not exist")
        name = f"deploytui_user_model_{ref.slug.replace('-', '_').replace('.', '_')}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ModelError(f"{path} cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:  # the user's code: any error is theirs to see, in one line
            raise ModelError(f"{path.name} does not import: {type(e).__name__}: {e}{_where(e)}") from e
    else:
        try:
            module = importlib.import_module(ref.target)
        except Exception as e:  # as above
            raise ModelError(
                f"module {ref.target} does not import: {type(e).__name__}: {e}{_where(e)}"
            ) from e
    factory = getattr(module, ref.factory, None)
    if factory is None:
        raise ModelError(f"{ref.target} has no {ref.factory!r}")
    if not callable(factory):
        raise ModelError(f"{ref.target}:{ref.factory} is not callable")
    return factory


def load(ref: ModelRef) -> LoadedModel:
    factory = _factory(ref)
    try:
        result = factory(**ref.kwargs)
    except TypeError as e:
        if ref.kind == "zoo":
            raise ModelError(f"{ref.text}: {e}") from e
        raise ModelError(f"{ref.text} raised TypeError: {e}{_where(e)}") from e
    except Exception as e:  # the user's code
        raise ModelError(f"{ref.text} raised {type(e).__name__}: {e}{_where(e)}") from e
    if not (isinstance(result, tuple) and len(result) == 2):
        raise ModelError(
            f"{ref.text} must return (module, inputs), got {type(result).__name__}"
            + (f" of length {len(result)}" if isinstance(result, tuple) else "")
        )
    module, inputs = result
    if not isinstance(module, nn.Module):
        raise ModelError(f"{ref.text} returned {type(module).__name__} where an nn.Module was expected")
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if isinstance(inputs, list):
        inputs = tuple(inputs)
    if not isinstance(inputs, tuple) or not inputs:
        raise ModelError(f"{ref.text}: the example inputs must be a tensor or a non-empty tuple of tensors")
    for i, t in enumerate(inputs):
        if not isinstance(t, torch.Tensor):
            raise ModelError(f"{ref.text}: example input {i} is a {type(t).__name__}, not a tensor")
        if t.dtype not in INPUT_DTYPES:
            raise ModelError(f"{ref.text}: example input {i} has dtype {t.dtype}; supported: float32, int64")
    inputs = tuple(t.detach().contiguous() for t in inputs)
    return LoadedModel(ref, module.eval(), inputs)


def input_tensors(loaded: LoadedModel) -> dict[str, torch.Tensor]:
    """The example inputs as the runner protocol names them: input_0, input_1, ..."""
    return {f"input_{i}": t for i, t in enumerate(loaded.inputs)}


def output_tensors(outputs: Any) -> dict[str, torch.Tensor]:
    """A forward's result (a tensor, or nested tuples/lists of them) as output_0, output_1, ...;
    the runners' one flattening (`runners.torch_bundle`), anything else a ModelError."""
    from deploytui.runners.torch_bundle import output_tensors as flatten

    try:
        return flatten(outputs)
    except TypeError as e:
        raise ModelError(str(e)) from None
