"""Run a model's factory and check what it returns. Imports torch: subprocesses only.

Every way a user's model can be wrong before any build starts ends here as one `ModelError`
with a message that says what to fix: a file that does not import, a missing factory, a
factory that raises or returns the wrong thing, an input of an unsupported dtype.

A factory returns `(module, args)` or `(module, args, kwargs)`: args a tensor or a tuple/list of
arguments, kwargs a dict of keyword -> argument (None entries are left out); an argument is a
tensor or any nesting of tuples, lists and dicts of tensors (a batch dict, a list of images).
The call flattens through torch's pytree (as torch.export flattens it) into named inputs, in call
order (`inputs`): a plain tensor argument is `input_0`, `input_1`, ... (positional) or its
keyword; a nested one is named by its parameter (or keyword) and its key path, `batch.user_ids`,
`images.0` (`input_N.0` where forward takes *args). A leaf that is not a tensor (an int, a bool,
a string) is a ModelError: bind such arguments in the factory. The call's structure (torch's
treespec, JSON) travels with the inputs (`call_spec`), so a runner rebuilds the call.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from deploytui.core.modelref import LIBRARY_KINDS, ModelRef
from deploytui.models import zoo
from deploytui.runners.protocol import CALL_KEY, INPUTS_KEY, POSITIONAL, positional_index
from deploytui.runners.torch_bundle import output_name

INPUT_DTYPES = {torch.float32: "F32", torch.int64: "I64"}


class ModelError(Exception):
    """The model cannot be used; the message is for the user, one line."""


NAME_PART = re.compile(r"[A-Za-z0-9_-]+")  # a key of a nested input, as a part of its name


@dataclass
class LoadedModel:
    ref: ModelRef
    module: nn.Module
    args: tuple[Any, ...]  # each a tensor or a pytree of tensors
    kwargs: dict[str, Any]

    @property
    def inputs(self) -> dict[str, torch.Tensor]:
        """Every input tensor by name, in call order (the pytree's flattening order of (args,
        kwargs)): input_0, input_1, ... and the keywords, `batch.user_ids` for nested ones."""
        return dict(named_leaves(self.module, self.args, self.kwargs))

    @property
    def nested(self) -> bool:
        """Whether an argument is a tuple, list or dict rather than a plain tensor."""
        return not all(isinstance(t, torch.Tensor) for t in (*self.args, *self.kwargs.values()))

    def call_spec(self) -> str | None:
        """The call's structure (torch's treespec of (args, kwargs), as JSON) when it is nested,
        else None: plain inputs are rebuilt by their names alone."""
        from torch.utils import _pytree as pytree

        if not self.nested:
            return None
        return pytree.treespec_dumps(pytree.tree_flatten((self.args, self.kwargs))[1])

    def inputs_metadata(self) -> dict[str, str]:
        """An inputs file's __metadata__: the names in call order and, when nested, the call."""
        spec = self.call_spec()
        return {INPUTS_KEY: ",".join(self.inputs), **({CALL_KEY: spec} if spec else {})}

    def call(self, flat: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """(args, kwargs) of a call made of `flat`, tensors in the inputs' call order."""
        from torch.utils import _pytree as pytree

        spec = pytree.tree_flatten((self.args, self.kwargs))[1]
        args, kwargs = pytree.tree_unflatten(list(flat), spec)
        return tuple(args), dict(kwargs)

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
                {"name": name, "kind": kind, "dtype": INPUT_DTYPES[t.dtype], "shape": list(t.shape)}
                for (name, t), kind in zip(self.inputs.items(), self._kinds(), strict=True)
            ],
            **({"call": spec} if (spec := self.call_spec()) else {}),
        }

    def _kinds(self) -> list[str]:
        """Each input's argument kind, positional or keyword, in call order."""
        leaves = _leaves(self.args, self.kwargs)
        return ["positional" if path[0].idx == 0 else "keyword" for path, _ in leaves]


def _leaves(args: Any, kwargs: Any) -> list[tuple[Any, Any]]:
    from torch.utils import _pytree as pytree

    return pytree.tree_flatten_with_path((tuple(args), dict(kwargs)))[0]


def parameter_names(module: nn.Module) -> list[str | None]:
    """forward's positional parameters by position (None from *args on, or when forward has
    no signature to read)."""
    try:
        params = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        return []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in positional]


def named_leaves(module: nn.Module, args: Any, kwargs: Any) -> list[tuple[str, Any]]:
    """The call's leaves by name, in the pytree's flattening order of (args, kwargs): a plain
    positional tensor `input_N`, a plain keyword by its keyword, a leaf of a nested argument
    by the argument's parameter (else `input_N`) or keyword and its key path (`batch.user_ids`,
    `images.0`). The leaves are as given (tensors or not: `_check` judges them)."""
    params = parameter_names(module)
    named = []
    for path, leaf in _leaves(args, kwargs):
        where, top, *rest = path
        if where.idx == 0:
            i = top.idx
            head = params[i] if rest and i < len(params) and params[i] else f"{POSITIONAL}{i}"
        else:
            head = str(top.key)
        named.append((".".join([head, *(output_name((k,)) for k in rest)]), leaf))
    return named


