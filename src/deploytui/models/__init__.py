"""The model seam: which model the tool works on, named by the user, defined once.

A model is a name plus a factory that returns the eval-mode `nn.Module` and a tuple of example
input tensors (float32 or int64, any rank, one or more). This module is light (no torch): it
parses what the user typed (`--model`) into a `ModelRef` and names the model's artifact folder.
Loading runs the factory and needs torch: `deploytui.models.load`, in build and runner
subprocesses only.

    a1                              the reference page's MLP (the default)
    mlp:hidden=512,depth=4          a zoo factory with keyword arguments
    package.module:factory          a factory importable from the user's environment
    path/to/file.py:factory         a factory in a Python file
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT = "a1"

# name -> one line about it; the factories are in deploytui.models.zoo (torch)
ZOO: dict[str, str] = {
    "a1": "the reference page's MLP: Linear 4->8, ReLU, Linear 8->3, closed-form weights",
    "mlp": "Linear layers with ReLU between (d_in, hidden, depth, d_out, batch): the scale family",
    "convnet": "Conv2d, BatchNorm2d, ReLU, MaxPool2d, a residual add, AdaptiveAvgPool2d, Linear",
    "tinylm": "Embedding over int64 tokens, two TransformerEncoderLayers, a Linear head",
}


# the models with the hand-written burn `Mlp` twin (burn-file, burn-embed, burn-st, the capture)
MLP_LAYOUT = ("a1", "mlp")


def has_mlp_layout(ref: ModelRef) -> bool:
    return ref.kind == "zoo" and ref.target in MLP_LAYOUT


def tolerance(ref: ModelRef) -> tuple[float, float]:
    """(atol, rtol) of the elementwise check |got - want| <= atol + rtol*|want| (Polygraphy's);
    a1 keeps the reference page's 1e-6 absolute."""
    if ref.kind == "zoo" and ref.target == "a1" and not ref.params:
        return 1e-6, 0.0
    return 1e-5, 1e-5


class ModelRefError(ValueError):
    """What the user typed does not name a model."""


@dataclass(frozen=True)
class ModelRef:
    """A model as named by the user: a zoo entry, an importable module, or a Python file."""

    kind: str  # "zoo" | "module" | "file"
    target: str  # zoo name, dotted module path, or file path
    factory: str  # the callable's name ("" for a zoo entry)
    params: tuple[tuple[str, int | float | str], ...] = field(default=())

    @property
    def text(self) -> str:
        """The canonical spelling, accepted by `parse` (`mlp:depth=4,hidden=512`)."""
        if self.kind == "zoo":
            args = ",".join(f"{k}={v}" for k, v in self.params)
            return f"{self.target}:{args}" if args else self.target
        return f"{self.target}:{self.factory}"

    @property
    def slug(self) -> str:
        """The artifact folder's name: `a1`, `mlp-depth4-hidden512`, `my_model-make`."""
        if self.kind == "zoo":
            parts = [self.target, *(f"{k}{v}" for k, v in self.params)]
        elif self.kind == "file":
            stem = re.sub(r"\.py$", "", self.target.replace("\\", "/").rsplit("/", 1)[-1])
            parts = [stem, self.factory]
        else:
            parts = [self.target.replace(".", "-"), self.factory]
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(parts)).strip("_") or "model"

    @property
    def kwargs(self) -> dict[str, int | float | str]:
        return dict(self.params)


def _value(text: str) -> int | float | str:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse(text: str | None) -> ModelRef:
    """`--model` as typed -> a ModelRef; raises ModelRefError with what is wrong."""
    text = (text or DEFAULT).strip()
    head, sep, tail = text.partition(":")
    if head in ZOO:
        params: list[tuple[str, int | float | str]] = []
        for item in filter(None, (p.strip() for p in tail.split(","))) if sep else ():
            key, eq, value = item.partition("=")
            if not eq or not key.strip().isidentifier():
                raise ModelRefError(
                    f"{text!r}: zoo parameters are name=value, comma-separated (got {item!r})"
                )
            params.append((key.strip(), _value(value.strip())))
        return ModelRef("zoo", head, "", tuple(sorted(params)))
    if not sep or not tail:
        known = ", ".join(ZOO)
        raise ModelRefError(
            f"{text!r} is not a zoo model ({known}) nor package.module:factory nor file.py:factory"
        )
    if not tail.isidentifier():
        raise ModelRefError(f"{text!r}: {tail!r} is not a Python name for the factory")
    if head.endswith(".py"):
        return ModelRef("file", str(Path(head).expanduser().resolve()), tail)
    if all(p.isidentifier() for p in head.split(".")):
        return ModelRef("module", head, tail)
    raise ModelRefError(f"{text!r}: {head!r} is neither a .py file nor a dotted module path")
