"""The model's sample sets, drawn like its example inputs with fixed seeds: the accuracy set (inputs
and eager's outputs on each, read by the runners as they are) and the calibration set the int8
exports of several families calibrate on (`calibration_inputs`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deploytui.judge.precision import CALIBRATION, SAMPLES

PRELOAD = ("safetensors.torch",)  # what the build's fork server imports once for these exports

ACCURACY_DIR = "accuracy"  # accuracy/inputs_K.safetensors + accuracy/reference_K.safetensors
CALIBRATION_FILE = "calibration.safetensors"  # K/NAME per sample, calibration seeds
ACCURACY_SEED = 1000  # sample k of the accuracy set is drawn from seed ACCURACY_SEED + k
CALIBRATION_SEED = 2000


def _drawn_like(t: Any, gen: Any) -> Any:
    """A tensor drawn like `t`: floats from a normal with its mean and spread, integers (token
    ids) uniformly over its range; a constant tensor (an all-ones mask, a scale), a single value
    or booleans as they are."""
    import torch

    if t.dtype == torch.bool or t.numel() < 2:
        return t.clone()
    if t.dtype.is_floating_point:
        mean, std = float(t.mean()), float(t.std())
        if not std > 0:  # a constant (a scale, a mask): as it is
            return t.clone()
        noise = torch.randn(t.shape, generator=gen, dtype=torch.float32).to(t.dtype)
        return noise * std + mean
    lo, hi = int(t.min()), int(t.max())
    if lo == hi:
        return t.clone()
    return torch.randint(lo, hi + 1, t.shape, generator=gen, dtype=t.dtype)


def draw_samples(m: Any, seed: int, count: int) -> list[dict[str, Any]]:
    """`count` input sets drawn like the model's example inputs, sample k from seed `seed + k`."""
    import torch

    out = []
    for k in range(count):
        gen = torch.Generator().manual_seed(seed + k)
        out.append({name: _drawn_like(t, gen) for name, t in m.inputs.items()})
    return out


def export_samples(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """The accuracy set (SAMPLES inputs and eager's outputs on each, files the runner protocol
    reads as they are) and the calibration set (CALIBRATION more, other seeds, one file)."""
    import torch
    from safetensors.torch import save_file

    from deploytui.judge.numerics import OUTPUTS_KEY
    from deploytui.models.load import output_tensors

    folder = out / ACCURACY_DIR
    folder.mkdir(exist_ok=True)
    order = m.inputs_metadata()  # the names in call order (and a nested call's structure)
    for k, inputs in enumerate(draw_samples(m, ACCURACY_SEED, SAMPLES)):
        args, kwargs = m.call(inputs.values())
        with torch.inference_mode():
            y = output_tensors(m.module(*args, **kwargs))
        save_file(inputs, str(folder / f"inputs_{k}.safetensors"), metadata=order)
        save_file(
            {n: t.contiguous() for n, t in y.items()},
            str(folder / f"reference_{k}.safetensors"),
            metadata={OUTPUTS_KEY: json.dumps(list(y))},
        )
    calibration = {
        f"{k}/{name}": t
        for k, s in enumerate(draw_samples(m, CALIBRATION_SEED, CALIBRATION))
        for name, t in s.items()
    }
    save_file(calibration, str(out / CALIBRATION_FILE), metadata=order)
    return {"accuracy_samples": SAMPLES, "accuracy_seed": ACCURACY_SEED, "calibration_samples": CALIBRATION}


def calibration_inputs(m: Any, out: Path) -> list[tuple[Any, ...]]:
    """The example inputs, then the calibration set, each as the flat call-order tuple (`m.call`
    makes a call of one)."""
    from safetensors.torch import load_file

    stored = load_file(str(out / CALIBRATION_FILE))
    count = len({k.split("/", 1)[0] for k in stored})
    sets = [tuple(m.inputs.values())]
    sets += [tuple(stored[f"{k}/{name}"] for name in m.inputs) for k in range(count)]
    return sets