def _where(e: BaseException) -> str:
    """The innermost frame of the user's own code in a traceback, as ` (file.py:12)`."""
    ours = (str(Path(__file__).parent.parent), str(Path(torch.__file__).parent))
    frames = [
        f
        for f in traceback.extract_tb(e.__traceback__)
        if not f.filename.startswith("<") and not f.filename.startswith(ours)
    ]
    return f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""


def user_module(
    kind: str,
    target: str,
    name: str,
    error: type[Exception],
    where: Callable[[BaseException], str] = lambda _e: "",
) -> Any:
    """A user's file (kind "file", imported as module `name`) or module, imported; its error as
    one line in `error` ("x.py does not import: …", `where` naming the user's frame)."""
    if kind == "file":
        path = Path(target)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise error(f"{path} cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:  # the user's code: any error is theirs to see, in one line
            raise error(f"{path.name} does not import: {type(e).__name__}: {e}{where(e)}") from e
        return module
    try:
        return importlib.import_module(target)
    except Exception as e:  # as above
        raise error(f"module {target} does not import: {type(e).__name__}: {e}{where(e)}") from e


def _factory(ref: ModelRef) -> Any:
    if ref.kind == "zoo":
        return zoo.FACTORIES[ref.target]
    if ref.kind in LIBRARY_KINDS:
        from deploytui.models import library

        return lambda: library.BUILDERS[ref.kind](ref)
    if ref.kind == "file" and not Path(ref.target).is_file():
        raise ModelError(f"model file {Path(ref.target)} does not exist")
    name = f"deploytui_user_model_{ref.slug.replace('-', '_').replace('.', '_')}"
    module = user_module(ref.kind, ref.target, name, ModelError, _where)
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
    return LoadedModel(ref, module.eval(), *_checked(ref, module, args, named))


def _checked(
    ref: ModelRef, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """args and kwargs with every leaf checked (a tensor of a supported dtype, detached and
    contiguous), every name usable (the parts of a nested one: letters, digits, _ and -) and
    distinct, and the structure storable (torch's treespec as JSON); else the one ModelError."""
    from torch.utils import _pytree as pytree

    leaves, seen = [], set()
    for name, leaf in named_leaves(module, args, kwargs):
        index = positional_index(name)
        what = name if "." in name else str(index) if index is not None else repr(name)
        if "." in name and not all(NAME_PART.fullmatch(part) for part in name.split(".")):
            raise ModelError(
                f"{ref.text}: example input {name!r} cannot be named: the keys of a nested input "
                "must be made of letters, digits, _ and -"
            )
        if name in seen:
            raise ModelError(f"{ref.text}: two example inputs are named {name!r}")
        seen.add(name)
        leaves.append(_check(ref, what, leaf))
    spec = pytree.tree_flatten((args, kwargs))[1]
    try:
        pytree.treespec_loads(pytree.treespec_dumps(spec))
    except Exception as e:  # a namedtuple or a library's type torch cannot serialise
        raise ModelError(
            f"{ref.text}: the example inputs' structure cannot be stored ({type(e).__name__}: {e}); "
            "use tuples, lists and dicts"
        ) from None
    rebuilt_args, rebuilt_kwargs = pytree.tree_unflatten(leaves, spec)
    return tuple(rebuilt_args), dict(rebuilt_kwargs)


def _check(ref: ModelRef, what: str, t: Any) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise ModelError(
            f"{ref.text}: example input {what} is a {type(t).__name__}, not a tensor (inputs are "
            "tensors, in tuples, lists and dicts; bind any other argument in the factory)"
        )
    if t.dtype not in INPUT_DTYPES:
        raise ModelError(f"{ref.text}: example input {what} has dtype {t.dtype}; supported: float32, int64")
    return t.detach().contiguous()


def _args(ref: ModelRef, args: Any) -> tuple[Any, ...]:
    if isinstance(args, torch.Tensor):
        args = (args,)
    if not isinstance(args, (tuple, list)):
        raise ModelError(f"{ref.text}: the example args must be a tensor or a tuple of arguments")
    return tuple(args)


def _kwargs(ref: ModelRef, kwargs: Any) -> dict[str, Any]:
    if not isinstance(kwargs, dict):
        raise ModelError(f"{ref.text}: the example kwargs must be a dict of name -> argument")
    named = {}
    for key, t in kwargs.items():
        if t is None:  # an optional input left out
            continue
        if not (isinstance(key, str) and key.isidentifier()) or positional_index(key) is not None:
            raise ModelError(f"{ref.text}: example kwarg {key!r} must be a Python name other than input_N")
        named[key] = t
    return named


def output_tensors(outputs: Any) -> dict[str, torch.Tensor]:
    """A forward's result (any pytree of tensors) by name, `runners.torch_bundle`'s one flattening
    that every runner shares; a leaf that is not a tensor is a ModelError."""
    from deploytui.runners.torch_bundle import output_tensors as flatten

    try:
        return flatten(outputs)
    except TypeError as e:
        raise ModelError(str(e)) from None
