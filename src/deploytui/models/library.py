"""Models as users hold them: torchvision and timm builders, saved Hugging Face folders and bare
Hugging Face configs, each with example inputs from the model's own metadata.

Imports torch, and torchvision / timm / transformers (the `models` extra) when a model asks for
them: build and runner subprocesses only, never the app or the CLI. Nothing is downloaded: the
Hugging Face libraries run offline, torchvision and timm build with no pretrained weights (or
load a local file), and a name that would need the network says so in one line.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from deploytui.core.modelref import LIBRARY_PACKAGE, ModelRef

SEED = 0
DEFAULT_SEQ_LEN = 16


class LibraryError(Exception):
    """The library model cannot be made; the message is one line for the user."""


def _library(kind: str) -> Any:
    name = LIBRARY_PACKAGE[kind]
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise LibraryError(
            f"{kind}: models need {name}, which is not installed here ({e}); "
            "install deploytui's models extra: pip install -e '.[models]'"
        ) from None


def _seeded(build: Callable[[], nn.Module]) -> nn.Module:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return build().eval()


def _shape(ref: ModelRef) -> list[int] | None:
    text = ref.kwargs.get("input_shape")
    return [int(d) for d in str(text).split("x")] if text else None


def _image(shape: list[int]) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(SEED))


def _load_weights(module: nn.Module, ref: ModelRef) -> None:
    """A local weights file (a state_dict saved with torch.save, or safetensors) into `module`."""
    path = Path(str(ref.kwargs["weights"]))
    if not path.is_file():
        raise LibraryError(f"weights file {path} does not exist (deploytui downloads nothing)")
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        state = load_file(str(path))
    else:
        state = torch.load(str(path), map_location="cpu", weights_only=True)
        state = state.get("state_dict", state) if isinstance(state, dict) else state
    try:
        module.load_state_dict(state)
    except (RuntimeError, TypeError) as e:
        first = str(e).strip().splitlines()[0]
        raise LibraryError(f"{path.name} does not fit {ref.target}: {first}") from None


def torchvision_model(ref: ModelRef) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """`torchvision.models.get_model(NAME, weights=None)`; the input is (1, 3, crop, crop) from the
    builder's default weights' transforms (metadata only: nothing is downloaded)."""
    _library("torchvision")
    from torchvision.models import get_model, get_model_weights, list_models

    if ref.target not in list_models():
        raise LibraryError(f"torchvision has no model {ref.target!r} (torchvision.models.list_models())")
    module = _seeded(lambda: get_model(ref.target, weights=None))
    if "weights" in ref.kwargs:
        _load_weights(module, ref)
    shape = _shape(ref)
    if shape is None:
        transforms = get_model_weights(ref.target).DEFAULT.transforms()
        crop, kind = getattr(transforms, "crop_size", None), type(transforms).__name__
        if kind != "ImageClassification" or not crop:
            raise LibraryError(
                f"torchvision:{ref.target} is not an image classifier ({kind}): "
                "give its input with --input-shape"
            )
        shape = [1, 3, crop[0], crop[-1]]
    return module, (_image(shape),)


def timm_model(ref: ModelRef) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """`timm.create_model(NAME, pretrained=False)`; the input is its pretrained config's
    `input_size` at batch 1."""
    timm = _library("timm")
    if not timm.list_models(ref.target):
        raise LibraryError(f"timm has no model {ref.target!r} (timm.list_models())")
    module = _seeded(lambda: timm.create_model(ref.target, pretrained=False))
    if "weights" in ref.kwargs:
        _load_weights(module, ref)
    shape = _shape(ref) or [1, *module.pretrained_cfg["input_size"]]
    return module, (_image(shape),)


def offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def _hf_config(ref: ModelRef) -> Any:
    """The model's config, read from the folder (hf:) or the file (hf-config:); use_cache off so
    the outputs are tensors (a KV cache object is not)."""
    transformers = _library(ref.kind)
    path = Path(ref.target)
    if ref.kind == "hf" and not (path / "config.json").is_file():
        hint = "" if path.exists() else ": a Hub id needs the network, and deploytui downloads nothing"
        raise LibraryError(
            f"hf:{ref.target} is not a folder holding config.json{hint}; save the model with "
            "save_pretrained(FOLDER) and name the folder"
        )
    if ref.kind == "hf-config" and not path.is_file():
        raise LibraryError(f"hf-config:{ref.target} is not a file (a model's config.json)")
    file = path / "config.json" if ref.kind == "hf" else path
    try:
        data = json.loads(file.read_text())
    except (OSError, ValueError) as e:
        raise LibraryError(f"{file} is not a readable JSON config: {e}") from None
    if not isinstance(data, dict) or "model_type" not in data:
        raise LibraryError(f"{file} has no model_type: not a Hugging Face config")
    config = transformers.AutoConfig.for_model(**data)
    config.use_cache = False
    return config


def _hf_class(config: Any) -> Any:
    """The task head the config names in `architectures`, else the bare model (AutoModel)."""
    transformers = importlib.import_module("transformers")
    for name in getattr(config, "architectures", None) or []:
        cls = getattr(transformers, name, None)
        if cls is not None:
            return cls
    return transformers.AutoModel._model_mapping[type(config)]


def _hf_inputs(module: nn.Module, config: Any, ref: ModelRef) -> dict[str, torch.Tensor]:
    """Keyword inputs after the model's `main_input_name`: token ids within the vocabulary and a
    matching attention mask (and decoder ids for an encoder-decoder), audio features, or pixels."""
    import inspect

    g = torch.Generator().manual_seed(SEED)
    seq = int(ref.kwargs.get("seq_len", DEFAULT_SEQ_LEN))
    takes = set(inspect.signature(module.forward).parameters)
    main = getattr(module, "main_input_name", "input_ids")
    inputs: dict[str, torch.Tensor] = {}
    if main == "input_ids":
        inputs["input_ids"] = torch.randint(0, config.vocab_size, (1, seq), generator=g)
        if "attention_mask" in takes:
            inputs["attention_mask"] = torch.ones(1, seq, dtype=torch.int64)
    elif main == "input_features":
        frames = 2 * int(getattr(config, "max_source_positions", 1500))
        shape = _shape(ref) or [1, int(config.num_mel_bins), frames]
        inputs["input_features"] = torch.randn(*shape, generator=g)
    elif main == "pixel_values":
        size = getattr(config, "image_size", 224)
        size = size if isinstance(size, int) else size[0]
        shape = _shape(ref) or [1, int(getattr(config, "num_channels", 3)), size, size]
        inputs["pixel_values"] = torch.randn(*shape, generator=g)
    else:
        raise LibraryError(f"{ref.text}: no example inputs for a model whose main input is {main!r}")
    if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in takes:
        start = getattr(config, "decoder_start_token_id", None) or 0
        vocab = getattr(config, "vocab_size", start + 1)
        dec = torch.randint(0, vocab, (1, min(seq, 8)), generator=g)
        dec[:, 0] = start
        inputs["decoder_input_ids"] = dec
    return inputs


def hf_model(ref: ModelRef) -> tuple[nn.Module, tuple[torch.Tensor, ...], dict[str, torch.Tensor]]:
    """hf: from_pretrained(FOLDER, local_files_only); hf-config: from_config, random weights
    from a fixed seed. Inputs as keywords, named as the model's forward names them."""
    offline()
    config = _hf_config(ref)
    cls = _hf_class(config)
    if ref.kind == "hf":
        try:
            module = cls.from_pretrained(
                ref.target, config=config, local_files_only=True, dtype=torch.float32
            ).eval()
        except OSError as e:
            raise LibraryError(f"hf:{ref.target}: {str(e).strip().splitlines()[0]}") from None
    else:
        module = _seeded(lambda: cls._from_config(config, dtype=torch.float32))
    return module, (), _hf_inputs(module, config, ref)


BUILDERS: dict[str, Callable[[ModelRef], tuple[Any, ...]]] = {
    "torchvision": torchvision_model,
    "timm": timm_model,
    "hf": hf_model,
    "hf-config": hf_model,
}
