"""What the families' PyTorch exports share: torch.export of the loaded model with its inputs flat
in the inputs file's order, the dynamic-batch export (1..MAX_BATCH) and how it is traced, the
reference's output names, and AOTInductor's packaging. Each family's `exports.py` builds on it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

MAX_BATCH = 64  # the dynamic exports' batch dimension: 1 to this (ExecuTorch plans memory for it)


def program(m: Any) -> Any:
    """torch.export of the model on its example args and kwargs; the program must take its inputs
    flat in the inputs file's order (args, then kwargs as given), which the runtimes that take a
    flat list (AOTInductor, ExecuTorch) feed."""
    import torch
    from torch.utils import _pytree as pytree

    ep = torch.export.export(m.module, m.args, m.kwargs)
    expected = pytree.tree_flatten((m.args, m.kwargs))[1]
    if ep.call_spec.in_spec != expected:
        raise ValueError(f"torch.export flattened the inputs as {ep.call_spec.in_spec}, not {expected}")
    return ep


def reference_names(m: Any) -> list[str]:
    """The model's output names, as the reference file names them (its pytree paths)."""
    import torch

    from deploytui.models.load import output_tensors

    with torch.inference_mode():
        return list(output_tensors(m.module(*m.args, **m.kwargs)))


def aoti_package(ep: Any, path: Path, inductor_configs: dict[str, Any] | None) -> dict[str, Any]:
    """The exported program `ep` compiled by AOTInductor into the package `path`; the facts name
    the configs as AOTInductor left them (it adds its own to the dict it is given: a copy)."""
    import torch

    configs = dict(inductor_configs) if inductor_configs else None
    torch._inductor.aoti_compile_and_package(ep, package_path=str(path), inductor_configs=configs)
    return {"inductor_configs": configs or {}}


def batched(m: Any, batch: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The example's args and kwargs with every tensor of rank >= 1 made of its first item
    repeated `batch` times along dim 0 (what `bench --batch` feeds)."""
    import torch
    from torch.utils import _pytree as pytree

    def rows(x: Any) -> Any:
        if isinstance(x, torch.Tensor) and x.dim() >= 1:
            return x[:1].repeat(batch, *([1] * (x.dim() - 1)))
        return x

    args, kwargs = pytree.tree_map(rows, (tuple(m.args), dict(m.kwargs)))
    return args, kwargs


def dynamic_shapes(m: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """dim 0 of every tensor input of rank >= 1 as one `Dim("batch", 1..MAX_BATCH)`, by the
    names forward binds the inputs to (a tuple for positional-only models)."""
    import inspect

    import torch
    from torch.utils import _pytree as pytree

    batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)

    def spec(x: Any) -> Any:
        return {0: batch} if isinstance(x, torch.Tensor) and x.dim() >= 1 else None

    if not kwargs:
        return tuple(pytree.tree_map(spec, a) for a in args)
    bound = inspect.signature(m.module.forward).bind(*args, **kwargs)
    return {name: pytree.tree_map(spec, v) for name, v in bound.arguments.items()}


def export_dynamic(m: Any) -> Any:
    """torch.export with a dynamic batch dimension (traced at batch 2: a size of 1 would be
    specialised); a model that fixes its batch (a reshape to a constant) fails here, in the
    exporter's own words. Called inside `tracing`."""
    import torch

    args, kwargs = batched(m, 2)
    return torch.export.export(m.module, args, kwargs, dynamic_shapes=dynamic_shapes(m, args, kwargs))


def tracing(oblivious: bool) -> Any:
    """What keeps the batch range 1..MAX_BATCH through the exporter and the compilers that trace
    the program again (AOTInductor, ExecuTorch's edge lowering), each measured on convnet:
    - mkldnn and nnpack off while tracing: the fake convolution asks ATen which CPU kernel it
      would pick, and mkldnn's choice tests `batch >= 16`, a guard that narrowed the range to
      2..15 (AOTInductor's `expected to be <= 15`, ExecuTorch's memory planned for 15 items);
      the programs call aten.convolution as before, the runtime picks its kernel at run time;
    - `backed_size_oblivious` (torch.fx.experimental._config): a backed size ranges over
      [0, inf] instead of [2, inf] (0/1 specialisation), so AOTInductor's input check accepts 1.
      Experimental in torch 2.15, hence the retry without it (`dynamic_program`)."""
    import contextlib

    import torch
    from torch.fx.experimental import _config as fx_config

    stack = contextlib.ExitStack()
    stack.enter_context(torch.backends.mkldnn.flags(enabled=False))
    stack.enter_context(torch.backends.nnpack.flags(enabled=False))
    stack.enter_context(fx_config.patch(backed_size_oblivious=oblivious))
    return stack


def dynamic_program(m: Any, make: Any) -> dict[str, Any]:
    """`make(exported program)` on the dynamic-batch export, traced size-obliviously; where that
    fails (an experimental option), once more without it (batch 1 is then refused in the
    runtime's words). The facts say which, and why."""
    facts: dict[str, Any] = {"max_batch": MAX_BATCH}
    try:
        with tracing(oblivious=True):
            facts.update(make(export_dynamic(m)) or {})
        facts["size_oblivious"] = True
        return facts
    except Exception as e:
        why = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300]
        print(f"size-oblivious tracing failed, once more without it: {why}", file=sys.stderr, flush=True)
    with tracing(oblivious=False):
        facts.update(make(export_dynamic(m)) or {})
    facts.update(size_oblivious=False, size_oblivious_failed=why)
    return facts
