"""The model seam: which model the tool works on, named by the user, defined once.

A model is a name plus a factory that returns the eval-mode `nn.Module` and its example inputs:
`(module, args)` or `(module, args, kwargs)`, tensors (float32 or int64, any rank) passed
positionally and by keyword. This module is light (no torch): it parses what the user typed
(`--model`) into a `ModelRef` and names the model's artifact folder. Loading runs the factory and
needs torch: `deploytui.models.load`, in build and runner subprocesses only.

    a1                              the reference page's MLP (the default)
    mlp:hidden=512,depth=4          a zoo factory with keyword arguments
    package.module:factory          a factory importable from the user's environment
    path/to/file.py:factory         a factory in a Python file
    torchvision:resnet18            a torchvision.models builder, weights=None (or weights=FILE)
    timm:resnet10t                  timm.create_model(pretrained=False) (or weights=FILE)
    hf:path/to/folder               a saved Hugging Face model (config.json + weights), offline
    hf-config:path/to/config.json   a Hugging Face model from its config, random weights

The library models take options after a comma: `input_shape=1x3x64x64` (torchvision, timm,
image models), `seq_len=32` (Hugging Face text models), `weights=path` (torchvision, timm): the
CLI's `--input-shape` and `--seq-len` add them (`with_options`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT = "a1"

# name -> one line about it; the factories are in deploytui.models.zoo (torch)
ZOO: dict[str, str] = {
    "a1": "the reference page's MLP: Linear 4->8, ReLU, Linear 8->3, closed-form weights",
    "mlp": "Linear layers with ReLU between (d_in, hidden, depth, d_out, batch): the scale family",
    "convnet": "Conv2d, BatchNorm2d, ReLU, MaxPool2d, a residual add, AdaptiveAvgPool2d, Linear",
    "tinylm": "Embedding over int64 tokens, two TransformerEncoderLayers, a Linear head",
}


# the models with the hand-written burn `Mlp` twin (the burn family's forms and its capture)
MLP_LAYOUT = ("a1", "mlp")


def has_mlp_layout(ref: ModelRef) -> bool:
    return ref.kind == "zoo" and ref.target in MLP_LAYOUT


def tolerance(ref: ModelRef) -> tuple[float, float]:
    """(atol, rtol) of the elementwise check |got - want| <= atol + rtol*|want| (Polygraphy's);
    a1 keeps the reference page's 1e-6 absolute."""
    if ref.kind == "zoo" and ref.target == "a1" and not ref.params:
        return 1e-6, 0.0
    return 1e-5, 1e-5


# the models built from a library by deploytui.models.library, and the options each takes
LIBRARY_KINDS: dict[str, tuple[str, ...]] = {
    "torchvision": ("input_shape", "weights"),
    "timm": ("input_shape", "weights"),
    "hf": ("input_shape", "seq_len"),
    "hf-config": ("input_shape", "seq_len"),
}
# what the library kinds need installed: `pip install -e '.[models]'`
LIBRARY_PACKAGE = {
    "torchvision": "torchvision",
    "timm": "timm",
    "hf": "transformers",
    "hf-config": "transformers",
}


def inputs_text(inputs: object) -> str:
    """A description's inputs as one line: `F32[1, 3, 64, 64]`, keywords and nested inputs by
    name (`input_ids I64[1, 8], attention_mask I64[1, 8]`, `batch.user_ids I64[4]`)."""
    items = [i for i in inputs if isinstance(i, dict)] if isinstance(inputs, list) else []

    def named(i: dict[str, Any]) -> bool:  # a keyword, or a tensor of a nested argument (`batch.user_ids`)
        return i.get("kind", "positional") != "positional" or "." in str(i.get("name"))

    return ", ".join(
        (f"{i.get('name')} " if named(i) else "") + f"{i.get('dtype')}{list(i.get('shape') or [])}"
        for i in items
    )


class ModelRefError(ValueError):
    """What the user typed does not name a model."""


@dataclass(frozen=True)
class ModelRef:
    """A model as named by the user: a zoo entry, an importable module, a Python file, or a
    library's model (LIBRARY_KINDS: the builder's name, a folder or a config file as `target`)."""

    kind: str  # "zoo" | "module" | "file" | one of LIBRARY_KINDS
    target: str  # zoo name, dotted module path, file path, library builder name, folder or config
    factory: str  # the callable's name ("" for a zoo entry and the library kinds)
    params: tuple[tuple[str, int | float | str], ...] = field(default=())

    @property
    def text(self) -> str:
        """The canonical spelling, accepted by `parse` (`mlp:depth=4,hidden=512`,
        `torchvision:resnet18,input_shape=1x3x64x64`)."""
        if self.kind == "zoo":
            args = ",".join(f"{k}={v}" for k, v in self.params)
            return f"{self.target}:{args}" if args else self.target
        if self.kind in LIBRARY_KINDS:
            return f"{self.kind}:{self.target}" + "".join(f",{k}={v}" for k, v in self.params)
        return f"{self.target}:{self.factory}"

    @property
    def slug(self) -> str:
        """The artifact folder's name: `a1`, `mlp-depth4-hidden512`, `my_model-make`,
        `torchvision-resnet18`, `hf-tiny_bert-seq_len8`."""
        if self.kind == "zoo":
            parts = [self.target, *(f"{k}{v}" for k, v in self.params)]
        elif self.kind in LIBRARY_KINDS:
            path = Path(self.target)  # a builder's name, or the folder / config file of hf models
            name = path.parent.name if path.name == "config.json" else path.stem
            options = [f"{k}{Path(str(v)).stem if k == 'weights' else v}" for k, v in self.params]
            parts = [self.kind, name, *options]
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


def _option(kind: str, text: str, item: str) -> tuple[str, int | float | str]:
    key, eq, value = (p.strip() for p in item.partition("="))
    allowed = LIBRARY_KINDS[kind]
    if not eq or key not in allowed or not value:
        raise ModelRefError(
            f"{text!r}: {kind} models take {', '.join(f'{a}=' for a in allowed)} (got {item!r})"
        )
    if key == "input_shape":
        dims = value.replace(",", "x").split("x")
        if not all(d.isdigit() and int(d) > 0 for d in dims):
            raise ModelRefError(f"{text!r}: input_shape is sizes joined by x, like 1x3x64x64 (got {value!r})")
        return key, "x".join(dims)
    if key == "seq_len":
        if not value.isdigit() or int(value) < 1:
            raise ModelRefError(f"{text!r}: seq_len is a whole number >= 1 (got {value!r})")
        return key, int(value)
    return key, str(Path(value).expanduser().resolve())  # weights


def _library(kind: str, tail: str, text: str) -> ModelRef:
    target, *options = (p.strip() for p in tail.split(","))
    if not target:
        raise ModelRefError(f"{text!r}: name the {kind} model after the colon")
    params = dict(_option(kind, text, o) for o in options if o)
    if kind in ("hf", "hf-config"):
        target = str(Path(target).expanduser().resolve())
    elif not target.replace("_", "").replace(".", "").isalnum():
        raise ModelRefError(f"{text!r}: {target!r} is not a {kind} model name")
    return ModelRef(kind, target, "", tuple(sorted(params.items())))


def with_options(ref: ModelRef, input_shape: str | None = None, seq_len: int | None = None) -> ModelRef:
    """`--input-shape` / `--seq-len` applied to a library model (ModelRefError for another kind)."""
    given = [o for o, v in (("input_shape", input_shape), ("seq_len", seq_len)) if v is not None]
    if not given:
        return ref
    if ref.kind not in LIBRARY_KINDS:
        flags = " and ".join(f"--{o.replace('_', '-')}" for o in given)
        raise ModelRefError(
            f"{flags}: only for torchvision:, timm:, hf: and hf-config: models, not {ref.text!r}"
        )
    shape = input_shape.replace(",", "x").replace(" ", "") if input_shape else None
    extra = ",".join(f"{o}={v}" for o, v in (("input_shape", shape), ("seq_len", seq_len)) if v)
    return parse(f"{ref.text},{extra}")


def parse(text: str | None) -> ModelRef:
    """`--model` as typed -> a ModelRef; raises ModelRefError with what is wrong."""
    text = (text or DEFAULT).strip()
    head, sep, tail = text.partition(":")
    if head in LIBRARY_KINDS:
        return _library(head, tail, text)
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
            f"{text!r} is not a zoo model ({known}) nor package.module:factory nor file.py:factory "
            "nor torchvision:NAME, timm:NAME, hf:FOLDER, hf-config:CONFIG.json"
        )
    if not tail.isidentifier():
        raise ModelRefError(f"{text!r}: {tail!r} is not a Python name for the factory")
    if head.endswith(".py"):
        return ModelRef("file", str(Path(head).expanduser().resolve()), tail)
    if all(p.isidentifier() for p in head.split(".")):
        return ModelRef("module", head, tail)
    raise ModelRefError(f"{text!r}: {head!r} is neither a .py file nor a dotted module path")
