"""Run a model's factory and check what it returns. Imports torch: subprocesses only.

Every way a user's model can be wrong before any build starts ends here as one `ModelError`
with a message that says what to fix: a file that does not import, a missing factory, a
factory that raises or returns the wrong thing, an input of an unsupported dtype.

A factory returns `(module, args)` or `(module, args, kwargs)`: args a tensor or a tuple/list of
tensors, kwargs a dict of keyword -> tensor (None entries are left out). The inputs are named
`input_0`, `input_1`, ... (positional) and by their keyword, in call order (`inputs`).
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

from deploytui.core.modelref import LIBRARY_KINDS, ModelRef
from deploytui.models import zoo
from deploytui.runners.protocol import POSITIONAL, positional_index

INPUT_DTYPES = {torch.float32: "F32", torch.int64: "I64"}


class ModelError(Exception):
    """The model cannot be used; the message is for the user, one line."""


@dataclass
class LoadedModel:
    ref: ModelRef
    module: nn.Module
    args: tuple[torch.Tensor, ...]
    kwargs: dict[str, torch.Tensor]

    @property
    def inputs(self) -> dict[str, torch.Tensor]:
        """Every input by name, in call order: input_0, input_1, ..., then the keywords."""
        return {**{f"{POSITIONAL}{i}": t for i, t in enumerate(self.args)}, **self.kwargs}

    @property
    def param_count(self) -> int:
        return sum(p.numel() for p in self.module.parameters())

    def unique_param_bytes(self) -> int:
        """Bytes of the parameters and buffers the module holds, each storage counted once (a tied
        matrix once): what any form needs at least to carry the weights."""
        seen: dict[tuple[int, int], int] = {}
        for t in [*self.module.parameters(), *self.module.buffers()]:
            seen[(t.untyped_storage().data_ptr(), t.storage_offset())] = t.numel() * t.element_size()
        return sum(seen.values())

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.ref.text,
            "slug": self.ref.slug,
            "class": type(self.module).__name__,
            "params": self.param_count,
            "inputs": [
                {
                    "name": name,
                    "kind": "positional" if positional_index(name) is not None else "keyword",
                    "dtype": INPUT_DTYPES[t.dtype],
                    "shape": list(t.shape),
                }
                for name, t in self.inputs.items()
            ],
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
    if ref.kind in LIBRARY_KINDS:
        from deploytui.models import library

        return lambda: library.BUILDERS[ref.kind](ref)
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
    kwargs = {} if ref.kind in LIBRARY_KINDS else ref.kwargs
    try:
        result = factory(**kwargs)
    except TypeError as e:
        if ref.kind == "zoo":
            raise ModelError(f"{ref.text}: {e}") from e
        raise ModelError(f"{ref.text} raised TypeError: {e}{_where(e)}") from e
    except Exception as e:  # the user's code, or the library's refusal (LibraryError: its own line)
        if type(e).__name__ == "LibraryError":
            raise ModelError(str(e)) from e
        raise ModelError(f"{ref.text} raised {type(e).__name__}: {e}{_where(e)}") from e
    if not (isinstance(result, tuple) and len(result) in (2, 3)):
        raise ModelError(
            f"{ref.text} must return (module, args) or (module, args, kwargs), got {type(result).__name__}"
            + (f" of length {len(result)}" if isinstance(result, tuple) else "")
        )
    module, args, kwargs = result if len(result) == 3 else (*result, {})
    if not isinstance(module, nn.Module):
        raise ModelError(f"{ref.text} returned {type(module).__name__} where an nn.Module was expected")
    args = _args(ref, args)
    named = _kwargs(ref, kwargs)
    if not args and not named:
        raise ModelError(f"{ref.text}: the model needs at least one example input tensor")
    return LoadedModel(ref, module.eval(), args, named)


def _check(ref: ModelRef, what: str, t: Any) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise ModelError(f"{ref.text}: example input {what} is a {type(t).__name__}, not a tensor")
    if t.dtype not in INPUT_DTYPES:
        raise ModelError(f"{ref.text}: example input {what} has dtype {t.dtype}; supported: float32, int64")
    return t.detach().contiguous()


def _args(ref: ModelRef, args: Any) -> tuple[torch.Tensor, ...]:
    if isinstance(args, torch.Tensor):
        args = (args,)
    if not isinstance(args, (tuple, list)):
        raise ModelError(f"{ref.text}: the example args must be a tensor or a tuple of tensors")
    return tuple(_check(ref, str(i), t) for i, t in enumerate(args))


def _kwargs(ref: ModelRef, kwargs: Any) -> dict[str, torch.Tensor]:
    if not isinstance(kwargs, dict):
        raise ModelError(f"{ref.text}: the example kwargs must be a dict of name -> tensor")
    named = {}
    for key, t in kwargs.items():
        if t is None:  # an optional input left out
            continue
        if not (isinstance(key, str) and key.isidentifier()) or positional_index(key) is not None:
            raise ModelError(f"{ref.text}: example kwarg {key!r} must be a Python name other than input_N")
        named[key] = _check(ref, repr(key), t)
    return named


def output_tensors(outputs: Any) -> dict[str, torch.Tensor]:
    """A forward's result (any pytree of tensors) by name, `runners.torch_bundle`'s one flattening
    that every runner shares; a leaf that is not a tensor is a ModelError."""
    from deploytui.runners.torch_bundle import output_tensors as flatten

    try:
        return flatten(outputs)
    except TypeError as e:
        raise ModelError(str(e)) from None
